// Device guards (opd/device_guard.h, Note [Device guards]): the registry of a backend's current
// device, ensure_has_index, DeviceGuard, Library::device_guard's checks, and a guard registered
// and dropped while other threads resolve devices. The acme fixture's guard, registered from a
// plugin, is tested through the Python package (tests/python/test_utils.py).

#include "opd/device_guard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "opd/error.h"
#include "opd/library.h"
#include "opd/warning.h"

namespace opd {
namespace {

using ::testing::HasSubstr;

const Device kAny(DeviceType::PrivateUse1);  // no index: the current one

// Three devices, a current one per thread; counts its live instances.
std::atomic<int> live_guards{0};
thread_local int8_t current = 0;
struct TestGuard final : DeviceGuardImpl {
  TestGuard() { live_guards.fetch_add(1); }
  ~TestGuard() override { live_guards.fetch_sub(1); }
  int8_t current_device() const override { return current; }
  void set_device(int8_t index) const override {
    OPD_CHECK_T(IndexError, index >= 0 && index < 3, "no device {}", static_cast<int>(index));
    current = index;
  }
  int8_t device_count() const noexcept override { return 3; }
};

Library privateuse1_library() { return Library(Library::IMPL, "_", DispatchKey::PrivateUse1); }

TEST(DeviceGuard, WithoutAGuardADeviceKeepsItsMissingIndex) {
  EXPECT_EQ(device_guard_impl(DeviceType::CPU), nullptr);
  EXPECT_EQ(device_guard_impl(DeviceType::Meta), nullptr);
  EXPECT_EQ(device_guard_impl(DeviceType::PrivateUse1), nullptr);
  EXPECT_EQ(ensure_has_index(Device(DeviceType::CPU)), Device(DeviceType::CPU));
  EXPECT_EQ(ensure_has_index(kAny), kAny);
  { DeviceGuard g(Device(DeviceType::PrivateUse1, 2)); }  // nothing to set: no error
}

TEST(DeviceGuard, ARegisteredGuardResolvesTheCurrentDevice) {
  Library m = privateuse1_library();
  m.device_guard(std::make_shared<TestGuard>());
  ASSERT_NE(device_guard_impl(DeviceType::PrivateUse1), nullptr);
  EXPECT_EQ(ensure_has_index(kAny), Device(DeviceType::PrivateUse1, 0));
  device_guard_impl(DeviceType::PrivateUse1)->set_device(2);
  EXPECT_EQ(ensure_has_index(kAny), Device(DeviceType::PrivateUse1, 2));
  // An index given is kept; other types are not the guard's.
  EXPECT_EQ(ensure_has_index(Device(DeviceType::PrivateUse1, 1)),
            Device(DeviceType::PrivateUse1, 1));
  EXPECT_EQ(ensure_has_index(Device(DeviceType::CUDA)), Device(DeviceType::CUDA));
  current = 0;
}

TEST(DeviceGuard, SetsTheDeviceForItsScopeAndRestoresIt) {
  Library m = privateuse1_library();
  m.device_guard(std::make_shared<TestGuard>());
  {
    DeviceGuard outer(Device(DeviceType::PrivateUse1, 1));
    EXPECT_EQ(current, 1);
    {
      DeviceGuard inner(Device(DeviceType::PrivateUse1, 2));
      EXPECT_EQ(current, 2);
      DeviceGuard none(kAny);  // no index: leaves the current device
      EXPECT_EQ(current, 2);
    }
    EXPECT_EQ(current, 1);
  }
  EXPECT_EQ(current, 0);
  // A device the backend has not: the guard's error, and the current device unchanged.
  EXPECT_THROW(DeviceGuard(Device(DeviceType::PrivateUse1, 5)), IndexError);
  EXPECT_EQ(current, 0);
}

TEST(DeviceGuard, TheCurrentDeviceIsPerThread) {
  Library m = privateuse1_library();
  m.device_guard(std::make_shared<TestGuard>());
  DeviceGuard g(Device(DeviceType::PrivateUse1, 2));
  int8_t seen = -1;
  std::thread([&] { seen = ensure_has_index(kAny).index; }).join();
  EXPECT_EQ(seen, 0);
  EXPECT_EQ(ensure_has_index(kAny).index, 2);
}

TEST(DeviceGuard, ASecondGuardForABackendIsRefusedNamingTheFirst) {
  Library m = privateuse1_library();
  m.device_guard(std::make_shared<TestGuard>());
  Library other = privateuse1_library();
  try {
    other.device_guard(std::make_shared<TestGuard>());
    FAIL() << "a second guard was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("register_device_guard: privateuseone already has a device "
                          "guard (registered at tests/core/dispatch/device_guard_test.cpp:"));
    EXPECT_THAT(e.what(), HasSubstr("); the second is registered at "
                                    "tests/core/dispatch/device_guard_test.cpp:"));
  }
  EXPECT_EQ(other.registration_count(), 0u);
  EXPECT_NE(device_guard_impl(DeviceType::PrivateUse1), nullptr);
}

