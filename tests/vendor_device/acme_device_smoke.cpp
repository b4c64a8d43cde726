// A host program built against the installed package: loads the default plugins and the acme
// device, moves a tensor there and back, runs a native operator (add) and one through the CPU
// fallback (sum), and unloads the device once its tensors are gone. Exit 0 when every check
// passes.

#include <cstdio>

#include "opd/opd.h"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  failures += !ok;
}

}  // namespace

int main() {
  opd::plugins().load_default();
  opd::PluginStatus s = opd::plugins().load(ACME_DEVICE_MANIFEST);
  check(s.state == opd::PluginState::Loaded, "the device loads");
  if (s.state != opd::PluginState::Loaded) {
    std::printf("%s\n", s.reason.c_str());
    return 1;
  }
  check(opd::privateuse1_backend_name() == "acme", "the device names PrivateUse1 acme");
  {
    const opd::Device acme("acme:0");
    const opd::Device cpu(opd::DeviceType::CPU);
    opd::Tensor x = opd::arange(0, 6, 1, opd::TensorOptions().dtype(opd::ScalarType::Float32));
    opd::Tensor a = x.to(acme, x.scalar_type());
    check(a.device() == acme, "x.to(acme) is on acme");
    check(opd::equal(a.to(cpu, a.scalar_type()), x), "and comes back with its values");
    opd::Tensor b = a + a;
    check(b.device() == acme && opd::equal(b.to(cpu, b.scalar_type()), x * 2), "native add");
    opd::Tensor c = opd::sum(a);
    check(c.device() == acme && c.item<double>() == 15.0, "sum through the CPU fallback");
  }
  s = opd::plugins().unload("acme_device");
  std::printf("after unload: %s\n", opd::to_string(s.state));
  check(s.state == opd::PluginState::Unloaded, "the device unloads");
  return failures == 0 ? 0 : 1;
}
