// The plugin manager's life cycle on real shared objects (the fixtures of tests/plugins/):
// refusals at the entry point, loads as transactions, unavailable plugins, dependencies, file
// permissions, unloading while objects are alive, hot reload and resource leaks. Every test
// leaves every plugin it loaded unloaded (the manager is process-wide); the fixture checks it.

#include "opd/plugin_manager.h"

#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "dispatch/registration_context.h"
#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/plugin.h"
#include "opd/tensor.h"
#include "plugins/fixtures.h"
#include "plugins/plugin_manifest.h"

namespace opd {
namespace {

using fixtures::cpu_tensor;
using fixtures::is_mapped;
using fixtures::load_error;
using fixtures::manifest;
using fixtures::mapped_lines;
using fixtures::plugin_dir;
using fixtures::replace_field;
using fixtures::ScopedEnv;
using fixtures::TempDir;
using fixtures::wait_for_state;
using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::optional<OperatorHandle> find_op(const std::string& name) {
  return Dispatcher::singleton().find_op(OperatorName(name, ""));
}

int64_t call_value(const std::string& op_name) {
  return Dispatcher::singleton()
      .find_schema_or_throw(op_name, "")
      .typed<int64_t(const Tensor&)>()
      .call(cpu_tensor());
}

// Checks, after each test, that nothing it loaded is still loaded (unloading it if so).
class PluginManagerTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const PluginStatus& s : plugins().list()) {
      if (s.state != PluginState::Loaded) continue;
      ADD_FAILURE() << "the test left plugin '" << s.name << "' loaded";
      plugins().unload(s.name, /*cascade=*/true);
    }
  }
};

TEST_F(PluginManagerTest, LoadsByManifestPathDispatchesAndUnmapsOnUnload) {
  fs::path lib = plugin_dir() / "good_v1" / "libopd_good.so";
  PluginStatus s = plugins().load(manifest("good_v1", "good"));
  EXPECT_EQ(s.state, PluginState::Loaded) << s.reason;
  EXPECT_EQ(s.name, "good");
  EXPECT_EQ(s.version, "1.0.0");
  EXPECT_EQ(s.library, lib.string());
  EXPECT_EQ(s.dispatch_keys, std::vector<DispatchKey>{DispatchKey::CPU});
  // The namespace, two defs and two CPU kernels.
  EXPECT_EQ(s.registrations, 5u);
  EXPECT_TRUE(is_mapped(lib));
  EXPECT_EQ(call_value("fixture::value"), 1);

  s = plugins().unload("good");
  EXPECT_EQ(s.state, PluginState::Unloaded) << s.reason;
  EXPECT_EQ(s.registrations, 0u);
  EXPECT_FALSE(find_op("fixture::value"));
  EXPECT_FALSE(is_mapped(lib));
}

TEST_F(PluginManagerTest, LoadingALoadedPluginAgainReturnsItsStatus) {
  plugins().load(manifest("good_v1", "good"));
  PluginStatus s = plugins().load(manifest("good_v1", "good"));
  EXPECT_EQ(s.state, PluginState::Loaded);
  EXPECT_EQ(s.registrations, 5u);
  plugins().unload("good");
  EXPECT_THAT(load_error("/nonexistent/folder/good.yaml"),
              AllOf(HasSubstr("/nonexistent/folder/good.yaml"), HasSubstr("cannot read")));
  try {
    plugins().unload("good");
    ADD_FAILURE() << "unloading an unloaded plugin succeeded";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.msg(), AllOf(HasSubstr("'good'"), HasSubstr("not loaded")));
  }
}

// Refusals at the entry point: each names the file, what the host expected and what it found,
// records the plugin as failed with that reason, and leaves the library closed.
void expect_refused(const std::string& folder, const std::string& library,
                    const std::vector<std::string>& parts) {
  SCOPED_TRACE(folder);
  fs::path lib = plugin_dir() / folder / library;
  std::string msg = load_error(manifest(folder));
  EXPECT_THAT(msg, HasSubstr(lib.string()));
  for (const auto& p : parts) EXPECT_THAT(msg, HasSubstr(p));
  PluginStatus s = plugins().status(folder);
  EXPECT_EQ(s.state, PluginState::Failed);
  EXPECT_EQ(s.reason, msg);
  EXPECT_FALSE(is_mapped(lib));
}

TEST_F(PluginManagerTest, RefusesAFileThatIsNotASharedObject) {
  expect_refused("not_elf", "libopd_not_elf.so",
                 {"cannot be loaded as a shared object", "invalid ELF header"});
}

