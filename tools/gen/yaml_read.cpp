#include "yaml_read.h"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "opd/error.h"

namespace opd::gen {

YamlFile::YamlFile(std::string path) : path_(std::move(path)) {
  try {
    root_ = YAML::LoadFile(path_);
  } catch (const YAML::BadFile&) {
    throw Error(fmt::format("{}: cannot read the file", path_));
  } catch (const YAML::Exception& e) {
    fail(e.mark.line + 1, e.msg);
  }
}

void YamlFile::fail(const YAML::Node& node, const std::string& what) const {
  fail(line(node), what);
}

void YamlFile::fail(int line, const std::string& what) const {
  // A node made by the reader rather than the parser has no mark (line 0): the file's start.
  throw Error(fmt::format("{}:{}: {}", path_, line > 0 ? line : 1, what));
}

const char* YamlFile::kind_of(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar:
      return "a string";
    default:
      return "empty";
  }
}

std::string YamlFile::scalar_at(const YAML::Node& node, int line, const std::string& what) const {
  if (!node.IsScalar()) fail(line, fmt::format("{} must be a string, not {}", what, kind_of(node)));
  return node.Scalar();
}

bool YamlFile::boolean_at(const YAML::Node& node, int line, const std::string& what) const {
  bool value = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value)) {
    fail(line, fmt::format("{} must be True or False, not {}", what,
                           node.IsScalar() ? "'" + node.Scalar() + "'" : kind_of(node)));
  }
  return value;
}

std::vector<YAML::Node> YamlFile::sequence_at(const YAML::Node& node, int line,
                                              const std::string& what) const {
  if (!node.IsSequence()) fail(line, fmt::format("{} must be a list, not {}", what, kind_of(node)));
  std::vector<YAML::Node> items;
  for (const YAML::Node& item : node) items.push_back(item);
  return items;
}

std::vector<YamlField> YamlFile::mapping_at(const YAML::Node& node, int line,
                                            const std::string& what,
                                            const std::string& name_what) const {
  if (!node.IsMap()) fail(line, fmt::format("{} must be a mapping, not {}", what, kind_of(node)));
  std::vector<YamlField> fields;
  std::map<std::string, int> lines;  // name -> line of its first occurrence
  for (const auto& kv : node) {
    std::string name = scalar(kv.first, name_what.empty() ? "a field name in " + what : name_what);
    const int name_line = YamlFile::line(kv.first);
    if (auto [it, fresh] = lines.emplace(name, name_line); !fresh) {
      fail(name_line,
           fmt::format("'{}' appears twice in {} (first at line {})", name, what, it->second));
    }
    const int value_line = kv.second.IsNull() ? name_line : YamlFile::line(kv.second);
    fields.push_back({std::move(name), kv.first, kv.second, value_line});
  }
  return fields;
}

std::string YamlFile::scalar(const YAML::Node& node, const std::string& what) const {
  return scalar_at(node, line(node), what);
}
bool YamlFile::boolean(const YAML::Node& node, const std::string& what) const {
  return boolean_at(node, line(node), what);
}
std::vector<YAML::Node> YamlFile::sequence(const YAML::Node& node, const std::string& what) const {
  return sequence_at(node, line(node), what);
}
std::vector<YamlField> YamlFile::mapping(const YAML::Node& node, const std::string& what,
                                         const std::string& name_what) const {
  return mapping_at(node, line(node), what, name_what);
}

std::string YamlFile::scalar(const YamlField& field, const std::string& what) const {
  return scalar_at(field.value, field.line, what);
}
bool YamlFile::boolean(const YamlField& field, const std::string& what) const {
  return boolean_at(field.value, field.line, what);
}
std::vector<YAML::Node> YamlFile::sequence(const YamlField& field, const std::string& what) const {
  return sequence_at(field.value, field.line, what);
}
std::vector<YamlField> YamlFile::mapping(const YamlField& field, const std::string& what,
                                         const std::string& name_what) const {
  return mapping_at(field.value, field.line, what, name_what);
}

}  // namespace opd::gen