TEST(DeviceGuard, OnlyABackendWithDevicesTakesAGuard) {
  Library cpu(Library::IMPL, "_", DispatchKey::CPU);
  try {
    cpu.device_guard(std::make_shared<TestGuard>());
    FAIL() << "a CPU guard was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("device_guard(...): CPU has no devices to guard (only CUDA "
                                    "and the vendor slots PrivateUse1..3 have several)"));
  }
  Library ops(Library::IMPL, "aten", DispatchKey::PrivateUse1);
  try {
    ops.device_guard(std::make_shared<TestGuard>());
    FAIL() << "a guard in an operator library was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("device_guard(...): a device guard belongs to a backend, in "
                                    "an OPD_LIBRARY_IMPL(_, <backend>, m) block"));
  }
  Library m = privateuse1_library();
  EXPECT_THROW(m.device_guard(nullptr), Error);
  EXPECT_EQ(device_guard_impl(DeviceType::PrivateUse1), nullptr);
}

TEST(DeviceGuard, UndoingTheRegistrationDropsTheGuardOnceItsLastHolderGoes) {
  const int before = live_guards.load();
  Library m = privateuse1_library();
  m.device_guard(std::make_shared<TestGuard>());
  EXPECT_EQ(live_guards.load(), before + 1);
  {
    DeviceGuard held(Device(DeviceType::PrivateUse1, 1));  // holds the guard
    m.reset();
    EXPECT_EQ(device_guard_impl(DeviceType::PrivateUse1), nullptr);
    EXPECT_EQ(ensure_has_index(kAny), kAny);
    EXPECT_EQ(live_guards.load(), before + 1);
  }
  EXPECT_EQ(current, 0);  // restored through the guard it held
  EXPECT_EQ(live_guards.load(), before);
  // The backend may register a guard again.
  m = privateuse1_library();
  m.device_guard(std::make_shared<TestGuard>());
  EXPECT_NE(device_guard_impl(DeviceType::PrivateUse1), nullptr);
}

// A guard whose restore fails: DeviceGuard's destructor must not throw. The default
// unchecked_set_device reports set_device's error as a warning.
std::vector<std::string> warnings;
void record_warning(std::string_view message) { warnings.emplace_back(message); }
struct FlakyGuard final : DeviceGuardImpl {
  mutable bool broken = false;
  int8_t current_device() const override { return current; }
  void set_device(int8_t index) const override {
    OPD_CHECK(!broken, "the device is gone");
    current = index;
  }
  int8_t device_count() const noexcept override { return 3; }
};

TEST(DeviceGuard, AFailedRestoreIsAWarningNotAnException) {
  Library m = privateuse1_library();
  auto flaky = std::make_shared<FlakyGuard>();
  m.device_guard(flaky);
  WarningHandler previous = set_warning_handler(&record_warning);
  {
    DeviceGuard g(Device(DeviceType::PrivateUse1, 1));
    EXPECT_EQ(current, 1);
    flaky->broken = true;
  }  // the restore to 0 fails
  set_warning_handler(previous);
  EXPECT_EQ(current, 1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("DeviceGuard could not restore the current device: the "
                                     "device is gone"));
  current = 0;
}

// Threads resolve devices and scope guards while another registers and drops the guard: each
// sees a guard or none, never a dangling one (TSan and ASan run this).
TEST(DeviceGuardConcurrency, RegisteringAndDroppingWhileOthersResolve) {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> resolved{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        const Device d = ensure_has_index(kAny);
        EXPECT_TRUE(d.index == -1 || d.index == 0) << static_cast<int>(d.index);
        DeviceGuard g(Device(DeviceType::PrivateUse1, 1));
        resolved.fetch_add(1);
      }
    });
  }
  // Until the readers have resolved a few thousand times across the writer's changes, however
  // slowly they start on a loaded machine.
  for (int i = 0; i < 500 || resolved.load() < 3000; ++i) {
    Library m = privateuse1_library();
    m.device_guard(std::make_shared<TestGuard>());
  }
  stop.store(true);
  for (auto& r : readers) r.join();
  EXPECT_GT(resolved.load(), 0);
  EXPECT_EQ(device_guard_impl(DeviceType::PrivateUse1), nullptr);
}

}  // namespace
}  // namespace opd
