#include "plugins/plugin_library.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <mutex>

#include "logging.h"
#include "opd/error.h"

namespace opd {

namespace {

// An anonymous in-memory copy of the open file `from` (memfd): a file of its own, so the loader
// does not hand back the library already loaded from `path`, and one that needs no cleanup on
// disk.
int memory_copy(int from, const std::filesystem::path& path) {
  std::string name = "opd-" + path.filename().string();
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) {
    throw PluginError(fmt::format("{}: cannot make a private copy: memfd_create: {}", path.string(),
                                  std::strerror(errno)));
  }
  auto fail = [&](const char* what) {
    int err = errno;
    ::close(fd);
    return PluginError(fmt::format("{}: cannot make a private copy: {}: {}", path.string(), what,
                                   std::strerror(err)));
  };
  std::array<char, 1 << 16> buf;
  for (off_t offset = 0;;) {
    ssize_t got = ::pread(from, buf.data(), buf.size(), offset);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw fail("read");
    if (got == 0) break;
    offset += got;
    const char* p = buf.data();
    while (got > 0) {
      ssize_t n = ::write(fd, p, static_cast<size_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw fail("write");
      p += n;
      got -= n;
    }
  }
  return fd;
}

}  // namespace

namespace {

// Held around every dlopen and dlclose of a plugin. The dynamic loader serialises them itself,
// under a lock ThreadSanitizer cannot see, and unmaps with system calls it does not intercept:
// without this, a plugin's static constructors, run at the address of a plugin unloaded on
// another thread, look to it like a race with that plugin's destructors. Recursive: a plugin's
// static initialisation may load another (the hostile fixtures do).
std::recursive_mutex& loader_mutex() {
  static std::recursive_mutex m;
  return m;
}

}  // namespace

PluginLibrary::PluginLibrary(const std::filesystem::path& path, int fd, bool private_copy)
    : path_(path), fd_(fd) {
  if (private_copy) {
    try {
      fd_ = memory_copy(fd, path);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
  }
  mapped_path_ = "/proc/self/fd/" + std::to_string(fd_);
  try {
    std::lock_guard<std::recursive_mutex> lock(loader_mutex());
    lib_.load(mapped_path_.string(),
              boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  } catch (const std::exception& e) {
    const char* err = dlerror();
    std::string why = err ? err : e.what();
    // The loader's text names the descriptor; the user knows the file.
    const std::string mapped = mapped_path_.string();
    for (size_t at = 0; (at = why.find(mapped, at)) != std::string::npos;
         at += path.string().size())
      why.replace(at, mapped.size(), path.string());
    ::close(fd_);
    throw PluginError(
        fmt::format("{}: cannot be loaded as a shared object: {}", path.string(), why));
  }
}

const opd_plugin_info& PluginLibrary::entry() {
  dlerror();
  void* sym = dlsym(lib_.native(), OPD_PLUGIN_ENTRY_SYMBOL);
  if (!sym) {
    const char* err = dlerror();
    throw PluginError(fmt::format(
        "{}: not an opdispatch plugin: the entry point '{}' is missing (dlerror: {}); define it "
        "with OPD_PLUGIN(name, version)",
        path_.string(), OPD_PLUGIN_ENTRY_SYMBOL, err ? err : "symbol not found"));
  }
  const opd_plugin_info* info = reinterpret_cast<opd_plugin_entry_fn>(sym)();
  constexpr size_t kMinimal = offsetof(opd_plugin_info, abi_minor) + sizeof(uint16_t);
  if (!info || info->struct_size < kMinimal) {
    throw PluginError(fmt::format("{}: the entry point returned {} (expected an opd_plugin_info)",
                                  path_.string(), info ? "a truncated struct" : "null"));
  }
  if (info->abi_major != OPD_PLUGIN_ABI_MAJOR) {
    throw PluginError(fmt::format(
        "{}: built for plugin ABI {}.{}, but this opdispatch supports ABI {}.x (up to {}.{}); "
        "rebuild the plugin against this opdispatch",
        path_.string(), info->abi_major, info->abi_minor, OPD_PLUGIN_ABI_MAJOR,
        OPD_PLUGIN_ABI_MAJOR, OPD_PLUGIN_ABI_MINOR));
  }
  if (info->abi_minor > OPD_PLUGIN_ABI_MINOR) {
    throw PluginError(fmt::format(
        "{}: built for plugin ABI {}.{}, newer than this opdispatch's {}.{}; upgrade opdispatch "
        "or rebuild the plugin against it",
        path_.string(), info->abi_major, info->abi_minor, OPD_PLUGIN_ABI_MAJOR,
        OPD_PLUGIN_ABI_MINOR));
  }
  if (info->struct_size < sizeof(opd_plugin_info)) {
    throw PluginError(fmt::format(
        "{}: the entry point's struct has {} bytes, expected {} for ABI {}.{}", path_.string(),
        info->struct_size, sizeof(opd_plugin_info), info->abi_major, info->abi_minor));
  }
  std::string fingerprint = info->build_fingerprint ? info->build_fingerprint : "(none)";
  if (fingerprint != OPD_BUILD_FINGERPRINT) {
    throw PluginError(fmt::format(
        "{}: built with '{}', but this opdispatch was built with '{}'; plugins share C++ objects "
        "with the host and must use the same compiler family and standard library",
        path_.string(), fingerprint, OPD_BUILD_FINGERPRINT));
  }
  if (!info->name || !info->version || !info->register_fn) {
    throw PluginError(fmt::format("{}: the entry point lacks a name, version or register callback",
                                  path_.string()));
  }
  return *info;
}

PluginLibrary::~PluginLibrary() {
  std::string reason;
  try {
    std::lock_guard<std::recursive_mutex> lock(loader_mutex());
    lib_.unload();
  } catch (const std::exception& e) {
    reason = e.what();
  }
  // Still known to the loader after dlclose: it was not unmapped.
  bool resident = false;
  if (void* h = dlopen(mapped_path_.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
    resident = true;
    dlclose(h);
  }
  if (resident && reason.empty()) {
    reason =
        "still mapped after dlclose: the library or one it loaded is marked NODELETE (for "
        "example through STB_GNU_UNIQUE symbols; build plugins with -fno-gnu-unique)";
  }
  if (!resident) ::close(fd_);
  if (on_closed_) {
    try {
      on_closed_(resident, reason);
    } catch (const std::exception& e) {
      logger()->error("plugin {}: {}", path_.string(), e.what());
    }
  }
}

}  // namespace opd
