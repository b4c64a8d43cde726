#pragma once

#include <boost/dll/shared_library.hpp>
#include <filesystem>
#include <functional>
#include <string>

#include "opd/plugin.h"

namespace opd {

// One opened plugin library. Shared ownership is the plugin's lifetime: the manager holds a
// reference while the plugin is loaded, and every object whose code or data lives in the
// library (a registered kernel, a storage with the plugin's deleter) holds one too. The last
// reference closes the library and reports whether it really left the address space.
class PluginLibrary {
 public:
  // Called once the library is closed: `resident` when its file is still mapped (reason says
  // what the loader reported), from whichever thread dropped the last reference.
  using ClosedFn = std::function<void(bool resident, const std::string& reason)>;

  // Opens `path` with RTLD_NOW | RTLD_LOCAL. `private_copy`: open a fresh in-memory copy of
  // the file instead (the loader caches libraries by file, so a rebuilt library at the same path
  // would otherwise come back as the old one). Throws PluginError naming the file and dlerror's
  // text.
  PluginLibrary(const std::filesystem::path& path, bool private_copy);
  ~PluginLibrary();
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  // Looks up and checks the entry point. Throws PluginError naming the file, what the host
  // expects and what the plugin was built with.
  const opd_plugin_info& entry();
  const std::filesystem::path& path() const { return path_; }
  // The file the loader mapped (the private copy, if any).
  const std::filesystem::path& mapped_path() const { return mapped_path_; }
  void on_closed(ClosedFn fn) { on_closed_ = std::move(fn); }

 private:
  std::filesystem::path path_;
  std::filesystem::path mapped_path_;
  int copy_fd_ = -1;  // the in-memory copy, when private_copy
  boost::dll::shared_library lib_;
  ClosedFn on_closed_;
};

}  // namespace opd
