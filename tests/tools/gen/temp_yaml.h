#pragma once

// A YAML file in the temporary folder for the generator's tests, removed with the object.

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

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

}  // namespace opd::gen::test
