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
//   dispatch_keys: [CPU]     optional, each a dispatch key name
//   requires: []             optional, plugins loaded first
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
  std::vector<std::string> requires_;
  bool load_default = false;
  std::string description;
  std::map<std::string, int> lines;  // field -> its line in the file, from 1

  // "file:line" of `field` for errors found after parsing (an ABI or digest that does not
  // match); just the file when the field is absent.
  std::string where(const std::string& field) const;
};

// Reads and validates a manifest. Throws PluginError naming the file and line: malformed YAML,
// a missing or unknown field, a value of the wrong type, an unknown dispatch key, a library
// that does not exist. Reads the manifest only; never opens the library.
PluginManifest read_manifest(const std::filesystem::path& path);

// Lowercase hex SHA-256 of a file's content. Throws PluginError when it cannot be read.
// Exported for the tests, which rewrite manifests.
OPD_API std::string sha256_of_file(const std::filesystem::path& path);
// sha256_of_file, reusing the digest last computed for `path` while the file keeps the identity
// (device, inode, size, mtime, ctime) it had then (Note [Hash cache]).
std::string sha256_of_file_cached(const std::filesystem::path& path);

}  // namespace opd
