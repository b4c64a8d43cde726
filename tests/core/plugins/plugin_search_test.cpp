// Where plugins are found and what is checked before one is opened
// (core/src/plugins/plugin_search.cpp), through the public API (plugins(), the opd command): bad
// entries in the search path, the permission walk of Note [Plugin file permissions], the opening of
// the checked file, and the build-tree folder that only a build tree searches. Every test leaves
// every plugin it loaded unloaded; the fixture checks it.

#include "plugins/plugin_search.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "opd/error.h"
#include "opd/plugin_manager.h"
#include "plugins/fixtures.h"

namespace opd {
namespace {

using fixtures::is_mapped;
using fixtures::load_error;
using fixtures::manifest;
using fixtures::plugin_dir;
using fixtures::ScopedEnv;
using fixtures::TempDir;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
namespace fs = std::filesystem;

// An owner that is neither root nor the effective user. Giving a file to it takes root: the
// tests that do skip otherwise.
constexpr uid_t kOtherUser = 12345;
#define SKIP_UNLESS_ROOT() \
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user (chown) needs root"

std::vector<std::string> listed_names() {
  std::vector<std::string> names;
  for (const PluginStatus& s : plugins().list()) names.push_back(s.name);
  return names;
}

// Output and exit status of a shell command (stderr included).
std::pair<std::string, int> run(const std::string& command) {
  std::string out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return {"popen failed", -1};
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int status = ::pclose(p);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

void chmod_or_fail(const fs::path& p, mode_t mode) { ASSERT_EQ(::chmod(p.c_str(), mode), 0) << p; }

class PluginSearchTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const PluginStatus& s : plugins().list()) {
      if (s.state != PluginState::Loaded) continue;
      ADD_FAILURE() << "the test left plugin '" << s.name << "' loaded";
      plugins().unload(s.name, /*cascade=*/true);
    }
  }
};

// ---- Defect 6: one bad file in the search path -------------------------------------------

// A folder holding the good fixture and, around it, one of each kind of bad entry.
struct BadSearchFolder {
  TempDir dir;
  fs::path fifo = dir.path() / "fifo.yaml";
  BadSearchFolder() {
    dir.copy_fixture("good_v1", "good");
    TempDir::write(dir.path() / "keys.yaml", "[a, b]: 1\nplugin: keys\n");
    TempDir::write(dir.path() / "malformed.yaml", "plugin: [unterminated\n");
    fs::create_directory(dir.path() / "folder.yaml");
    EXPECT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
    TempDir::write(dir.path() / "huge.yaml",
                   "plugin: huge\ndescription: " + std::string(kMaxManifestBytes, 'x') + "\n");
  }
  std::string path(const std::string& stem) const {
    return (dir.path() / (stem + ".yaml")).string();
  }
};

// What `f` returns, or a test failure (and the FIFO opened for writing, which lets a reader
// blocked in open() go on) when it has not returned within 30 s.
template <class F>
auto without_hanging(const fs::path& fifo, F f) {
  auto result = std::async(std::launch::async, f);
  if (result.wait_for(std::chrono::seconds(30)) == std::future_status::timeout) {
    ADD_FAILURE() << "blocked on the FIFO " << fifo;
    int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }
  return result.get();
}

TEST_F(PluginSearchTest, BadEntriesInTheSearchPathAreSkippedAndTheRestListed) {
  BadSearchFolder bad;
  ScopedEnv path("OPD_PLUGIN_PATH", bad.dir.path().string());
  std::vector<std::string> names = without_hanging(bad.fifo, listed_names);
  EXPECT_THAT(names, Contains("good"));
  for (const char* stem : {"keys", "malformed", "folder", "fifo", "huge"})
    EXPECT_THAT(names, Not(Contains(stem)));
}

