// Per-plugin thread state in the core's static TLS (opd/plugin_thread_state.h).

#include "opd/plugin_thread_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "opd/error.h"

namespace opd {
namespace {

struct Counters {
  uint64_t calls;
  const void* current;
};

TEST(PluginThreadState, ANameKeepsItsSlotAndTwoNamesGetTwo) {
  PluginThreadState<Counters> a("test_a");
  PluginThreadState<Counters> a_again("test_a");  // as a reloaded plugin claims it
  PluginThreadState<Counters> b("test_b");
  EXPECT_EQ(a.slot(), a_again.slot());
  EXPECT_NE(a.slot(), b.slot());
  a.get().calls = 7;
  EXPECT_EQ(a_again.get().calls, 7u) << "a reload finds what its previous load left";
  EXPECT_EQ(b.get().calls, 0u) << "another plugin's slot is its own";
  EXPECT_EQ(&a.get(), &a_again.get());
}

TEST(PluginThreadState, DeclaredAtNamespaceScopeAndClaimedAtLoad) {
  static constinit PluginThreadState<Counters> declared;  // as a plugin declares it
  EXPECT_EQ(declared.slot(), -1);
  declared.claim("test_a");  // as its OPD_PLUGIN block claims it
  EXPECT_EQ(declared.slot(), PluginThreadState<Counters>("test_a").slot());
}

TEST(PluginThreadState, EachThreadHasItsOwnZeroedState) {
  PluginThreadState<Counters> s("test_threads");
  s.get().calls = 41;
  int marker = 0;
  s.get().current = &marker;
  uint64_t seen_calls = 1;
  const void* seen_current = &seen_calls;
  const Counters* other_address = nullptr;
  std::thread t([&] {
    seen_calls = s.get().calls;
    seen_current = s.get().current;
    s.get().calls = 99;
    other_address = &s.get();
  });
  t.join();
  EXPECT_EQ(seen_calls, 0u) << "a new thread's slot is zero";
  EXPECT_EQ(seen_current, nullptr);
  EXPECT_NE(other_address, &s.get());
  EXPECT_EQ(s.get().calls, 41u) << "the other thread wrote its own state";
}

TEST(PluginThreadState, RunningOutOfSlotsNamesTheHolders) {
  PluginThreadState<Counters> first("test_a");
  std::vector<PluginThreadState<Counters>> held;
  std::string message;
  for (int i = 0; i <= kPluginThreadStateSlots; ++i) {
    try {
      held.emplace_back("test_many_" + std::to_string(i));
    } catch (const Error& e) {
      message = e.msg();
      break;
    }
  }
  ASSERT_FALSE(message.empty()) << "more names than slots must be refused";
  EXPECT_THAT(message, ::testing::StartsWith("no per-thread state slot left for 'test_many_"));
  EXPECT_THAT(message, ::testing::HasSubstr("all 4 are held ("));
  EXPECT_THAT(message, ::testing::HasSubstr("test_a"));
  // A name that holds a slot still gets it.
  EXPECT_NO_THROW(PluginThreadState<Counters>("test_a"));
}

TEST(PluginThreadState, AnEmptyNameIsRefused) {
  EXPECT_THROW(PluginThreadState<Counters>(""), Error);
}

}  // namespace
}  // namespace opd
