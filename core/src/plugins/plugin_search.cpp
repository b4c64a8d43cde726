#include "plugins/plugin_search.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

#include "logging.h"
#include "opd/error.h"
#include "opd/plugin_manager.h"
#include "plugins/plugin_library.h"

namespace fs = std::filesystem;

namespace opd {

// Note [Plugin file permissions]
// Loading a plugin runs its code with the host's rights, so whoever can change the file, or any
// folder on the way to it, can run code in the host. As OpenSSH's StrictModes and sudo do, the
// library's real path (symbolic links resolved) is walked from / down to the file, and every
// component must be owned by root or the effective user and not writable by group or others.
// A sticky world-writable folder (/tmp) is the one exception: others may add entries to it but
// cannot rename or remove ours, so it is accepted for the entries in it that root or the user
// own (the next component, checked like every other). The walk checks the path; the library is
// then opened once, the open file is checked to be the one walked, and that descriptor is hashed
// and mapped (/proc/self/fd/N): what was checked is what runs, even if the path changes meanwhile.

namespace {

bool insecure_allowed() {
  const char* allow = std::getenv("OPD_ALLOW_INSECURE_PLUGINS");
  return allow && std::string(allow) == "1";
}

bool trusted_owner(uid_t uid) { return uid == 0 || uid == ::geteuid(); }

std::string user_name(uid_t uid) {
  struct passwd pw {};
  struct passwd* found = nullptr;
  char buf[1024];
  if (::getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found && found->pw_name)
    return fmt::format("uid {} ({})", uid, found->pw_name);
  return fmt::format("uid {}", uid);
}

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// One component of a walked path, for the checks and their messages.
struct Component {
  fs::path path;
  const char* role;               // "the file", "its folder", "the folder"
  const fs::path* sticky_parent;  // the sticky writable folder it is in, if any
};

// Throws when `st`, the status of component `c` of the path `head` names, is not trusted.
void check_component(const std::string& head, const Component& c, const struct stat& st,
                     bool last) {
  if (last && !S_ISREG(st.st_mode)) {
    throw PluginError(fmt::format("{}: refusing to load: '{}' is {}, not a regular file", head,
                                  c.path.string(), kind_of(st.st_mode)));
  }
  if (!trusted_owner(st.st_uid)) {
    throw PluginError(fmt::format(
        "{}: refusing to load: {} '{}' is owned by {}, not by root or the effective user ({}){}, "
        "so that user could run code in this process; change its owner (chown) or set "
        "OPD_ALLOW_INSECURE_PLUGINS=1",
        head, c.role, c.path.string(), user_name(st.st_uid), user_name(::geteuid()),
        c.sticky_parent ? fmt::format(" (in the sticky folder '{}', only entries owned by them "
                                      "are trusted)",
                                      c.sticky_parent->string())
                        : ""));
  }
  bool writable = st.st_mode & (S_IWGRP | S_IWOTH);
  bool sticky_folder = !last && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX);
  if (writable && !sticky_folder) {
    throw PluginError(fmt::format(
        "{}: refusing to load: {} '{}' is writable by {} (mode {:o}), so anyone who can write "
        "it could run code in this process; remove the write permission (chmod go-w) or set "
        "OPD_ALLOW_INSECURE_PLUGINS=1",
        head, c.role, c.path.string(), (st.st_mode & S_IWOTH) ? "others" : "its group",
        st.st_mode & 07777));
  }
}

// Walks the real path of `p` (Note [Plugin file permissions]); returns it and the status of the
// file, which must be a regular file.
std::pair<fs::path, struct stat> walk_trusted(const fs::path& p) {
  char* resolved = ::realpath(p.c_str(), nullptr);
  if (!resolved) {
    throw PluginError(fmt::format("{}: refusing to load: cannot resolve its real path: {}",
                                  p.string(), std::strerror(errno)));
  }
  fs::path real(resolved);
  std::free(resolved);
  const std::string head =
      real == p ? p.string() : fmt::format("{} (real path {})", p.string(), real.string());
  std::vector<fs::path> chain{real.root_path()};
  for (const fs::path& part : real.relative_path()) chain.push_back(chain.back() / part);
  struct stat st {};
  fs::path sticky;
  for (size_t i = 0; i < chain.size(); ++i) {
    const bool last = i + 1 == chain.size();
    if (::lstat(chain[i].c_str(), &st) != 0) {
      throw PluginError(fmt::format("{}: refusing to load: cannot check '{}': {}", head,
                                    chain[i].string(), std::strerror(errno)));
    }
    if (S_ISLNK(st.st_mode)) {
      throw PluginError(fmt::format(
          "{}: refusing to load: '{}' became a symbolic link while the path was checked", head,
          chain[i].string()));
    }
    Component c{chain[i], last ? "the file" : (i + 2 == chain.size() ? "its folder" : "the folder"),
                sticky.empty() ? nullptr : &sticky};
    check_component(head, c, st, last);
    bool sticky_writable =
        S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && (st.st_mode & (S_IWGRP | S_IWOTH));
    sticky = sticky_writable ? chain[i] : fs::path();
  }
  return {real, st};
}

// Closes a descriptor unless released.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

}  // namespace