// Each bad entry, asked for by name or by path, is a PluginError naming the file and what is
// wrong with it (and the line, where there is one).
TEST_F(PluginSearchTest, EachBadEntryIsAPluginErrorNamingTheFile) {
  BadSearchFolder bad;
  ScopedEnv path("OPD_PLUGIN_PATH", bad.dir.path().string());
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"keys", ":1:1: a field name must be a string, not a list"},
      {"folder", ": cannot read the manifest: it is a directory, not a regular file"},
      {"fifo", ": cannot read the manifest: it is a FIFO, not a regular file"},
      {"huge", ": cannot read the manifest: it has " +
                   std::to_string(fs::file_size(bad.path("huge"))) + " bytes, more than the " +
                   std::to_string(kMaxManifestBytes) + " a manifest may have"}};
  for (const auto& [stem, what] : expected) {
    SCOPED_TRACE(stem);
    EXPECT_THAT(without_hanging(bad.fifo, [&] { return load_error(stem); }),
                StartsWith(bad.path(stem) + what));
    EXPECT_THAT(without_hanging(bad.fifo, [&] { return load_error(bad.path(stem)); }),
                StartsWith(bad.path(stem) + what));
  }
}

// load_default() never throws for one bad file: the good plugin next to the bad ones loads.
TEST_F(PluginSearchTest, LoadDefaultLoadsTheGoodPluginsNextToBadFiles) {
  BadSearchFolder bad;
  fs::path m = bad.dir.path() / "good.yaml";
  TempDir::write(m, fixtures::replace_field(TempDir::read(m), "load:", "default"));
  ScopedEnv path("OPD_PLUGIN_PATH", bad.dir.path().string());
  std::vector<PluginStatus> all =
      without_hanging(bad.fifo, [] { return plugins().load_default(); });
  bool good_loaded = false;
  for (const PluginStatus& s : all)
    good_loaded |= s.name == "good" && s.state == PluginState::Loaded;
  EXPECT_TRUE(good_loaded);
  // The build's default plugins were loaded too: unload them all, dependants first.
  for (const PluginStatus& s : plugins().list())
    if (s.state == PluginState::Loaded) plugins().unload(s.name, /*cascade=*/true);
}

// The opd command neither aborts nor hangs on them: `plugins` lists the rest, `load` of a bad
// one reports it and exits 1.
TEST_F(PluginSearchTest, OpdPluginsAndLoadSurviveBadFiles) {
  BadSearchFolder bad;
  const std::string env = "OPD_PLUGIN_PATH='" + bad.dir.path().string() + "' timeout 60 ";
  auto [out, rc] = run(env + OPD_CLI " plugins --json");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("\"name\": \"good\""));
  EXPECT_THAT(out, HasSubstr("skipping manifest: " + bad.path("keys") + ":1:1:"));
  EXPECT_THAT(out, HasSubstr("skipping manifest: " + bad.path("fifo") + ": cannot read"));
  for (const char* stem : {"keys", "folder", "fifo"}) {
    SCOPED_TRACE(stem);
    std::tie(out, rc) = run(env + OPD_CLI " load " + stem);
    EXPECT_EQ(rc, 1) << out;
    EXPECT_THAT(out, HasSubstr("opd: " + bad.path(stem) + ":"));
  }
}

// ---- Defect 7: the permission walk (Note [Plugin file permissions]) ------------------------

// A copy of the good fixture whose library lies in `lib_dir` (a symbolic link to it next to the
// manifest in `dir` when they differ).
fs::path good_copy(const fs::path& dir, const fs::path& lib_dir) {
  fs::path m = dir / "good.yaml";
  fs::path src = plugin_dir() / "good_v1";
  fs::copy_file(src / "good.yaml", m);
  ::chmod(m.c_str(), 0644);
  fs::copy_file(src / "libopd_good.so", lib_dir / "libopd_good.so");
  ::chmod((lib_dir / "libopd_good.so").c_str(), 0644);
  if (lib_dir != dir) fs::create_symlink(lib_dir / "libopd_good.so", dir / "libopd_good.so");
  return m;
}

TEST_F(PluginSearchTest, SymlinkedLibraryInAWorldWritableFolderIsRefused) {
  TempDir dir, target;
  fs::path m = good_copy(dir.path(), target.path());
  chmod_or_fail(target.path(), 0777);
  ScopedEnv strict("OPD_ALLOW_INSECURE_PLUGINS", std::nullopt);
  fs::path link = dir.path() / "libopd_good.so";
  fs::path real = target.path() / "libopd_good.so";
  EXPECT_THAT(load_error(m.string()),
              StartsWith(link.string() + " (real path " + real.string() +
                         "): refusing to load: its folder '" + target.path().string() +
                         "' is writable by others (mode 777)"));
  EXPECT_FALSE(is_mapped(real));
  {
    ScopedEnv allow("OPD_ALLOW_INSECURE_PLUGINS", "1");
    PluginStatus s = plugins().load(m.string());
    EXPECT_EQ(s.state, PluginState::Loaded) << s.reason;
    plugins().unload("good");
  }
  chmod_or_fail(target.path(), 0755);
  PluginStatus s = plugins().load(m.string());
  EXPECT_EQ(s.state, PluginState::Loaded) << s.reason;
  EXPECT_TRUE(is_mapped(real));
  plugins().unload("good");
}

