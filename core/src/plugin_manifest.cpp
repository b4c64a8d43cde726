#include "plugin_manifest.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

#include <sys/stat.h>

#include <array>
#include <fstream>
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

}  // namespace

PluginManifest read_manifest(const std::filesystem::path& path) {
  std::filesystem::path file = std::filesystem::absolute(path).lexically_normal();
  YAML::Node root;
  try {
    root = YAML::LoadFile(file.string());
  } catch (const YAML::BadFile&) {
    throw PluginError(fmt::format("{}: cannot read the manifest", file.string()));
  } catch (const YAML::ParserException& e) {
    fail(file, e.mark, "malformed YAML: " + e.msg);
  }
  if (!root.IsMap()) fail(file, root.Mark(), "the manifest must be a mapping of fields");

  static const std::set<std::string> kKnown = {"plugin",   "version", "abi",
                                               "library",  "sha256",  "dispatch_keys",
                                               "requires", "load",    "description"};
  for (const auto& kv : root) {
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
  if (!std::filesystem::is_regular_file(m.library)) {
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
      auto k = try_parse_dispatch_key(scalar(file, e, "dispatch_keys"));
      if (!k) fail(file, e.Mark(), fmt::format("unknown dispatch key '{}'", e.as<std::string>()));
      m.dispatch_keys.push_back(*k);
    }
  }
  if (root["requires"]) m.requires_ = string_list(file, root["requires"], "requires");
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

std::optional<FileIdentity> identity_of(const std::filesystem::path& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{st.st_dev, st.st_ino, st.st_size, st.st_mtim, st.st_ctim};
}

}  // namespace

std::string sha256_of_file_cached(const std::filesystem::path& path) {
  // Note [Hash cache]: reloading a plugin whose file did not change (hot reload of a test
  // kernel, a bench) must not pay for hashing it every time. A digest is reused only while the
  // file's identity is the one it was computed under, checked before and after hashing.
  static std::mutex mutex;
  static std::map<std::string, std::pair<FileIdentity, std::string>> cache;
  const std::optional<FileIdentity> before = identity_of(path);
  if (before) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(path.string());
    if (it != cache.end() && it->second.first == *before) return it->second.second;
  }
  std::string digest = sha256_of_file(path);
  const std::optional<FileIdentity> after = identity_of(path);
  if (before && after && *before == *after) {
    std::lock_guard<std::mutex> lock(mutex);
    cache[path.string()] = {*after, digest};
  }
  return digest;
}

std::string sha256_of_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PluginError(fmt::format("{}: cannot read the file", path.string()));
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  // Fetched once: OpenSSL 3 looks the algorithm up in its providers on every implicit fetch.
  static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  EVP_DigestInit_ex(ctx.get(), sha256, nullptr);
  std::array<char, 1 << 16> buf;
  while (in.read(buf.data(), buf.size()) || in.gcount() > 0) {
    EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<size_t>(in.gcount()));
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> md;
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), md.data(), &len);
  std::string hex;
  for (unsigned i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

}  // namespace opd
