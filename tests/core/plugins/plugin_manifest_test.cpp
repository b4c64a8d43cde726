// Manifest errors, through the public API (plugins().load): each names the manifest file and
// the line (and column, when the parser knows it) of what is wrong. The broken manifests are
// static files in tests/plugins/manifests/, copied next to the fixtures by the build.

#include "plugins/plugin_manifest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/plugin_manager.h"
#include "plugins/fixtures.h"

namespace opd {
namespace {

using fixtures::broken_manifest;
using fixtures::load_error;
using fixtures::plugin_dir;
using fixtures::replace_field;
using fixtures::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;
namespace fs = std::filesystem;

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
        BrokenManifest{"abi_next", ":3: ",
                       "the manifest says plugin ABI 5, but this opdispatch supports ABI 4"},
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

// A field name that is not a string is the manifest's error, with its line, never an uncaught
// YAML::BadConversion (it aborted `opd plugins` and every other command).
TEST(PluginManifest, FieldNameThatIsNotAStringIsNamedWithItsLine) {
  TempDir dir;
  fs::path list = dir.path() / "list_key.yaml";
  TempDir::write(list, "[a, b]: 1\nplugin: list_key\n");
  EXPECT_EQ(load_error(list.string()),
            list.string() + ":1:1: a field name must be a string, not a list");
  fs::path map = dir.path() / "map_key.yaml";
  TempDir::write(map, "plugin: map_key\nversion: 0.1.0\n{a: 1}: 2\n");
  EXPECT_EQ(load_error(map.string()),
            map.string() + ":3:1: a field name must be a string, not a mapping");
}

// A manifest may have kMaxManifestBytes; one byte more is refused, naming its size, before it
// is parsed.
TEST(PluginManifest, ManifestOverTheSizeLimitIsRefusedNamingItsSize) {
  TempDir dir;
  fs::path m = dir.copy_fixture("good_v1", "good", [](std::string text) {
    std::string padding = "# " + std::string(kMaxManifestBytes - text.size() - 3, 'x') + "\n";
    return text + padding;
  });
  ASSERT_EQ(fs::file_size(m), static_cast<uintmax_t>(kMaxManifestBytes));
  PluginStatus s = plugins().load(m.string());
  EXPECT_EQ(s.state, PluginState::Loaded) << s.reason;
  plugins().unload("good");
  TempDir::write(m, TempDir::read(m) + "\n");
  EXPECT_EQ(load_error(m.string()), m.string() + ": cannot read the manifest: it has " +
                                        std::to_string(kMaxManifestBytes + 1) +
                                        " bytes, more than the " +
                                        std::to_string(kMaxManifestBytes) + " a manifest may have");
}

// Copies fixture <folder>'s manifest (renamed `name`.yaml) and library into `to`.
fs::path copy_fixture_to(const fs::path& to, const std::string& folder, const std::string& name,
                         const std::string& manifest_name = {}) {
  fs::path from = plugin_dir() / folder;
  std::string text =
      TempDir::read(from / ((manifest_name.empty() ? folder : manifest_name) + ".yaml"));
  size_t at = text.find("library: ");
  std::string lib = text.substr(at + 9, text.find('\n', at) - at - 9);
  fs::create_directories(to);
  ::chmod(to.c_str(), 0755);
  fs::copy_file(from / lib, to / lib, fs::copy_options::overwrite_existing);
  ::chmod((to / lib).c_str(), 0644);
  fs::path m = to / (name + ".yaml");
  TempDir::write(m, text);
  return m;
}

// Restores the current folder at the end of the scope.
class ScopedCurrentPath {
 public:
  explicit ScopedCurrentPath(const fs::path& p) : old_(fs::current_path()) { fs::current_path(p); }
  ~ScopedCurrentPath() { fs::current_path(old_); }

 private:
  fs::path old_;
};

// A `requires:` path means the file next to the manifest, wherever the host runs: here the
// current folder holds an impostor at the same relative path (version 2, fixture::value 2).
TEST(PluginManifest, RequiresPathIsRelativeToTheManifestsFolder) {
  TempDir dir, elsewhere;
  fs::path good = copy_fixture_to(dir.path() / "sub", "good_v1", "good", "good");
  copy_fixture_to(elsewhere.path() / "sub", "good_v2", "good");
  fs::path dependant = dir.copy_fixture("dependant", "dependant", [](std::string text) {
    return replace_field(text, "requires:", "[sub/good.yaml]");
  });
  ScopedCurrentPath cwd(elsewhere.path());

  PluginStatus s = plugins().load(dependant.string());
  EXPECT_EQ(s.state, PluginState::Loaded) << s.reason;
  EXPECT_EQ(s.requires_, std::vector<std::string>{good.string()});
  PluginStatus g = plugins().status("good");
  EXPECT_EQ(g.state, PluginState::Loaded) << g.reason;
  EXPECT_EQ(g.manifest, good.string());
  EXPECT_EQ(g.version, "1.0.0");
  EXPECT_EQ(Dispatcher::singleton()
                .find_schema_or_throw("fixture::value", "")
                .typed<int64_t(const Tensor&)>()
                .call(fixtures::cpu_tensor()),
            1);
  if (s.state == PluginState::Loaded) plugins().unload("dependant");
  if (g.state == PluginState::Loaded) plugins().unload("good");
}

TEST(PluginManifest, UnknownNameIsRefusedListingTheSearchPath) {
  fixtures::ScopedEnv path("OPD_PLUGIN_PATH", (plugin_dir() / "manifests").string());
  std::string msg = load_error("no_such_plugin");
  EXPECT_THAT(msg, HasSubstr("plugin 'no_such_plugin' was not found in the search path"));
  EXPECT_THAT(msg, HasSubstr((plugin_dir() / "manifests").string()));
}

}  // namespace
}  // namespace opd