TEST_F(PluginSearchTest, LibraryOwnedByAnotherUserIsRefused) {
  SKIP_UNLESS_ROOT();
  TempDir dir;
  fs::path m = good_copy(dir.path(), dir.path());
  fs::path lib = dir.path() / "libopd_good.so";
  ASSERT_EQ(::chown(lib.c_str(), kOtherUser, static_cast<gid_t>(-1)), 0);
  ScopedEnv strict("OPD_ALLOW_INSECURE_PLUGINS", std::nullopt);
  EXPECT_THAT(
      load_error(m.string()),
      AllOf(StartsWith(lib.string() + ": refusing to load: the file '" + lib.string() +
                       "' is owned by uid 12345"),
            HasSubstr("not by root or the effective user (uid " + std::to_string(::geteuid())),
            HasSubstr("OPD_ALLOW_INSECURE_PLUGINS=1")));
  EXPECT_FALSE(is_mapped(lib));
}

TEST_F(PluginSearchTest, FolderOwnedByAnotherUserIsRefused) {
  SKIP_UNLESS_ROOT();
  TempDir dir;
  fs::path m = good_copy(dir.path(), dir.path());
  ASSERT_EQ(::chown(dir.path().c_str(), kOtherUser, static_cast<gid_t>(-1)), 0);
  ScopedEnv strict("OPD_ALLOW_INSECURE_PLUGINS", std::nullopt);
  // The manifest is checked first: the same folder holds both.
  EXPECT_THAT(load_error(m.string()), StartsWith(m.string() + ": refusing to load: its folder '" +
                                                 dir.path().string() + "' is owned by uid 12345"));
}

TEST_F(PluginSearchTest, WorldWritableAncestorFolderIsRefused) {
  TempDir dir;
  fs::path sub = dir.path() / "a" / "b";
  fs::create_directories(sub);
  chmod_or_fail(dir.path() / "a", 0755);
  chmod_or_fail(sub, 0755);
  fs::path m = good_copy(sub, sub);
  chmod_or_fail(dir.path(), 0757);
  ScopedEnv strict("OPD_ALLOW_INSECURE_PLUGINS", std::nullopt);
  EXPECT_THAT(load_error(m.string()),
              StartsWith(m.string() + ": refusing to load: the folder '" + dir.path().string() +
                         "' is writable by others (mode 757)"));
  chmod_or_fail(dir.path(), 0775);
  EXPECT_THAT(load_error(m.string()), HasSubstr("the folder '" + dir.path().string() +
                                                "' is writable by its group (mode 775)"));
}

// A sticky world-writable folder (as /tmp) is accepted for entries owned by root or the
// effective user only.
TEST_F(PluginSearchTest, StickyFolderIsAcceptedOnlyForEntriesOwnedByTheUser) {
  TempDir dir;
  fs::path sub = dir.path() / "mine";
  fs::create_directory(sub);
  chmod_or_fail(sub, 0755);
  fs::path m = good_copy(sub, sub);
  chmod_or_fail(dir.path(), 01777);
  ScopedEnv strict("OPD_ALLOW_INSECURE_PLUGINS", std::nullopt);
  PluginStatus s = plugins().load(m.string());
  EXPECT_EQ(s.state, PluginState::Loaded) << s.reason;
  plugins().unload("good");

  SKIP_UNLESS_ROOT();
  ASSERT_EQ(::chown(sub.c_str(), kOtherUser, static_cast<gid_t>(-1)), 0);
  EXPECT_THAT(load_error(m.string()),
              AllOf(StartsWith(m.string() + ": refusing to load: its folder '" + sub.string() +
                               "' is owned by uid 12345"),
                    HasSubstr("(in the sticky folder '" + dir.path().string() +
                              "', only entries owned by them are trusted)")));
}

