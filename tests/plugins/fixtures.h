#pragma once

// Helpers for the tests that load the fixture plugins of tests/plugins/. The test target passes
// OPD_TEST_PLUGIN_DIR, the build's test_plugins/ folder; each fixture <name> lives in
// <dir>/<name>/<name>.yaml next to its library.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "opd/error.h"
#include "opd/plugin_manager.h"
#include "opd/tensor.h"

namespace opd::fixtures {

namespace fs = std::filesystem;

inline fs::path plugin_dir() { return OPD_TEST_PLUGIN_DIR; }

// The message of the PluginError that loading `what` throws; a test failure when none is thrown
// (and the plugin unloaded again, so that later tests start from the same state).
inline std::string load_error(const std::string& what) {
  try {
    PluginStatus s = plugins().load(what);
    ADD_FAILURE() << "loading " << what << " succeeded (state " << to_string(s.state)
                  << "); expected a PluginError";
    if (s.state == PluginState::Loaded) plugins().unload(s.name, true);
  } catch (const PluginError& e) {
    return e.msg();
  }
  return {};
}
inline fs::path unsafe_plugin_dir() { return plugin_dir().parent_path() / "test_plugins_unsafe"; }
// <dir>/<folder>/<name>.yaml; name defaults to folder.
inline std::string manifest(const std::string& folder, std::string name = {}) {
  return (plugin_dir() / folder / ((name.empty() ? folder : name) + ".yaml")).string();
}
inline std::string broken_manifest(const std::string& name) {
  return (plugin_dir() / "manifests" / (name + ".yaml")).string();
}

// Lines of /proc/self/maps that contain `needle`.
inline size_t mapped_lines(const std::string& needle) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  size_t n = 0;
  while (std::getline(maps, line)) n += line.find(needle) != std::string::npos;
  return n;
}
inline bool is_mapped(const fs::path& p) { return mapped_lines(p.string()) > 0; }

// Polls the plugin's state until it is `want` or `timeout` has passed; returns the last status.
inline PluginStatus wait_for_state(const std::string& name, PluginState want,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  PluginStatus s = plugins().status(name);
  while (s.state != want && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    s = plugins().status(name);
  }
  return s;
}

// A one-element CPU tensor over static memory: the argument that routes a call to CPU kernels.
inline Tensor cpu_tensor() {
  static float data[1] = {0};
  return from_blob(data, std::vector<int64_t>{1}, ScalarType::Float32);
}

// Sets (or, with nullopt, unsets) an environment variable for the scope.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::optional<std::string>& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    if (value) {
      ::setenv(name_.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// A fresh folder (mode 0755) under the system's temporary folder, removed with its content.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "opd-test-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
    ::chmod(path_.c_str(), 0755);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

  // Copies `from` into the folder as `name` (default: its own name), mode 0644.
  fs::path copy(const fs::path& from, std::string name = {}) {
    fs::path to = path_ / (name.empty() ? from.filename().string() : name);
    fs::copy_file(from, to, fs::copy_options::overwrite_existing);
    ::chmod(to.c_str(), 0644);
    return to;
  }
  // Copies fixture <folder>'s manifest and library; returns the manifest's new path. `edit`
  // rewrites the manifest text (its `library:` line names the library's file name).
  template <class Edit>
  fs::path copy_fixture(const std::string& folder, const std::string& name, Edit edit) {
    fs::path m = manifest(folder, name);
    std::string text = read(m);
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("library: ", 0) == 0) copy(fs::path(m).parent_path() / line.substr(9));
    }
    fs::path to = path_ / (name.empty() ? folder : name);
    to += ".yaml";
    write(to, edit(text));
    return to;
  }
  fs::path copy_fixture(const std::string& folder, const std::string& name = {}) {
    return copy_fixture(folder, name, [](std::string s) { return s; });
  }

  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static void write(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::trunc) << text;
    ::chmod(p.c_str(), 0644);
  }

 private:
  fs::path path_;
};

// `text` with the line that starts with `key` replaced by `key value` (appended when absent).
inline std::string replace_field(std::string text, const std::string& key,
                                 const std::string& value) {
  bool first_line = text.rfind(key, 0) == 0;
  size_t start = first_line ? 0 : text.find("\n" + key);
  if (start == std::string::npos) return text + key + " " + value + "\n";
  if (!first_line) ++start;
  size_t end = text.find('\n', start);
  return text.replace(start, end == std::string::npos ? end : end - start, key + " " + value);
}

}  // namespace opd::fixtures