TEST_F(PluginManagerTest, RefusesALibraryWithoutTheEntrySymbolQuotingDlerror) {
  expect_refused("missing_entry", "libopd_missing_entry.so",
                 {"entry point 'opd_plugin_entry' is missing", "undefined symbol: opd_plugin_entry",
                  "OPD_PLUGIN(name, version)"});
}

TEST_F(PluginManagerTest, RefusesAnotherAbiMajor) {
  expect_refused(
      "abi_major", "libopd_abi_major.so",
      {fmt::format("built for plugin ABI {}.{}", OPD_PLUGIN_ABI_MAJOR + 1, OPD_PLUGIN_ABI_MINOR),
       fmt::format("supports ABI {}.x", OPD_PLUGIN_ABI_MAJOR)});
}

TEST_F(PluginManagerTest, RefusesANewerAbiMinor) {
  expect_refused(
      "abi_minor", "libopd_abi_minor.so",
      {fmt::format("built for plugin ABI {}.{}", OPD_PLUGIN_ABI_MAJOR, OPD_PLUGIN_ABI_MINOR + 1),
       fmt::format("newer than this opdispatch's {}.{}", OPD_PLUGIN_ABI_MAJOR,
                   OPD_PLUGIN_ABI_MINOR)});
}

TEST_F(PluginManagerTest, RefusesAnIncompatibleBuildFingerprint) {
  expect_refused("fingerprint", "libopd_fingerprint.so",
                 {"built with 'opd-abi1;msvc-19;msvcprt-143'",
                  std::string("this opdispatch was built with '") + OPD_BUILD_FINGERPRINT + "'"});
}

// Load is a transaction: a failed load leaves no registration and no mapping behind, and the
// plugins already loaded keep serving, with their registrations untouched.
TEST_F(PluginManagerTest, RegistrationThatThrowsHalfWayLeavesNothingBehind) {
  plugins().load(manifest("good_v1", "good"));
  fs::path lib = plugin_dir() / "throwing" / "libopd_throwing.so";

  std::string msg = load_error(manifest("throwing"));
  EXPECT_THAT(msg, AllOf(HasSubstr(lib.string()), HasSubstr("registration failed"),
                         HasSubstr("failing after 5 registrations")));
  PluginStatus s = plugins().status("throwing");
  EXPECT_EQ(s.state, PluginState::Failed);
  EXPECT_EQ(s.registrations, 0u);
  EXPECT_FALSE(find_op("throwing::first"));
  EXPECT_FALSE(find_op("throwing::second"));
  EXPECT_FALSE(is_mapped(lib));

  EXPECT_EQ(plugins().status("good").registrations, 5u);
  EXPECT_EQ(call_value("fixture::value"), 1);
  plugins().unload("good");
}

TEST_F(PluginManagerTest, FailedRegistrationThatDidNotUndoItselfIsUndoneThroughShutdown) {
  fs::path lib = plugin_dir() / "sloppy" / "libopd_sloppy.so";
  EXPECT_THAT(load_error(manifest("sloppy")),
              HasSubstr("failing with its registrations still in place"));
  EXPECT_EQ(plugins().status("sloppy").state, PluginState::Failed);
  EXPECT_FALSE(find_op("sloppy::answer"));
  EXPECT_FALSE(is_mapped(lib));
}

TEST_F(PluginManagerTest, DefCollidingWithAnotherPluginIsRefusedNamingBoth) {
  plugins().load(manifest("good_v1", "good"));
  fs::path lib = plugin_dir() / "collide" / "libopd_collide.so";

  std::string msg = load_error(manifest("collide"));
  EXPECT_THAT(msg, AllOf(HasSubstr("fixture::value"), HasSubstr("(plugin collide 0.1.0)"),
                         HasSubstr("(plugin good 1.0.0)")));
  EXPECT_EQ(plugins().status("collide").state, PluginState::Failed);
  EXPECT_FALSE(find_op("collide::own"));  // registered before the collision, then undone
  EXPECT_FALSE(is_mapped(lib));

  EXPECT_EQ(plugins().status("good").registrations, 5u);
  EXPECT_EQ(call_value("fixture::value"), 1);
  plugins().unload("good");
}

TEST_F(PluginManagerTest, UnavailablePluginIsANormalStateWithItsReason) {
  fs::path lib = plugin_dir() / "unavailable" / "libopd_unavailable.so";
  PluginStatus s = plugins().load(manifest("unavailable"));  // not an error
  EXPECT_EQ(s.state, PluginState::Unavailable);
  EXPECT_EQ(s.reason, "no fixture device on this machine");
  EXPECT_EQ(s.registrations, 0u);
  EXPECT_FALSE(find_op("unavailable::never"));
  EXPECT_FALSE(is_mapped(lib));
}

