#include <filesystem>
#include <fstream>
#include <sstream>

#include "emit.h"
#include "opd/error.h"

namespace opd::gen {

void write_if_changed(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream old;
      old << in.rdbuf();
      if (old.str() == text) return;
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  OPD_CHECK(out.good(), "opd-gen: cannot write {}", path);
}

std::string base_name(const FunctionSchema& s) {
  size_t colons = s.name().rfind("::");
  return colons == std::string::npos ? s.name() : s.name().substr(colons + 2);
}

std::string unique_name(const FunctionSchema& s) {
  return s.overload_name().empty() ? base_name(s) : base_name(s) + "_" + s.overload_name();
}

std::string impl_name(const FunctionSchema& s) {
  return s.overload_name().empty() ? base_name(s) : base_name(s) + "." + s.overload_name();
}

}  // namespace opd::gen