fs::path core_library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&plugins), &info) == 0 || !info.dli_fname) return {};
  std::error_code ec;
  fs::path lib = fs::weakly_canonical(fs::path(info.dli_fname), ec);
  return ec ? fs::path() : lib.parent_path();
}

bool is_build_tree_lib_dir(const fs::path& lib_dir) {
  std::error_code ec;
  return !lib_dir.empty() && fs::is_regular_file(lib_dir.parent_path() / "CMakeCache.txt", ec);
}

std::vector<fs::path> plugin_search_dirs(const fs::path& lib) {
  std::vector<fs::path> out;
  if (!lib.empty()) {
    if (is_build_tree_lib_dir(lib))
      out.push_back(lib.parent_path() / "plugins");  // build/{lib,plugins}
    out.push_back(lib / "opdispatch" / "plugins");   // install: <prefix>/lib/opdispatch/plugins
  }
  if (const char* env = std::getenv("OPD_PLUGIN_PATH")) {
    std::string s = env;
    for (size_t start = 0; start <= s.size();) {
      size_t end = s.find(':', start);
      if (end == std::string::npos) end = s.size();
      if (end > start) out.emplace_back(s.substr(start, end - start));
      start = end + 1;
    }
  }
  return out;
}

std::vector<fs::path> plugin_search_dirs() { return plugin_search_dirs(core_library_dir()); }

std::vector<PluginManifest> scan_manifests(const std::vector<fs::path>& dirs,
                                           const std::string& want) {
  std::vector<PluginManifest> out;
  std::set<std::string> seen;
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    fs::directory_iterator it(dir, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() == ".yaml") files.push_back(it->path());
    }
    if (ec) logger()->warn("{}: cannot list the folder: {}", dir.string(), ec.message());
    std::sort(files.begin(), files.end());
    // Every entry named *.yaml goes to read_manifest, which reads regular files only (opened
    // without blocking and checked on the open file) and refuses the rest with a PluginError.
    for (const fs::path& f : files) {
      try {
        PluginManifest m = read_manifest(f);
        if (seen.insert(m.plugin).second) out.push_back(std::move(m));
      } catch (const PluginError& e) {
        if (!want.empty() && f.stem() == want) throw;
        logger()->warn("skipping manifest: {}", e.msg());
      } catch (const std::exception& e) {
        if (!want.empty() && f.stem() == want) {
          throw PluginError(fmt::format("{}: cannot read the manifest: {}", f.string(), e.what()));
        }
        logger()->warn("skipping manifest: {}: {}", f.string(), e.what());
      }
    }
  }
  return out;
}

PluginManifest find_manifest(const std::string& name_or_manifest) {
  if (looks_like_manifest_path(name_or_manifest)) return read_manifest(name_or_manifest);
  std::vector<fs::path> dirs = plugin_search_dirs();
  for (auto& m : scan_manifests(dirs, name_or_manifest)) {
    if (m.plugin == name_or_manifest) return m;
  }
  std::string where;
  for (const auto& d : dirs) where += (where.empty() ? "" : ", ") + d.string();
  throw PluginError(fmt::format("plugin '{}' was not found in the search path ({})",
                                name_or_manifest, where.empty() ? "empty" : where));
}

std::shared_ptr<PluginLibrary> open_checked_library(const PluginManifest& m, bool private_copy) {
  const bool strict = !insecure_allowed();
  fs::path file = m.library;
  struct stat walked {};
  if (strict) {
    walk_trusted(m.path);
    std::tie(file, walked) = walk_trusted(m.library);
  }
  // The real path has no symbolic link left: O_NOFOLLOW refuses one put there since the walk.
  FdGuard fd{::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | (strict ? O_NOFOLLOW : 0))};
  if (fd.fd < 0) {
    throw PluginError(
        fmt::format("{}: cannot open the library: {}", m.library.string(), std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) {
    throw PluginError(fmt::format("{}: cannot check the library: fstat: {}", m.library.string(),
                                  std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    throw PluginError(fmt::format("{}: refusing to load: it is {}, not a regular file",
                                  m.library.string(), kind_of(st.st_mode)));
  }
  if (strict) {
    if (st.st_dev != walked.st_dev || st.st_ino != walked.st_ino) {
      throw PluginError(fmt::format(
          "{}: refusing to load: '{}' was replaced between the permission check and opening it",
          m.library.string(), file.string()));
    }
    check_component(m.library.string(), Component{file, "the file", nullptr}, st, true);
  }
  if (m.sha256) {
    std::string actual = sha256_of_fd_cached(fd.fd, m.library);
    if (actual != *m.sha256) {
      throw PluginError(fmt::format(
          "{}: sha256 mismatch for {}: the manifest expects {} but the file has {}; refusing to "
          "load a library that is not the one the manifest describes",
          m.where("sha256"), m.library.string(), *m.sha256, actual));
    }
  }
  return std::make_shared<PluginLibrary>(m.library, fd.release(), private_copy);
}

}  // namespace opd