TEST_F(PluginManagerTest, LoadDefaultGoesOnPastUnavailableAndFailedPlugins) {
  TempDir dir;
  auto by_default = [](std::string text) { return replace_field(text, "load:", "default"); };
  dir.copy_fixture("unavailable", "", by_default);
  dir.copy_fixture("throwing", "", by_default);
  dir.copy_fixture("good_v1", "good", by_default);
  ScopedEnv path("OPD_PLUGIN_PATH", dir.path().string());

  std::set<std::string> loaded_before;
  for (const auto& s : plugins().list()) {
    if (s.state == PluginState::Loaded) loaded_before.insert(s.name);
  }
  std::map<std::string, PluginStatus> got;
  for (auto& s : plugins().load_default()) got[s.name] = s;

  ASSERT_TRUE(got.count("good") && got.count("unavailable") && got.count("throwing"));
  EXPECT_EQ(got["good"].state, PluginState::Loaded) << got["good"].reason;
  EXPECT_EQ(got["unavailable"].state, PluginState::Unavailable);
  EXPECT_EQ(got["unavailable"].reason, "no fixture device on this machine");
  EXPECT_EQ(got["throwing"].state, PluginState::Failed);
  EXPECT_THAT(got["throwing"].reason, HasSubstr("failing after 5 registrations"));
  EXPECT_EQ(call_value("fixture::value"), 1);

  for (const auto& [name, s] : got) {
    if (s.state == PluginState::Loaded && !loaded_before.count(name)) plugins().unload(name, true);
  }
}

TEST_F(PluginManagerTest, MissingRequiredPluginIsRefusedNamingIt) {
  std::string msg = load_error(manifest("needs_missing"));
  EXPECT_THAT(msg, AllOf(HasSubstr(manifest("needs_missing")),
                         HasSubstr("requires plugin 'no_such_plugin'"),
                         HasSubstr("was not found in the search path")));
  EXPECT_EQ(plugins().status("needs_missing").state, PluginState::Failed);
  EXPECT_FALSE(is_mapped(plugin_dir() / "needs_missing" / "libopd_needs_missing.so"));
}

TEST_F(PluginManagerTest, RequiredPluginLoadsFirstAndCannotBeUnloadedUnderItsDependant) {
  ScopedEnv path("OPD_PLUGIN_PATH", (plugin_dir() / "good_v1").string());
  PluginStatus s = plugins().load(manifest("dependant"));
  ASSERT_EQ(s.state, PluginState::Loaded) << s.reason;
  EXPECT_EQ(plugins().status("good").state, PluginState::Loaded);
  EXPECT_EQ(call_value("dependant::twice"), 2);

  try {
    plugins().unload("good");
    ADD_FAILURE() << "unloading a required plugin succeeded";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.msg(), AllOf(HasSubstr("'good'"), HasSubstr("'dependant' requires it"),
                               HasSubstr("cascade")));
  }
  EXPECT_EQ(plugins().status("good").state, PluginState::Loaded);
  EXPECT_EQ(call_value("dependant::twice"), 2);

  s = plugins().unload("good", /*cascade=*/true);
  EXPECT_EQ(s.state, PluginState::Unloaded) << s.reason;
  EXPECT_EQ(plugins().status("dependant").state, PluginState::Unloaded);
  EXPECT_FALSE(find_op("dependant::twice"));
  EXPECT_FALSE(find_op("fixture::value"));
}

TEST_F(PluginManagerTest, InsecurePermissionsAreRefusedUnlessAllowed) {
  TempDir dir;
  fs::path m = dir.copy_fixture("good_v1", "good");
  fs::path lib = dir.path() / "libopd_good.so";
  ScopedEnv strict("OPD_ALLOW_INSECURE_PLUGINS", std::nullopt);

  ASSERT_EQ(::chmod(lib.c_str(), 0664), 0);
  EXPECT_THAT(load_error(m.string()),
              AllOf(HasSubstr(lib.string()), HasSubstr("writable by its group (mode 664)"),
                    HasSubstr("chmod go-w"), HasSubstr("OPD_ALLOW_INSECURE_PLUGINS=1")));
  EXPECT_FALSE(is_mapped(lib));
  {
    ScopedEnv allow("OPD_ALLOW_INSECURE_PLUGINS", "1");
    PluginStatus s = plugins().load(m.string());
    EXPECT_EQ(s.state, PluginState::Loaded) << s.reason;
    plugins().unload("good");
  }
  ASSERT_EQ(::chmod(lib.c_str(), 0644), 0);

  ASSERT_EQ(::chmod(dir.path().c_str(), 0757), 0);
  EXPECT_THAT(load_error(m.string()), AllOf(HasSubstr("its folder '" + dir.path().string() + "'"),
                                            HasSubstr("writable by others (mode 757)")));
  ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);

  ASSERT_EQ(::chmod(m.c_str(), 0646), 0);
  EXPECT_THAT(load_error(m.string()), HasSubstr("'" + m.string() + "' is writable by others"));
  EXPECT_FALSE(is_mapped(lib));
}

