// Reading opd-gen's YAML (native_functions.yaml with its tags and structured fields, a vendor's,
// derivatives.yaml): every node the readers look at goes through YamlFile's accessors, which
// check its kind and throw opd::Error "<path>:<line>: <what>". A malformed file is then an error
// naming the file and line, never a yaml-cpp exception escaping opd-gen (issue 29: a sequence
// where a string was expected aborted it). tests/fuzz/gen_yaml_fuzzer.cpp holds the readers to
// that.

#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace opd::gen {

// One field of a mapping: its name, checked to be a string, and its value (any kind).
struct YamlField {
  std::string name;
  YAML::Node name_node;
  YAML::Node value;
  // The value's line; an empty value's is its name's (yaml-cpp marks it where the next token
  // starts, often the next line).
  int line = 0;
};

// A parsed YAML file and the checked ways to read its nodes. Every accessor throws opd::Error
// "<path>:<line>: <what>" (line 1-based, the node's own) when the node is not of the kind
// asked for; `what` names the node in that message ("'func'", "a dispatch key").
class YamlFile {
 public:
  // Parses `path`. Throws opd::Error "<path>: cannot read the file", or "<path>:<line>: <the
  // parser's message>" for a file that is not YAML.
  explicit YamlFile(std::string path);

  const std::string& path() const { return path_; }
  const YAML::Node& root() const { return root_; }

  // The 1-based line of `node`.
  static int line(const YAML::Node& node) { return node.Mark().line + 1; }
  [[noreturn]] void fail(const YAML::Node& node, const std::string& what) const;
  [[noreturn]] void fail(int line, const std::string& what) const;

  // A scalar's text ("foo", "1", "True": YAML's plain, quoted and block scalars alike). Else
  // "<what> must be a string, not a list" (or "a mapping", "empty").
  std::string scalar(const YAML::Node& node, const std::string& what) const;
  // A scalar YAML reads as a boolean (True, false, yes, ...). Else "<what> must be True or
  // False, not ...".
  bool boolean(const YAML::Node& node, const std::string& what) const;
  // The items of a sequence. Else "<what> must be a list, not ...".
  std::vector<YAML::Node> sequence(const YAML::Node& node, const std::string& what) const;
  // The fields of a mapping in file order, each name a scalar met once. Else "<what> must be a
  // mapping, not ...", or, at that name, "<name_what> must be a string, not ..." (name_what:
  // "a field name in <what>" unless given) or "'<name>' appears twice in <what> ...".
  std::vector<YamlField> mapping(const YAML::Node& node, const std::string& what,
                                 const std::string& name_what = "") const;

  // The same for a field's value, whose errors name the field's line (YamlField::line).
  std::string scalar(const YamlField& field, const std::string& what) const;
  bool boolean(const YamlField& field, const std::string& what) const;
  std::vector<YAML::Node> sequence(const YamlField& field, const std::string& what) const;
  std::vector<YamlField> mapping(const YamlField& field, const std::string& what,
                                 const std::string& name_what = "") const;

  // "a list", "a mapping", "a string", "empty": what a node is, for messages.
  static const char* kind_of(const YAML::Node& node);

 private:
  std::string scalar_at(const YAML::Node& node, int line, const std::string& what) const;
  bool boolean_at(const YAML::Node& node, int line, const std::string& what) const;
  std::vector<YAML::Node> sequence_at(const YAML::Node& node, int line,
                                      const std::string& what) const;
  std::vector<YamlField> mapping_at(const YAML::Node& node, int line, const std::string& what,
                                    const std::string& name_what) const;

  std::string path_;
  YAML::Node root_;
};

}  // namespace opd::gen
