#pragma once

// What the libFuzzer targets share: how a broken property is reported, and a scratch folder for
// the targets whose parser reads files.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace opd::fuzz {

// Reports a broken property with the input that broke it, then aborts, which libFuzzer
// records as a crash with the input saved.
[[noreturn]] inline void fail(const char* problem, std::string_view input,
                              const std::string& detail) {
  std::fprintf(stderr, "%s\n  input:  %.*s\n  detail: %s\n", problem,
               static_cast<int>(input.size()), input.data(), detail.c_str());
  std::abort();
}

// A new folder under the system's temporary one, named `<prefix>-XXXXXX`, removed with what
// it holds when the process exits. Call once per process (keep the result).
inline std::filesystem::path temp_folder(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) std::abort();
  static std::filesystem::path to_remove;
  to_remove = tmpl;
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(to_remove, ec);
  });
  return to_remove;
}

}  // namespace opd::fuzz