// Among the manifests listed is a valid one for a library that aborts the process when mapped.
TEST_F(PluginManagerTest, ListingReadsManifestsOnly) {
  TempDir dir;
  dir.copy_fixture("good_v1", "good");
  dir.copy_fixture("missing_entry");
  dir.copy_fixture("not_elf");
  fs::path poison = dir.copy(plugin_dir() / "poison" / "libopd_poison.so");
  TempDir::write(dir.path() / "poison.yaml",
                 "plugin: poison\nversion: 0.1.0\nabi: 4\nlibrary: libopd_poison.so\nsha256: " +
                     sha256_of_file(poison) + "\ndescription: Aborts when mapped\n");
  TempDir::write(dir.path() / "broken.yaml", "plugin: [unterminated\n");
  ScopedEnv path("OPD_PLUGIN_PATH", dir.path().string());

  std::map<std::string, PluginStatus> got;
  for (auto& s : plugins().list()) got[s.name] = s;
  for (const char* name : {"good", "missing_entry", "not_elf", "poison"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(got.count(name));
    const PluginStatus& s = got[name];
    EXPECT_NE(s.state, PluginState::Loaded);
    EXPECT_EQ(fs::path(s.manifest).parent_path(), dir.path());
    EXPECT_EQ(fs::path(s.library).parent_path(), dir.path());
    EXPECT_FALSE(s.description.empty());
  }
  EXPECT_EQ(got["good"].version, "1.0.0");
  EXPECT_EQ(got["good"].dispatch_keys, std::vector<DispatchKey>{DispatchKey::CPU});
  EXPECT_EQ(mapped_lines(dir.path().string()), 0u);
  EXPECT_EQ(plugins().status("missing_entry").manifest,
            (dir.path() / "missing_entry.yaml").string());
}

TEST_F(PluginManagerTest, UnloadDeregistersAtOnceAndUnmapsWhenTheLastStorageGoes) {
  fs::path lib = plugin_dir() / "good_v1" / "libopd_good.so";
  plugins().load(manifest("good_v1", "good"));
  Tensor t = Dispatcher::singleton()
                 .find_schema_or_throw("fixture::alloc", "")
                 .typed<Tensor(const Tensor&, int64_t)>()
                 .call(cpu_tensor(), 4);

  PluginStatus s = plugins().unload("good");
  EXPECT_EQ(s.state, PluginState::Unloading);
  EXPECT_THAT(s.reason, HasSubstr("stays mapped"));
  EXPECT_EQ(s.registrations, 0u);
  EXPECT_FALSE(find_op("fixture::value"));
  EXPECT_FALSE(find_op("fixture::alloc"));
  EXPECT_TRUE(is_mapped(lib));
  t.data_ptr<float>()[3] = 1.0f;  // the memory is still the plugin's and still valid

  t = Tensor();
  EXPECT_EQ(wait_for_state("good", PluginState::Unloaded).state, PluginState::Unloaded);
  EXPECT_FALSE(is_mapped(lib));
}

TEST_F(PluginManagerTest, StoragesWithThePluginsOwnDeleterKeepItMappedUntilTheLastIsFreed) {
  fs::path lib = plugin_dir() / "allocator" / "libopd_allocator.so";
  plugins().load(manifest("allocator"));
  auto make = Dispatcher::singleton()
                  .find_schema_or_throw("allocator::make", "")
                  .typed<Tensor(const Tensor&, int64_t)>();
  Tensor a = make.call(cpu_tensor(), 8);
  Tensor b = make.call(cpu_tensor(), 16);
  Tensor view = make_view(b, std::vector<int64_t>{4}, std::vector<int64_t>{2}, 1);
  b = Tensor();
  EXPECT_EQ(call_value("allocator::live"), 2);

  EXPECT_EQ(plugins().unload("allocator").state, PluginState::Unloading);
  a = Tensor();
  EXPECT_EQ(plugins().status("allocator").state, PluginState::Unloading);
  EXPECT_TRUE(is_mapped(lib));
  view.data_ptr<float>()[0] = 2.0f;

  view = Tensor();  // the last storage: its deleter runs in the plugin, then the library goes
  EXPECT_EQ(wait_for_state("allocator", PluginState::Unloaded).state, PluginState::Unloaded);
  EXPECT_FALSE(is_mapped(lib));
}

TEST_F(PluginManagerTest, CallRunningInsideAPluginKeepsItMappedUntilItReturns) {
  fs::path lib = plugin_dir() / "allocator" / "libopd_allocator.so";
  plugins().load(manifest("allocator"));
  auto block = Dispatcher::singleton()
                   .find_schema_or_throw("allocator::block", "")
                   .typed<int64_t(const Tensor&)>();
  alignas(8) int32_t flags[2] = {0, 0};
  Tensor t = from_blob(flags, std::vector<int64_t>{2}, ScalarType::Int32);
  std::thread caller([&] { EXPECT_EQ(block.call(t), 0); });
  while (std::atomic_ref<int32_t>(flags[0]).load() == 0) std::this_thread::yield();

  // Unloading does not wait for the call (it used to poll for up to 200 ms, holding the
  // manager's mutex): what the call may still use is freed once it returns.
  auto start = std::chrono::steady_clock::now();
  PluginStatus s = plugins().unload("allocator");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
  EXPECT_EQ(s.state, PluginState::Unloading);
  EXPECT_THAT(s.reason, HasSubstr("stays mapped"));
  EXPECT_FALSE(find_op("allocator::block"));
  EXPECT_TRUE(is_mapped(lib));

  std::atomic_ref<int32_t>(flags[1]).store(1);
  caller.join();
  EXPECT_EQ(wait_for_state("allocator", PluginState::Unloaded).state, PluginState::Unloaded);
  EXPECT_FALSE(is_mapped(lib));
}

TEST_F(PluginManagerTest, LibraryThatCannotBeUnmappedIsReportedResident) {
  fs::path m = fixtures::unsafe_plugin_dir() / "nodelete" / "nodelete.yaml";
  ASSERT_EQ(plugins().load(m.string()).state, PluginState::Loaded);
  EXPECT_EQ(call_value("nodelete::ping"), 1);
  PluginStatus s = plugins().unload("nodelete");
  EXPECT_EQ(s.state, PluginState::Resident);
  EXPECT_THAT(s.reason, AllOf(HasSubstr("still mapped"), HasSubstr("NODELETE")));
  EXPECT_FALSE(find_op("nodelete::ping"));  // deregistered all the same
}

// The new version registers on top of the old one before the old one is deregistered, so a
// thread dispatching throughout sees 1, then 2, and never an error or a missing kernel.
TEST_F(PluginManagerTest, ReloadPicksUpARebuiltLibraryWhileAThreadDispatches) {
  TempDir dir;
  fs::path m = dir.copy_fixture("good_v1", "good");
  fs::path lib = dir.path() / "libopd_good.so";
  ASSERT_EQ(plugins().load(m.string()).state, PluginState::Loaded);
  auto value = Dispatcher::singleton()
                   .find_schema_or_throw("fixture::value", "")
                   .typed<int64_t(const Tensor&)>();

  std::atomic<bool> stop{false};
  std::atomic<int64_t> calls{0}, latest{0}, failures{0};
  std::mutex mu;
  std::vector<std::string> errors;
  std::thread caller([&] {
    Tensor x = cpu_tensor();
    int64_t seen = 0;
    while (!stop.load()) {
      try {
        int64_t v = value.call(x);
        if (v < seen || v < 1 || v > 2) {
          failures++;
          std::lock_guard lock(mu);
          errors.push_back(fmt::format("got {} after {}", v, seen));
        }
        seen = std::max(seen, v);
        latest.store(v);
      } catch (const std::exception& e) {
        failures++;
        std::lock_guard lock(mu);
        if (errors.size() < 5) errors.push_back(e.what());
      }
      calls++;
    }
  });
  auto wait_calls = [&](int64_t n) {
    int64_t target = calls.load() + n;
    while (calls.load() < target) std::this_thread::yield();
  };
  wait_calls(1000);
  EXPECT_EQ(latest.load(), 1);

  // Rebuild: a new file replaces the old at the same path, as a linker writes it, and the
  // manifest gets its digest.
  fs::path fresh = dir.copy(plugin_dir() / "good_v2" / "libopd_good_v2.so", "libopd_good.so.new");
  fs::rename(fresh, lib);
  std::string text = TempDir::read(m);
  text = replace_field(text, "sha256:", sha256_of_file(lib));
  TempDir::write(m, replace_field(text, "version:", "2.0.0"));

  PluginStatus s = plugins().reload("good");
  EXPECT_EQ(s.state, PluginState::Loaded) << s.reason;
  EXPECT_EQ(s.version, "2.0.0");
  EXPECT_EQ(s.registrations, 5u);
  wait_calls(1000);
  stop = true;
  caller.join();
  EXPECT_EQ(failures.load(), 0) << ::testing::PrintToString(errors);
  EXPECT_EQ(latest.load(), 2);
  EXPECT_EQ(value.call(cpu_tensor()), 2);

  EXPECT_EQ(plugins().unload("good").state, PluginState::Unloaded);
  EXPECT_EQ(mapped_lines(dir.path().string()), 0u);  // the first version, opened in place
  EXPECT_EQ(mapped_lines("libopd_good.so"), 0u);     // the second, opened from a private copy
}

TEST_F(PluginManagerTest, ReloadThatIsRefusedKeepsTheOldVersionServing) {
  TempDir dir;
  fs::path m = dir.copy_fixture("good_v1", "good");
  ASSERT_EQ(plugins().load(m.string()).state, PluginState::Loaded);
  TempDir::write(m, replace_field(TempDir::read(m), "sha256:", std::string(64, 'f')));

  try {
    plugins().reload("good");
    ADD_FAILURE() << "reloading with a wrong digest succeeded";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("sha256 mismatch"));
  }
  PluginStatus s = plugins().status("good");
  EXPECT_EQ(s.state, PluginState::Loaded);
  EXPECT_EQ(s.registrations, 5u);
  EXPECT_EQ(call_value("fixture::value"), 1);
  EXPECT_EQ(plugins().unload("good").state, PluginState::Unloaded);
}

