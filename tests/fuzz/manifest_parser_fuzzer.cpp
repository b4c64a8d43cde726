// Reads arbitrary bytes as a plugin manifest. read_manifest must either return a manifest or
// throw PluginError naming the file (and nothing else: issue 13, defect 6); any other exception,
// and any crash, is a bug. read_manifest reads a file, so each input is written to
// <tmp>/manifest.yaml first, in a folder that also holds an empty lib.so for `library: lib.so`.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <typeinfo>

#include "fuzz_support.h"
#include "opd/error.h"
#include "plugins/plugin_manifest.h"

namespace {

using opd::fuzz::fail;

const std::filesystem::path& folder() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = opd::fuzz::temp_folder("opd-manifest-fuzz");
    std::ofstream(d / "lib.so").put('\0');
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::filesystem::path file = folder() / "manifest.yaml";
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  try {
    opd::PluginManifest m = opd::read_manifest(file);
    if (m.plugin.empty()) fail("a manifest with an empty plugin name was accepted", text, "");
    if (!m.library.is_absolute()) fail("the library path is not absolute", text, m.library);
    for (const char* field : {"plugin", "version", "abi", "library"}) {
      if (m.where(field).rfind(file.string(), 0) != 0) {
        fail("where() does not name the file", text, m.where(field));
      }
    }
  } catch (const opd::PluginError& e) {
    if (e.msg().rfind(file.string(), 0) != 0)
      fail("error does not name the file first", text, e.msg());
  } catch (const std::exception& e) {
    fail("read_manifest threw something other than PluginError", text,
         std::string(typeid(e).name()) + ": " + e.what());
  }
  return 0;
}
