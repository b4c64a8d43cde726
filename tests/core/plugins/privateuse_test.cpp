// The vendor slots (Note [Vendor slots] in opd/privateuse.h): the acme device built twice
// (tests/vendor_device/acme_device.cpp as plugins acme_device, device "acme", and acme_device2,
// device "acmetwo"), each claiming a free slot at load, and the fixtures slot_claim (claims
// "acme") and slot_undeclared (a manifest without a vendor slot). The tests run in order: the
// last one names slots for the process, for good.

#include "opd/privateuse.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "error_text.h"
#include "opd/device_guard.h"
#include "opd/dispatcher.h"
#include "opd/ops.h"
#include "opd/plugin_manager.h"
#include "plugins/fixtures.h"

namespace opd {
namespace {

using fixtures::load_error;
using fixtures::manifest;
using fixtures::wait_for_state;
using test_util::error_text;

const Device kCpu(DeviceType::CPU);

int64_t counter(const std::string& plugin, const char* name) {
  return find_operator_or_throw(plugin + "::" + name).call_as<int64_t>();
}
Tensor to(const Tensor& t, const Device& d) { return t.to(d, t.scalar_type()); }
Tensor iota(int64_t n) {
  return arange(0, n, 1, TensorOptions().dtype(ScalarType::Float32)).reshape({2, n / 2});
}

// Loads the device `plugin` named `name`; returns the slot it claimed.
DeviceType load_device(const std::string& plugin, const char* name) {
  PluginStatus s = plugins().load(manifest(plugin));
  EXPECT_EQ(s.state, PluginState::Loaded) << s.reason;
  return privateuse_slot_named(name).value_or(DeviceType::CPU);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Unloads and waits for the library's last reference (its slot's hold) to go.
void unload_device(const std::string& plugin) {
  plugins().unload(plugin);
  EXPECT_EQ(wait_for_state(plugin, PluginState::Unloaded).state, PluginState::Unloaded);
}

class PrivateUseSlots : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { plugins().load_default(); }
};

TEST_F(PrivateUseSlots, TwoDevicesAtOnceMoveTensorsThroughTheCpu) {
  EXPECT_EQ(load_device("acme_device", "acme"), DeviceType::PrivateUse1);
  EXPECT_EQ(load_device("acme_device2", "acmetwo"), DeviceType::PrivateUse2);
  EXPECT_EQ(privateuse_slot_holder(DeviceType::PrivateUse1), "plugin 'acme_device'");
  EXPECT_EQ(privateuse_slot_holder(DeviceType::PrivateUse2), "plugin 'acme_device2'");
  EXPECT_EQ(privateuse_slot_holder(DeviceType::PrivateUse3), "");
  EXPECT_EQ(privateuse_backend_name(DeviceType::PrivateUse2), "acmetwo");
  EXPECT_EQ(display_name(DispatchKey::AutogradPrivateUse2), "AutogradACMETWO");
  EXPECT_EQ(Device("acmetwo:1").type, DeviceType::PrivateUse2);
  // Each device registered its kernels, fallback and guard on its own slot.
  EXPECT_TRUE(Dispatcher::singleton().fallback_debug(DispatchKey::PrivateUse2).has_value());
  EXPECT_NE(device_guard_impl(DeviceType::PrivateUse2), nullptr);

  const int64_t acme_before = counter("acme_device", "allocations");
  const int64_t two_before = counter("acme_device2", "allocations");
  Tensor x = iota(6);
  Tensor a = to(x, Device("acme"));
  EXPECT_EQ(a.device().str(), "acme:0");
  Tensor b = to(to(a + a, kCpu), Device("acmetwo:1"));
  EXPECT_EQ(b.device().str(), "acmetwo:1");
  Tensor back = to(to(b * b, kCpu), Device("acme:0"));
  EXPECT_TRUE(equal(to(back, kCpu), (x * 2) * (x * 2)));
  // acme: a, a + a, back; acmetwo: b, b * b. Each device counts its own.
  EXPECT_EQ(counter("acme_device", "allocations") - acme_before, 3);
  EXPECT_EQ(counter("acme_device2", "allocations") - two_before, 2);
  EXPECT_EQ(counter("acme_device2", "live_blocks"), 1);  // b (b * b is gone)
  // Not from one device to the other directly: acmetwo's copy_ reads CPU or acmetwo memory.
  EXPECT_EQ(error_text<Error>([&] { to(a, Device("acmetwo")); }),
            "acmetwo: expected an acmetwo or CPU tensor, got acme:0");
}

TEST_F(PrivateUseSlots, UnloadingInEitherOrderFreesTheSlots) {
  unload_device("acme_device");
  EXPECT_EQ(privateuse_slot_holder(DeviceType::PrivateUse1), "");
  EXPECT_EQ(privateuse_backend_name(DeviceType::PrivateUse1), "privateuseone");
  EXPECT_THROW(Device("acme"), Error);
  EXPECT_EQ(Device("acmetwo").type, DeviceType::PrivateUse2);
  unload_device("acme_device2");
  EXPECT_EQ(privateuse_backend_name(DeviceType::PrivateUse2), "privateusetwo");
  // The other order, and the slots taken the other way round: one binary serves any slot.
  EXPECT_EQ(load_device("acme_device2", "acmetwo"), DeviceType::PrivateUse1);
  EXPECT_EQ(load_device("acme_device", "acme"), DeviceType::PrivateUse2);
  EXPECT_TRUE(
      equal(to(to(iota(4), Device("acme")) + to(iota(4), Device("acme")), kCpu), iota(4) * 2));
  unload_device("acme_device2");
  EXPECT_EQ(Device("acme").type, DeviceType::PrivateUse2);
  unload_device("acme_device");
  EXPECT_EQ(privateuse_slot_holder(DeviceType::PrivateUse2), "");
}

TEST_F(PrivateUseSlots, TheNameStaysWhileTheDevicesTensorsLive) {
  EXPECT_EQ(load_device("acme_device", "acme"), DeviceType::PrivateUse1);
  Tensor a = to(iota(4), Device("acme"));
  plugins().unload("acme_device");
  // Unloaded, but a's storage keeps the library: the name and the slot stay.
  EXPECT_EQ(a.device().str(), "acme:0");
  EXPECT_EQ(privateuse_slot_holder(DeviceType::PrivateUse1), "plugin 'acme_device'");
  std::string refused = load_error(manifest("slot_claim"));
  EXPECT_TRUE(contains(refused,
                       "register_privateuse_backend: plugin 'slot_claim' cannot claim "
                       "the vendor backend name 'acme': plugin 'acme_device' holds it "
                       "on PrivateUse1"))
      << refused;
  // The same plugin loaded again gets its slot back, and serves the tensor it left.
  EXPECT_EQ(load_device("acme_device", "acme"), DeviceType::PrivateUse1);
  EXPECT_TRUE(equal(to(a + a, kCpu), iota(4) * 2));
  plugins().unload("acme_device");
  a = Tensor();
  // Both loads shared one mapping; it goes with a (Note [Loads sharing a mapping]).
  PluginStatus gone = wait_for_state("acme_device", PluginState::Unloaded);
  EXPECT_EQ(gone.state, PluginState::Unloaded) << to_string(gone.state) << ": " << gone.reason;
  EXPECT_FALSE(
      fixtures::is_mapped(fixtures::plugin_dir() / "acme_device" / "libopd_acme_device.so"));
  EXPECT_EQ(privateuse_backend_name(DeviceType::PrivateUse1), "privateuseone");
  // Free again: another plugin may take the name, and then acme cannot.
  EXPECT_EQ(plugins().load(manifest("slot_claim")).state, PluginState::Loaded);
  EXPECT_EQ(privateuse_slot_holder(DeviceType::PrivateUse1), "plugin 'slot_claim'");
  refused = load_error(manifest("acme_device"));
  EXPECT_TRUE(contains(refused,
                       "plugin 'acme_device' cannot claim the vendor backend name "
                       "'acme': plugin 'slot_claim' holds it on PrivateUse1"))
      << refused;
  EXPECT_EQ(privateuse_slot_holder(DeviceType::PrivateUse2), "");  // the failed load's is gone
  unload_device("slot_claim");
}

// A reload registers the new version (a private copy of the library) before the old one goes:
// the plugin claims its name again and keeps its slot, and its device guard replaces the old
// version's (Note [Device guards]).
TEST_F(PrivateUseSlots, AReloadKeepsTheSlot) {
  EXPECT_EQ(load_device("slot_claim", "acme"), DeviceType::PrivateUse1);
  EXPECT_EQ(load_device("acme_device2", "acmetwo"), DeviceType::PrivateUse2);
  const DeviceGuardImpl* old_guard = device_guard_impl(DeviceType::PrivateUse2).get();
  ASSERT_NE(old_guard, nullptr);
  ASSERT_EQ(plugins().reload("acme_device2").state, PluginState::Loaded);
  EXPECT_EQ(privateuse_slot_named("acmetwo"), DeviceType::PrivateUse2);
  EXPECT_EQ(privateuse_slot_holder(DeviceType::PrivateUse2), "plugin 'acme_device2'");
  const DeviceGuardImpl* new_guard = device_guard_impl(DeviceType::PrivateUse2).get();
  ASSERT_NE(new_guard, nullptr);
  EXPECT_NE(new_guard, old_guard);  // the old version's went with its registrations
  EXPECT_EQ(ensure_has_index(Device(DeviceType::PrivateUse2)), Device(DeviceType::PrivateUse2, 0));
  ASSERT_EQ(plugins().reload("slot_claim").state, PluginState::Loaded);
  EXPECT_EQ(privateuse_slot_holder(DeviceType::PrivateUse1), "plugin 'slot_claim'");
  unload_device("acme_device2");
  EXPECT_EQ(privateuse_slot_holder(DeviceType::PrivateUse2), "");
  unload_device("slot_claim");
}

TEST_F(PrivateUseSlots, AManifestDeclaresTheSlotsAPluginMayClaim) {
  const std::string refused = load_error(manifest("slot_undeclared"));
  EXPECT_TRUE(contains(refused,
                       "register_privateuse_backend: plugin 'slot_undeclared' claims a "
                       "vendor slot as 'undeclared', but its manifest declares none; "
                       "add PrivateUse (any free slot) or PrivateUse1..3 to "
                       "dispatch_keys"))
      << refused;
  EXPECT_FALSE(privateuse_slot_named("undeclared").has_value());
}

TEST_F(PrivateUseSlots, NamesAreDeviceStrings) {
  EXPECT_EQ(error_text<ValueError>([] { register_privateuse_backend("acme2"); }),
            "register_privateuse_backend: 'acme2' cannot name a device: a device's name is "
            "letters and underscores ('acme2:0' must be a device string)");
  EXPECT_EQ(error_text<ValueError>([] { register_privateuse_backend("cuda"); }),
            "register_privateuse_backend: 'cuda' is a built-in device (built-in devices: cpu, "
            "cuda, meta)");
  EXPECT_EQ(error_text<ValueError>([] { register_privateuse_backend("privateusetwo"); }),
            "register_privateuse_backend: 'privateusetwo' is the unnamed PrivateUse2 slot's own "
            "name");
  EXPECT_THROW(register_privateuse_backend("x", DeviceType::CUDA), ValueError);
}

// A thread loads and unloads acmetwo, using it each time, while others compute on acme.
TEST_F(PrivateUseSlots, LoadingOneDeviceWhileAnotherComputes) {
  ASSERT_EQ(load_device("acme_device", "acme"), DeviceType::PrivateUse1);
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 3; ++t) {
    workers.emplace_back([&] {
      const Tensor x = iota(6);
      while (!done.load()) {
        Tensor a = to(x, Device("acme"));
        if (!equal(to(a * a + a, kCpu), x * x + x)) wrong.fetch_add(1);
      }
    });
  }
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(load_device("acme_device2", "acmetwo"), DeviceType::PrivateUse2);
    Tensor b = to(iota(4), Device("acmetwo"));
    EXPECT_TRUE(equal(to(b + b, kCpu), iota(4) * 2));
    plugins().unload("acme_device2");
  }
  done = true;
  for (auto& w : workers) w.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(wait_for_state("acme_device2", PluginState::Unloaded).state, PluginState::Unloaded);
  EXPECT_EQ(privateuse_slot_holder(DeviceType::PrivateUse2), "");
  unload_device("acme_device");
}