// The digest of an unchanged library is reused across reloads (Note [Hash cache]); any write to
// the file makes it count again. Appending leaves the mapped pages of the loaded copy alone.
TEST_F(PluginManagerTest, ReloadRehashesALibraryWrittenSinceItsLastLoad) {
  TempDir dir;
  fs::path m = dir.copy_fixture("good_v1", "good");
  ASSERT_EQ(plugins().load(m.string()).state, PluginState::Loaded);
  EXPECT_EQ(plugins().reload("good").state, PluginState::Loaded);  // unchanged: digest reused
  const fs::path lib = dir.path() / "libopd_good.so";
  ASSERT_TRUE(fs::exists(lib));
  {
    std::ofstream out(lib, std::ios::binary | std::ios::app);
    out << "trailing bytes";
  }
  try {
    plugins().reload("good");
    ADD_FAILURE() << "reloading a library changed since its digest was taken succeeded";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("sha256 mismatch"));
  }
  EXPECT_EQ(plugins().status("good").state, PluginState::Loaded);
  EXPECT_EQ(plugins().unload("good").state, PluginState::Unloaded);
}

TEST_F(PluginManagerTest, ReloadRefusesAPluginThatIsNotLoaded) {
  try {
    plugins().reload("good");
    ADD_FAILURE() << "reloading an unloaded plugin succeeded";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.msg(), AllOf(HasSubstr("'good'"), HasSubstr("not loaded")));
  }
}

