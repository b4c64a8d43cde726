#include "plugins/plugin_manifest.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "opd/error.h"

namespace opd {
namespace {

[[noreturn]] void fail(const std::filesystem::path& file, const YAML::Mark& mark,
                       const std::string& what) {
  if (mark.is_null()) throw PluginError(fmt::format("{}: {}", file.string(), what));
  throw PluginError(
      fmt::format("{}:{}:{}: {}", file.string(), mark.line + 1, mark.column + 1, what));
}

std::string scalar(const std::filesystem::path& file, const YAML::Node& n, const char* field) {
  if (!n.IsScalar()) fail(file, n.Mark(), fmt::format("'{}' must be a string", field));
  return n.as<std::string>();
}

std::vector<std::string> string_list(const std::filesystem::path& file, const YAML::Node& n,
                                     const char* field) {
  if (!n.IsSequence()) fail(file, n.Mark(), fmt::format("'{}' must be a list of strings", field));
  std::vector<std::string> out;
  for (const auto& e : n) out.push_back(scalar(file, e, field));
  return out;
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

// The manifest's text. Opened without blocking (a FIFO would block open() until a writer
// comes), then checked on the open file, so what is read is what was checked.
std::string read_manifest_text(const std::filesystem::path& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT)
      throw PluginError(fmt::format("{}: cannot read the manifest", file.string()));
    throw PluginError(
        fmt::format("{}: cannot read the manifest: {}", file.string(), std::strerror(errno)));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    throw PluginError(fmt::format("{}: cannot read the manifest: fstat: {}", file.string(),
                                  std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    throw PluginError(fmt::format("{}: cannot read the manifest: it is {}, not a regular file",
                                  file.string(), file_kind(st.st_mode)));
  }
  auto too_large = [&](long long size) {
    return PluginError(fmt::format(
        "{}: cannot read the manifest: it has {} bytes, more than the {} a manifest may have",
        file.string(), size, kMaxManifestBytes));
  };
  if (st.st_size > kMaxManifestBytes) throw too_large(st.st_size);
  std::string text;
  std::array<char, 1 << 16> buf;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw PluginError(
          fmt::format("{}: cannot read the manifest: {}", file.string(), std::strerror(errno)));
    }
    if (n == 0) break;
    text.append(buf.data(), static_cast<size_t>(n));
    if (text.size() > static_cast<size_t>(kMaxManifestBytes)) throw too_large(text.size());
  }
  return text;
}

PluginManifest parse_manifest(const std::filesystem::path& file, const YAML::Node& root) {
  if (!root.IsMap()) fail(file, root.Mark(), "the manifest must be a mapping of fields");

  static const std::set<std::string> kKnown = {"plugin",   "version", "abi",
                                               "library",  "sha256",  "dispatch_keys",
                                               "requires", "load",    "description"};
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) {
      fail(file, kv.first.Mark(),
           fmt::format("a field name must be a string, not {}", kv.first.IsSequence() ? "a list"
                                                                : kv.first.IsMap()    ? "a mapping"
                                                                                      : "empty"));
    }
    std::string key = kv.first.as<std::string>();
    if (!kKnown.count(key)) {
      fail(file, kv.first.Mark(),
           fmt::format("unknown field '{}' (known: plugin, version, abi, library, sha256, "
                       "dispatch_keys, requires, load, description)",
                       key));
    }
  }
  for (const char* required : {"plugin", "version", "abi", "library"}) {
    if (!root[required]) fail(file, root.Mark(), fmt::format("missing field '{}'", required));
  }

  PluginManifest m;
  m.path = file;
  for (const auto& kv : root) m.lines[kv.first.as<std::string>()] = kv.first.Mark().line + 1;
  m.plugin = scalar(file, root["plugin"], "plugin");
  if (m.plugin.empty()) fail(file, root["plugin"].Mark(), "'plugin' must not be empty");
  m.version = scalar(file, root["version"], "version");
  try {
    m.abi = root["abi"].as<int>();
  } catch (const YAML::Exception&) {
    fail(file, root["abi"].Mark(), "'abi' must be an integer");
  }
  m.library = (file.parent_path() / scalar(file, root["library"], "library")).lexically_normal();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(m.library, ec)) {
    fail(file, root["library"].Mark(),
         fmt::format("library '{}' does not exist", m.library.string()));
  }
  if (root["sha256"]) {
    m.sha256 = scalar(file, root["sha256"], "sha256");
    if (m.sha256->size() != 64 ||
        m.sha256->find_first_not_of("0123456789abcdef") != std::string::npos) {
      fail(file, root["sha256"].Mark(), "'sha256' must be 64 lowercase hexadecimal digits");
    }
  }
  if (root["dispatch_keys"]) {
    if (!root["dispatch_keys"].IsSequence()) {
      fail(file, root["dispatch_keys"].Mark(), "'dispatch_keys' must be a list of strings");
    }
    for (const auto& e : root["dispatch_keys"]) {
      std::string name = scalar(file, e, "dispatch_keys");
      if (name == "PrivateUse") {  // any free vendor slot (Note [Vendor slots])
        m.any_privateuse_slot = true;
        continue;
      }
      auto k = try_parse_dispatch_key(name);
      if (!k) fail(file, e.Mark(), fmt::format("unknown dispatch key '{}'", name));
      m.dispatch_keys.push_back(*k);
    }
  }
  if (root["requires"]) {
    // A path is the manifest's own reference: it means the same wherever the host runs.
    for (std::string& r : string_list(file, root["requires"], "requires")) {
      if (looks_like_manifest_path(r)) r = (file.parent_path() / r).lexically_normal().string();
      m.requires_.push_back(std::move(r));
    }
  }
  if (root["load"]) {
    std::string load = scalar(file, root["load"], "load");
    if (load != "default" && load != "on-demand") {
      fail(file, root["load"].Mark(),
           fmt::format("'load' must be 'default' or 'on-demand', not '{}'", load));
    }
    m.load_default = load == "default";
  }
  if (root["description"]) m.description = scalar(file, root["description"], "description");
  return m;
}

}  // namespace

