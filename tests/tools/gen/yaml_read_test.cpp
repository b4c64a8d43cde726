// tools/gen/yaml_read.h: the checked accessors every opd-gen reader goes through. Each wrong
// kind is an opd::Error naming the file and the node's line, never a yaml-cpp exception.

#include "yaml_read.h"

#include <gtest/gtest.h>

#include <string>

#include "opd/error.h"
#include "temp_yaml.h"

namespace {

using opd::gen::YamlFile;
using opd::gen::test::TempYaml;

// What `read` throws for a file holding `text`, its path replaced by "F".
template <class Read>
std::string error(const std::string& text, Read read) {
  TempYaml t(text);
  try {
    YamlFile file(t.path());
    read(file);
  } catch (const opd::Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind(t.path() + ":", 0), 0u) << msg;
    return "F" + msg.substr(t.path().size());
  }
  ADD_FAILURE() << "expected an error for:\n" << text;
  return "";
}

TEST(YamlRead, ReadsEachKind) {
  TempYaml t("a: text\nb: [1, 2]\nc: {d: yes}\n");
  YamlFile file(t.path());
  auto fields = file.mapping(file.root(), "the file");
  ASSERT_EQ(fields.size(), 3u);
  EXPECT_EQ(fields[0].name, "a");
  EXPECT_EQ(file.scalar(fields[0].value, "'a'"), "text");
  EXPECT_EQ(file.sequence(fields[1].value, "'b'").size(), 2u);
  EXPECT_EQ(YamlFile::line(fields[1].value), 2);
  EXPECT_TRUE(file.boolean(file.mapping(fields[2].value, "'c'")[0].value, "'d'"));
}

TEST(YamlRead, EachWrongKindNamesFileAndLine) {
  auto root_field = [](const YamlFile& f) { return f.mapping(f.root(), "the file")[0]; };
  EXPECT_EQ(error("a:\n  [1]\n", [&](const YamlFile& f) { f.scalar(root_field(f), "'a'"); }),
            "F:2: 'a' must be a string, not a list");
  EXPECT_EQ(error("a: {b: 1}\n", [&](const YamlFile& f) { f.sequence(root_field(f), "'a'"); }),
            "F:1: 'a' must be a list, not a mapping");
  EXPECT_EQ(error("a: x\n", [&](const YamlFile& f) { f.mapping(root_field(f), "'a'"); }),
            "F:1: 'a' must be a mapping, not a string");
  EXPECT_EQ(error("a:\n", [&](const YamlFile& f) { f.boolean(root_field(f), "'a'"); }),
            "F:1: 'a' must be True or False, not empty");
  EXPECT_EQ(error("a: 2\n", [&](const YamlFile& f) { f.boolean(root_field(f), "'a'"); }),
            "F:1: 'a' must be True or False, not '2'");
  EXPECT_EQ(error("x: 1\n? [k]\n: v\n", [](const YamlFile& f) { f.mapping(f.root(), "the file"); }),
            "F:2: a field name in the file must be a string, not a list");
  EXPECT_EQ(error("x: 1\n? [k]\n: v\n",
                  [](const YamlFile& f) { f.mapping(f.root(), "the file", "a key"); }),
            "F:2: a key must be a string, not a list");
  EXPECT_EQ(error("x: 1\ny: 2\nx: 3\n", [](const YamlFile& f) { f.mapping(f.root(), "the file"); }),
            "F:3: 'x' appears twice in the file (first at line 1)");
}

TEST(YamlRead, UnreadableAndMalformedFiles) {
  try {
    YamlFile file("/nonexistent/x.yaml");
    FAIL();
  } catch (const opd::Error& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/x.yaml: cannot read the file");
  }
  EXPECT_EQ(error("a: 1\nb: [\n", [](const YamlFile&) {}).substr(0, 4), "F:3:");
}

}  // namespace