// The library is hashed and mapped from one descriptor, held open while it is loaded: the name
// the loader maps is /proc/self/fd/N, whose target is the checked file.
TEST_F(PluginSearchTest, TheCheckedDescriptorIsTheOneMapped) {
  TempDir dir;
  fs::path m = good_copy(dir.path(), dir.path());
  fs::path lib = dir.path() / "libopd_good.so";
  auto descriptors_on_lib = [&] {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
      std::error_code ec;
      n += fs::read_symlink(e.path(), ec) == lib;
    }
    return n;
  };
  EXPECT_EQ(descriptors_on_lib(), 0u);
  PluginStatus s = plugins().load(m.string());
  ASSERT_EQ(s.state, PluginState::Loaded) << s.reason;
  EXPECT_EQ(descriptors_on_lib(), 1u);
  EXPECT_TRUE(is_mapped(lib));
  s = plugins().unload("good");
  EXPECT_EQ(s.state, PluginState::Unloaded) << s.reason;
  EXPECT_EQ(descriptors_on_lib(), 0u);
}

// ---- Defect 8: the build tree's plugins/ folder ---------------------------------------------

TEST(PluginSearchPath, BuildTreePluginsFolderIsSearchedOnlyInABuildTree) {
  TempDir prefix;
  fs::path lib = prefix.path() / "lib";
  fs::create_directories(lib);
  fs::create_directories(prefix.path() / "plugins");
  ScopedEnv path("OPD_PLUGIN_PATH", std::nullopt);
  EXPECT_FALSE(is_build_tree_lib_dir(lib));
  EXPECT_EQ(plugin_search_dirs(lib), std::vector<fs::path>{lib / "opdispatch" / "plugins"});
  TempDir::write(prefix.path() / "CMakeCache.txt", "# This is the CMakeCache file.\n");
  EXPECT_TRUE(is_build_tree_lib_dir(lib));
  EXPECT_EQ(plugin_search_dirs(lib),
            (std::vector<fs::path>{prefix.path() / "plugins", lib / "opdispatch" / "plugins"}));
}

TEST(PluginSearchPath, ThisBuildTreeSearchesItsPluginsFolderFirst) {
  fs::path build = plugin_dir().parent_path();
  std::vector<std::string> dirs = plugins().search_path();
  ASSERT_FALSE(dirs.empty());
  EXPECT_EQ(fs::weakly_canonical(dirs.front()), fs::weakly_canonical(build / "plugins"));
}

// The installed layout, <prefix>/lib/libopd_core.so.0 and <prefix>/lib/opdispatch/plugins, run
// by the opd command: a plugin in <prefix>/plugins, which no package owns, is not seen; the
// installed one is. With a CMakeCache.txt next to lib/ (a build tree), it would be.
TEST(PluginSearchPath, InstalledPrefixDoesNotSearchPrefixPlugins) {
  TempDir prefix;
  fs::path lib = prefix.path() / "lib";
  fs::path installed = lib / "opdispatch" / "plugins";
  fs::path stray = prefix.path() / "plugins";
  for (const fs::path& d : {lib, installed, stray}) {
    fs::create_directories(d);
    chmod_or_fail(d, 0755);
  }
  fs::path core = fs::canonical(plugin_dir().parent_path() / "lib" / "libopd_core.so.0");
  std::error_code ec;
  fs::create_hard_link(core, lib / "libopd_core.so.0", ec);
  if (ec) fs::copy_file(core, lib / "libopd_core.so.0");
  good_copy(installed, installed);
  fs::path fake = good_copy(stray, stray);
  TempDir::write(fake, fixtures::replace_field(TempDir::read(fake), "version:", "6.6.6"));

  const std::string command = "env -u OPD_PLUGIN_PATH LD_LIBRARY_PATH='" + lib.string() +
                              "' timeout 60 " OPD_CLI " plugins --json";
  auto [out, rc] = run(command);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("\"manifest\": \"" + (installed / "good.yaml").string() + "\""));
  EXPECT_THAT(out, Not(HasSubstr("6.6.6")));

  TempDir::write(prefix.path() / "CMakeCache.txt", "# This is the CMakeCache file.\n");
  std::tie(out, rc) = run(command);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_THAT(out, HasSubstr("\"version\": \"6.6.6\""));
}

}  // namespace
}  // namespace opd