size_t count_fds() {
  size_t n = 0;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    while (::readdir(d)) ++n;
    ::closedir(d);
  }
  return n;
}

// Lines of /proc/self/maps; with `files_only`, those that map a file.
size_t count_maps(bool files_only) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  size_t n = 0;
  while (std::getline(maps, line)) n += !files_only || line.find(" /") != std::string::npos;
  return n;
}

size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

TEST_F(PluginManagerTest, ThousandLoadUnloadCyclesLeakNoMemoryDescriptorsOrMappings) {
  const std::string m = manifest("good_v1", "good");
  auto cycle = [&] {
    PluginStatus s = plugins().load(m);
    if (s.state != PluginState::Loaded) return s;
    return plugins().unload("good");
  };
  for (int i = 0; i < 20; ++i) ASSERT_EQ(cycle().state, PluginState::Unloaded);  // warm-up

  size_t fds = count_fds(), maps = count_maps(false), files = count_maps(true);
  size_t rss = resident_bytes();
  for (int i = 0; i < 1000; ++i) {
    PluginStatus s = cycle();
    ASSERT_EQ(s.state, PluginState::Unloaded) << "cycle " << i << ": " << s.reason;
  }
  RecordProperty("fds", fmt::format("{} -> {}", fds, count_fds()));
  RecordProperty("mappings", fmt::format("{} -> {}", maps, count_maps(false)));
  RecordProperty("file_mappings", fmt::format("{} -> {}", files, count_maps(true)));
  RecordProperty("resident_bytes", fmt::format("{} -> {}", rss, resident_bytes()));
  EXPECT_EQ(count_fds(), fds);
  EXPECT_EQ(count_maps(true), files);
  EXPECT_FALSE(is_mapped(plugin_dir() / "good_v1" / "libopd_good.so"));
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizers' allocators map regions of their own, AddressSanitizer's quarantine holds
  // freed memory back and ThreadSanitizer shadows each new mapping of the library: anonymous
  // mappings and RSS say nothing about leaks here.
  (void)maps;
  (void)rss;
#else
  EXPECT_LE(count_maps(false), maps);
  size_t now = resident_bytes();
  EXPECT_LE(now, rss + (1u << 20)) << "resident memory grew by " << (now - rss) << " bytes";
#endif
}

}  // namespace
}  // namespace opd

