#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "opd/dispatch_key.h"
#include "opd/export.h"

namespace opd {

// A plugin's manifest (manifests/plugins/<name>.yaml, completed by the build):
//   plugin: cpu              required, the plugin's name
//   version: 0.1.0           required
//   abi: 1                   required, the plugin ABI major it was built for
//   library: libopd_cpu.so   required, relative to the manifest's folder
//   sha256: <hex>            optional; verified before dlopen
//   dispatch_keys: [CPU]     optional, each a dispatch key name, or PrivateUse: the vendor slot
//                            the plugin claims at load, whichever it gets (opd/privateuse.h)
//   requires: []             optional, plugins loaded first: names, or manifest paths (an entry
//                            with a '/' or ending in .yaml/.yml), relative to the manifest's folder
//   load: default            optional, default | on-demand (the default)
//   description: ...         optional
struct PluginManifest {
  std::filesystem::path path;  // the manifest file, absolute
  std::string plugin;
  std::string version;
  int abi = 0;
  std::filesystem::path library;  // absolute
  std::optional<std::string> sha256;
  std::vector<DispatchKey> dispatch_keys;
  bool any_privateuse_slot = false;    // dispatch_keys names PrivateUse
  std::vector<std::string> requires_;  // names, and manifest paths made absolute
  bool load_default = false;
  std::string description;
  std::map<std::string, int> lines;  // field -> its line in the file, from 1

  // "file:line" of `field` for errors found after parsing (an ABI or digest that does not
  // match); just the file when the field is absent.
  std::string where(const std::string& field) const;
};

// The most a manifest may weigh: a larger file is refused before it is parsed.
inline constexpr long kMaxManifestBytes = 1 << 20;

// Reads and validates a manifest. Throws PluginError (and nothing else) naming the file, and the
// line where there is one: a file that cannot be opened or is not a regular file (a folder, a
// FIFO: opened without blocking, so a FIFO never hangs the caller), one over kMaxManifestBytes,
// malformed YAML, a field name that is not a string, a missing or unknown field, a value of the
// wrong type, an unknown dispatch key, a library that does not exist. Reads the manifest only;
// never opens the library.
PluginManifest read_manifest(const std::filesystem::path& path);

// Whether a `load` argument or a `requires:` entry names a manifest file rather than a plugin:
// it contains a '/' or ends in .yaml or .yml.
bool looks_like_manifest_path(const std::string& s);

// Lowercase hex SHA-256 of a file's content. Throws PluginError when it cannot be read.
// Exported for the tests, which rewrite manifests.
OPD_API std::string sha256_of_file(const std::filesystem::path& path);
// Lowercase hex SHA-256 of the content of the open file `fd` (read from offset 0 with pread, so
// the file offset is left alone), reusing the digest last computed for the same file while it
// keeps the identity (device, inode, size, mtime, ctime) it had then (Note [Hash cache]). `path`
// names the file in errors. Throws PluginError when it cannot be read.
std::string sha256_of_fd_cached(int fd, const std::filesystem::path& path);

}  // namespace opd
