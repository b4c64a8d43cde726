#pragma once

// The generator's tests' files: a YAML file and an output folder in the temporary folder, each
// removed with its object, and loading a YAML file.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "derivatives.h"
#include "native_function.h"
#include "opd/error.h"

namespace opd::gen::test {

class TempYaml {
 public:
  explicit TempYaml(const std::string& text)
      : path_(std::filesystem::temp_directory_path() /
              ("opd_gen_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++) +
               ".yaml")) {
    std::ofstream(path_) << text;
  }
  ~TempYaml() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

// load_native_functions(f, strict), as for our YAML and a vendor's.
inline std::vector<NativeFunction> load_strict(const TempYaml& f) {
  LoadReport report;
  return load_native_functions(f.path(), /*strict=*/true, &report);
}

// A folder for opd-gen's output in the temporary folder, removed with the object.
class OutputDir {
 public:
  explicit OutputDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {}
  ~OutputDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }
  // The text of a file written there ("src/register_CPU.cpp"); empty if there is none.
  std::string read(const std::string& relative) const {
    std::ifstream in(path_ / relative);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::filesystem::path path_;
};

// The error load_native_functions throws for a file holding `text`, which must start with
// "<path>:<line>: "; returned with that path replaced by "F" ("F:2: ...").
inline std::string load_error(const std::string& text, bool strict = true) {
  TempYaml f(text);
  LoadReport report;
  try {
    load_native_functions(f.path(), strict, &report);
  } catch (const opd::Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind(f.path() + ":", 0), 0u) << msg;
    return "F" + msg.substr(f.path().size());
  }
  ADD_FAILURE() << "expected an error for:\n" << text;
  return "";
}

// The error load_derivatives throws for a file holding `derivatives`, read against the
// operators of `functions` (loaded strictly), which must start with "<path>:<line>: "; returned
// with that path replaced by "D" ("D:2: ...").
inline std::string derivatives_error(const std::string& functions, const std::string& derivatives) {
  TempYaml f(functions), d(derivatives);
  auto fs = load_strict(f);
  try {
    load_derivatives(d.path(), fs);
  } catch (const opd::Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind(d.path() + ":", 0), 0u) << msg;
    return "D" + msg.substr(d.path().size());
  }
  ADD_FAILURE() << "expected an error for:\n" << derivatives;
  return "";
}

}  // namespace opd::gen::test