namespace opd {
namespace {

int64_t call_traced(bool with_tracer) {
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("fixture_fallback::traced", "")
                .typed<int64_t(const Tensor&)>();
  if (!with_tracer) return op.call(cpu_tensor());
  IncludeDispatchKeyGuard tracer(DispatchKey::Tracer);
  return op.call(cpu_tensor());
}

TEST_F(PluginManagerTest, ReloadReplacesBackendFallbacksToo) {
  PluginStatus s = plugins().load(manifest("fallback"));
  ASSERT_EQ(s.state, PluginState::Loaded) << s.reason;
  EXPECT_EQ(call_traced(false), 0);
  EXPECT_EQ(call_traced(true), 1);
  auto debug = Dispatcher::singleton().fallback_debug(DispatchKey::Tracer);
  ASSERT_TRUE(debug.has_value());
  EXPECT_THAT(*debug, ::testing::HasSubstr("(plugin fallback 1.0.0)"));

  s = plugins().reload("fallback");
  EXPECT_EQ(s.state, PluginState::Loaded) << s.reason;
  EXPECT_EQ(call_traced(true), 1);
  EXPECT_TRUE(Dispatcher::singleton().fallback_debug(DispatchKey::Tracer).has_value());
  Dispatcher::singleton().check_invariants();

  s = plugins().unload("fallback");
  EXPECT_EQ(s.state, PluginState::Unloaded) << s.reason;
  EXPECT_FALSE(Dispatcher::singleton().fallback_debug(DispatchKey::Tracer).has_value());
}

TEST_F(PluginManagerTest, AFallbackOfAnotherOwnerStillCollides) {
  Library host(Library::IMPL, "_", DispatchKey::Tracer);
  host.fallback(CppFunction::make_fallthrough());
  try {
    plugins().load(manifest("fallback"));
    FAIL() << "expected PluginError";
  } catch (const PluginError& e) {
    EXPECT_THAT(e.msg(), ::testing::HasSubstr(
                             "Tried to register multiple backend fallbacks for the same dispatch "
                             "key Tracer"));
  }
  EXPECT_EQ(plugins().status("fallback").state, PluginState::Failed);
  EXPECT_FALSE(Dispatcher::singleton().find_op(OperatorName{"fixture_fallback::traced", ""}));
}

}  // namespace
}  // namespace opd

// ---- Life cycle under hostile plugins: re-entrant loads, status during a load, undeclared
// keys, threads left running ---------------------------------------------------------------

