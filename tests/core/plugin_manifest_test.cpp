// Manifest errors, through the public API (plugins().load): each names the manifest file and
// the line (and column, when the parser knows it) of what is wrong. The broken manifests are
// static files in tests/plugins/manifests/, copied next to the fixtures by the build.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "opd/error.h"
#include "opd/plugin_manager.h"
#include "plugins/fixtures.h"

namespace opd {
namespace {

using fixtures::broken_manifest;
using fixtures::plugin_dir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string load_error(const std::string& what) {
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

struct BrokenManifest {
  const char* file;   // in test_plugins/manifests/, without .yaml
  const char* where;  // follows the path: ":line:column: ", ":line: " or ": "
  const char* what;   // the rest of the message starts with this
};

void PrintTo(const BrokenManifest& b, std::ostream* os) { *os << b.file; }

class BrokenManifestTest : public ::testing::TestWithParam<BrokenManifest> {};

TEST_P(BrokenManifestTest, ErrorNamesTheFileAndLine) {
  const BrokenManifest& b = GetParam();
  std::string path = broken_manifest(b.file);
  EXPECT_THAT(load_error(path), StartsWith(path + b.where + b.what));
}

INSTANTIATE_TEST_SUITE_P(
    PluginManifest, BrokenManifestTest,
    ::testing::Values(
        BrokenManifest{"malformed", ":5:8: ", "malformed YAML: "},
        BrokenManifest{"empty", ": ", "the manifest must be a mapping of fields"},
        BrokenManifest{"not_a_mapping", ":1:1: ", "the manifest must be a mapping of fields"},
        BrokenManifest{"missing_field", ":1:1: ", "missing field 'library'"},
        BrokenManifest{"unknown_field", ":5:1: ",
                       "unknown field 'colour' (known: plugin, version, abi, library, sha256, "
                       "dispatch_keys, requires, load, description)"},
        BrokenManifest{"wrong_type_abi", ":3:6: ", "'abi' must be an integer"},
        BrokenManifest{"wrong_type_plugin", ":1:9: ", "'plugin' must be a string"},
        BrokenManifest{"wrong_type_requires", ":5:11: ", "'requires' must be a list of strings"},
        BrokenManifest{"missing_library", ":4:10: ", "library '"},
        BrokenManifest{"sha256_malformed",
                       ":5:9: ", "'sha256' must be 64 lowercase hexadecimal digits"},
        BrokenManifest{"sha256_mismatch", ":7: ", "sha256 mismatch for "},
        BrokenManifest{"unknown_key", ":5:22: ", "unknown dispatch key 'Quantum'"},
        BrokenManifest{"bad_load",
                       ":5:7: ", "'load' must be 'default' or 'on-demand', not 'always'"},
        BrokenManifest{
            "abi2", ":3: ", "the manifest says plugin ABI 2, but this opdispatch supports ABI 1"},
        BrokenManifest{"name_mismatch",
                       ":1: ", "the manifest names plugin 'impostor' but the library is 'good'"}),
    [](const ::testing::TestParamInfo<BrokenManifest>& info) {
      return std::string(info.param.file);
    });

TEST(PluginManifest, MissingLibraryIsNamedByItsAbsolutePath) {
  std::string lib = (plugin_dir() / "nowhere" / "libopd_nowhere.so").string();
  EXPECT_THAT(load_error(broken_manifest("missing_library")),
              HasSubstr("library '" + lib + "' does not exist"));
}

// The manifest points at a library whose constructor aborts the process: the test survives
// only because the digest is compared before dlopen.
TEST(PluginManifest, Sha256MismatchIsRefusedBeforeDlopen) {
  std::string lib = (plugin_dir() / "poison" / "libopd_poison.so").string();
  std::string msg = load_error(broken_manifest("sha256_mismatch"));
  EXPECT_THAT(msg, HasSubstr("sha256 mismatch for " + lib));
  EXPECT_THAT(msg,
              HasSubstr("the manifest expects " + std::string(64, '0') + " but the file has "));
  EXPECT_EQ(plugins().status("sha256_mismatch").state, PluginState::Failed);
  EXPECT_FALSE(fixtures::is_mapped(lib));
}

TEST(PluginManifest, UnreadableManifestIsNamed) {
  std::string path = (plugin_dir() / "manifests" / "no_such_manifest.yaml").string();
  EXPECT_EQ(load_error(path), path + ": cannot read the manifest");
}

// In the search path, one broken manifest does not hide the others from listing; loading it by
// name reports its own error.
TEST(PluginManifest, BrokenManifestInTheSearchPathIsSkippedWhenListingAndReportedWhenLoaded) {
  fixtures::ScopedEnv path("OPD_PLUGIN_PATH", (plugin_dir() / "manifests").string());
  std::vector<std::string> names;
  for (const auto& s : plugins().list()) names.push_back(s.name);
  EXPECT_THAT(names, ::testing::Contains("impostor"));
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("unknown_key")));
  EXPECT_THAT(load_error("unknown_key"),
              StartsWith(broken_manifest("unknown_key") + ":5:22: unknown dispatch key 'Quantum'"));
}

TEST(PluginManifest, UnknownNameIsRefusedListingTheSearchPath) {
  fixtures::ScopedEnv path("OPD_PLUGIN_PATH", (plugin_dir() / "manifests").string());
  std::string msg = load_error("no_such_plugin");
  EXPECT_THAT(msg, HasSubstr("plugin 'no_such_plugin' was not found in the search path"));
  EXPECT_THAT(msg, HasSubstr((plugin_dir() / "manifests").string()));
}

}  // namespace
}  // namespace opd
