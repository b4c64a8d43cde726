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

  // Opens the library at `path` from `fd`, a descriptor open on that (checked) file, which it
  // takes over: the loader maps "/proc/self/fd/<fd>", so the file mapped is the one that was
  // checked and hashed, even if `path` is replaced meanwhile. RTLD_NOW | RTLD_LOCAL.
  // `private_copy`: map a fresh in-memory copy of the file instead (the loader caches libraries
  // by file, so a rebuilt library at the same path would otherwise come back as the old one).
  // Throws PluginError naming `path` and dlerror's text (`fd` is closed then).
  PluginLibrary(const std::filesystem::path& path, int fd, bool private_copy);
  ~PluginLibrary();
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  // Looks up and checks the entry point. Throws PluginError naming the file, what the host
  // expects and what the plugin was built with.
  const opd_plugin_info& entry();
  const std::filesystem::path& path() const { return path_; }
  // The name the loader knows the library by: /proc/self/fd/<fd> of the file or its copy.
  const std::filesystem::path& mapped_path() const { return mapped_path_; }
  void on_closed(ClosedFn fn) { on_closed_ = std::move(fn); }

 private:
  std::filesystem::path path_;
  std::filesystem::path mapped_path_;
  // The descriptor behind mapped_path_: the file, or its in-memory copy when private_copy. Open
  // while the library is, and kept open for good when it stays resident: the loader matches
  // libraries by name first, so a reused descriptor number would bring back this library.
  int fd_ = -1;
  boost::dll::shared_library lib_;
  ClosedFn on_closed_;
};

}  // namespace opd