namespace opd {
namespace {

TEST_F(PluginManagerTest, ReentrantLoadFromItsOwnRegistrationIsRefused) {
  fs::path lib = plugin_dir() / "reentrant" / "libopd_reentrant.so";
  std::string msg = load_error(manifest("reentrant"));
  EXPECT_THAT(msg, AllOf(HasSubstr(lib.string()), HasSubstr("registration failed"),
                         HasSubstr("plugin 'reentrant' is already being loaded (re-entrant load "
                                   "from its own registration)")));
  PluginStatus s = plugins().status("reentrant");
  EXPECT_EQ(s.state, PluginState::Failed);
  EXPECT_EQ(s.registrations, 0u);
  EXPECT_FALSE(find_op("reentrant::answer"));
  EXPECT_FALSE(is_mapped(lib));
}

// The registration blocks until another thread's status() and list() return: they must not
// wait for the load (which holds the life-cycle mutex), and they report the plugin `loading`.
TEST_F(PluginManagerTest, StatusAndListAnswerWhileALoadIsInProgressAndShowItLoading) {
  PluginStatus s = plugins().load(manifest("status_waiter"));
  ASSERT_EQ(s.state, PluginState::Loaded) << s.reason;
  EXPECT_EQ(call_value("status_waiter::observed"), 1);  // it saw `loading`, then we see `loaded`
  EXPECT_STREQ(to_string(PluginState::Loading), "loading");
  EXPECT_EQ(plugins().unload("status_waiter").state, PluginState::Unloaded);
}

TEST_F(PluginManagerTest, KernelOnAKeyTheManifestDoesNotDeclareFailsTheLoadNamingIt) {
  fs::path lib = plugin_dir() / "undeclared" / "libopd_undeclared.so";
  std::string msg = load_error(manifest("undeclared"));
  EXPECT_THAT(msg, AllOf(HasSubstr(lib.string()),
                         HasSubstr("plugin 'undeclared' registers a kernel for undeclared::answer "
                                   "on dispatch key Meta, which its manifest does not declare "
                                   "(dispatch_keys: [CPU])")));
  PluginStatus s = plugins().status("undeclared");
  EXPECT_EQ(s.state, PluginState::Failed);
  EXPECT_EQ(s.registrations, 0u);
  EXPECT_TRUE(s.served_keys.empty());
  EXPECT_FALSE(find_op("undeclared::answer"));  // its CPU kernel and def were undone
  EXPECT_FALSE(is_mapped(lib));
}

TEST_F(PluginManagerTest, StatusReportsTheKeysALoadedPluginServes) {
  PluginStatus s = plugins().load(manifest("good_v1", "good"));
  EXPECT_EQ(s.served_keys, std::vector<DispatchKey>{DispatchKey::CPU});
  EXPECT_EQ(plugins().unload("good").served_keys, std::vector<DispatchKey>{});

  s = plugins().load(manifest("fallback"));
  EXPECT_EQ(s.served_keys, (std::vector<DispatchKey>{DispatchKey::CPU, DispatchKey::Tracer}));
  bool listed = false;
  for (const PluginStatus& l : plugins().list()) {
    if (l.name != "fallback") continue;
    listed = true;
    EXPECT_EQ(l.served_keys, s.served_keys);
  }
  EXPECT_TRUE(listed);
  EXPECT_EQ(plugins().reload("fallback").served_keys, s.served_keys);
  plugins().unload("fallback");
}

// Note [Declared dispatch keys] in core/src/dispatch/registration_context.cpp.
TEST(DeclaredDispatchKeys, ABackendAllowsItsAutogradKeyAndAliasesMustBeNamed) {
  using K = DispatchKey;
  auto allows = [](std::vector<K> declared, K key) {
    return detail::declared_keys_allow(declared, key);
  };
  EXPECT_TRUE(allows({K::CPU}, K::CPU));
  EXPECT_TRUE(allows({K::CPU}, K::AutogradCPU));
  EXPECT_FALSE(allows({K::CPU}, K::Meta));
  EXPECT_FALSE(allows({K::CPU}, K::AutogradMeta));
  EXPECT_FALSE(allows({K::CPU}, K::CompositeImplicitAutograd));
  EXPECT_FALSE(allows({K::CPU}, K::CompositeExplicitAutograd));
  EXPECT_FALSE(allows({K::CPU}, K::Autograd));
  EXPECT_FALSE(allows({K::CPU}, K::Tracer));
  EXPECT_TRUE(allows({K::Autograd}, K::Autograd));
  EXPECT_TRUE(allows({K::Autograd}, K::AutogradCUDA));
  EXPECT_FALSE(allows({K::Autograd}, K::CUDA));
  EXPECT_FALSE(allows({K::CompositeImplicitAutograd}, K::CPU));
  EXPECT_TRUE(allows({K::CompositeImplicitAutograd}, K::CompositeImplicitAutograd));
  EXPECT_FALSE(allows({K::CompositeImplicitAutograd}, K::CompositeExplicitAutograd));
  EXPECT_TRUE(allows({K::Dense}, K::PrivateUse1));
  EXPECT_FALSE(allows({}, K::CPU));
}

// Defined last: its thread runs until the process exits. The library can never be unmapped, so
// it stays resident, saying why; the host goes on (and exits cleanly with the thread running).
TEST_F(PluginManagerTest, ThreadLeftRunningAtUnloadKeepsTheLibraryResident) {
  fs::path lib = plugin_dir() / "rogue_thread" / "libopd_rogue_thread.so";
  ASSERT_EQ(plugins().load(manifest("rogue_thread")).state, PluginState::Loaded);
  while (call_value("rogue_thread::ticks") == 0) std::this_thread::yield();  // it runs
  PluginStatus s = plugins().unload("rogue_thread");
  EXPECT_EQ(s.state, PluginState::Resident) << s.reason;
  EXPECT_THAT(s.reason, AllOf(HasSubstr("1 thread(s) started while it was mapped were left "
                                        "running"),
                              HasSubstr("the library stays mapped")));
  EXPECT_EQ(s.registrations, 0u);
  EXPECT_FALSE(find_op("rogue_thread::ticks"));
  EXPECT_TRUE(is_mapped(lib));
  EXPECT_EQ(plugins().status("rogue_thread").state, PluginState::Resident);
}

}  // namespace
}  // namespace opd