bool looks_like_manifest_path(const std::string& s) {
  return s.find('/') != std::string::npos || s.ends_with(".yaml") || s.ends_with(".yml");
}

PluginManifest read_manifest(const std::filesystem::path& path) {
  std::filesystem::path file = path;
  try {
    file = std::filesystem::absolute(path).lexically_normal();
    std::string text = read_manifest_text(file);
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
      fail(file, e.mark, "malformed YAML: " + e.msg);
    }
    return parse_manifest(file, root);
  } catch (const PluginError&) {
    throw;
  } catch (const YAML::Exception& e) {
    // Whatever the checks above did not foresee: still this file's error, never an abort.
    fail(file, e.mark, "invalid manifest: " + e.msg);
  } catch (const std::exception& e) {
    throw PluginError(fmt::format("{}: cannot read the manifest: {}", file.string(), e.what()));
  }
}

std::string PluginManifest::where(const std::string& field) const {
  auto it = lines.find(field);
  if (it == lines.end()) return path.string();
  return fmt::format("{}:{}", path.string(), it->second);
}

namespace {

// What identifies one content of a file: any write changes the size, mtime or ctime, and
// replacing the file changes the inode.
struct FileIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  timespec mtime{};
  timespec ctime{};
  bool operator==(const FileIdentity& o) const {
    return dev == o.dev && ino == o.ino && size == o.size && mtime.tv_sec == o.mtime.tv_sec &&
           mtime.tv_nsec == o.mtime.tv_nsec && ctime.tv_sec == o.ctime.tv_sec &&
           ctime.tv_nsec == o.ctime.tv_nsec;
  }
};

std::optional<FileIdentity> identity_of(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return std::nullopt;
  return FileIdentity{st.st_dev, st.st_ino, st.st_size, st.st_mtim, st.st_ctim};
}

std::string sha256_of_fd(int fd, const std::filesystem::path& path) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  // Fetched once: OpenSSL 3 looks the algorithm up in its providers on every implicit fetch.
  static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  EVP_DigestInit_ex(ctx.get(), sha256, nullptr);
  std::array<char, 1 << 16> buf;
  for (off_t offset = 0;;) {
    ssize_t n = ::pread(fd, buf.data(), buf.size(), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw PluginError(
          fmt::format("{}: cannot read the file: {}", path.string(), std::strerror(errno)));
    }
    if (n == 0) break;
    EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(n));
    offset += n;
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> md;
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), md.data(), &len);
  std::string hex;
  for (unsigned i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

}  // namespace

std::string sha256_of_fd_cached(int fd, const std::filesystem::path& path) {
  // Note [Hash cache]: reloading a plugin whose file did not change (hot reload of a test
  // kernel, a bench) must not pay for hashing it every time. A digest is reused only while the
  // file's identity is the one it was computed under, checked before and after hashing.
  static std::mutex mutex;
  static std::map<std::pair<dev_t, ino_t>, std::pair<FileIdentity, std::string>> cache;
  const std::optional<FileIdentity> before = identity_of(fd);
  if (before) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find({before->dev, before->ino});
    if (it != cache.end() && it->second.first == *before) return it->second.second;
  }
  std::string digest = sha256_of_fd(fd, path);
  const std::optional<FileIdentity> after = identity_of(fd);
  if (before && after && *before == *after) {
    std::lock_guard<std::mutex> lock(mutex);
    cache[{after->dev, after->ino}] = {*after, digest};
  }
  return digest;
}

std::string sha256_of_file(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw PluginError(fmt::format("{}: cannot read the file", path.string()));
  try {
    std::string digest = sha256_of_fd(fd, path);
    ::close(fd);
    return digest;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

}  // namespace opd