// Last: the process's claims are for good.
TEST_F(PrivateUseSlots, TheProcessClaimsOutsideAPluginLoad) {
  ASSERT_EQ(load_device("acme_device", "acme"), DeviceType::PrivateUse1);
  EXPECT_EQ(error_text<PluginError>([] { register_privateuse_backend("acme"); }),
            "register_privateuse_backend: the process cannot claim the vendor backend name "
            "'acme': plugin 'acme_device' holds it on PrivateUse1");
  EXPECT_EQ(register_privateuse_backend("npu"), DeviceType::PrivateUse2);
  EXPECT_EQ(register_privateuse_backend("npu"), DeviceType::PrivateUse2);  // again: its own
  EXPECT_EQ(
      error_text<PluginError>([] { register_privateuse_backend("xpu", DeviceType::PrivateUse1); }),
      "register_privateuse_backend: the process cannot claim PrivateUse1 as 'xpu': plugin "
      "'acme_device' holds it as 'acme'");
  EXPECT_EQ(register_privateuse_backend("xpu", DeviceType::PrivateUse3), DeviceType::PrivateUse3);
  EXPECT_EQ(error_text<PluginError>([] { register_privateuse_backend("hpu"); }),
            "register_privateuse_backend: no free vendor slot for 'hpu' (the process): "
            "PrivateUse1 is 'acme', held by plugin 'acme_device'; PrivateUse2 is 'npu', held by "
            "the process; PrivateUse3 is 'xpu', held by the process");
  // register_privateuse1_backend keeps its rules over the claims.
  EXPECT_NO_THROW(register_privateuse1_backend("acme"));
  EXPECT_EQ(error_text<ValueError>([] { register_privateuse1_backend("npu"); }),
            "register_privateuse1_backend: the PrivateUse1 backend is already named 'acme'; it "
            "cannot be renamed to 'npu'");
  unload_device("acme_device");
  EXPECT_EQ(privateuse_slot_holder(DeviceType::PrivateUse1), "");
  EXPECT_EQ(privateuse_backend_name(DeviceType::PrivateUse2), "npu");
}

}  // namespace
}  // namespace opd
