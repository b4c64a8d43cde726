// Loads the vendor plugin and calls acme::axpy through the dispatcher. Exit 0 on success.

#include <cstdio>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/plugin_manager.h"
#include "opd/tensor.h"

int main() {
  opd::PluginStatus s = opd::plugins().load(ACME_MANIFEST);
  std::printf("plugin %s %s: %s\n", s.name.c_str(), s.version.c_str(), opd::to_string(s.state));
  auto axpy = opd::Dispatcher::singleton()
                  .find_schema_or_throw("acme::axpy", "")
                  .typed<opd::Tensor(double, const opd::Tensor&, const opd::Tensor&)>();
  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30};
  opd::Tensor out = axpy.call(2.0, opd::from_blob(x.data(), {3}, opd::ScalarType::Float32),
                              opd::from_blob(y.data(), {3}, opd::ScalarType::Float32));
  const float* o = out.data_ptr<float>();
  std::printf("acme::axpy(2, [1, 2, 3], [10, 20, 30]) = [%g, %g, %g]\n", o[0], o[1], o[2]);
  bool ok = o[0] == 12 && o[1] == 24 && o[2] == 36;
  out = opd::Tensor();
  s = opd::plugins().unload("acme");
  std::printf("after unload: %s\n", opd::to_string(s.state));
  return ok && s.state == opd::PluginState::Unloaded ? 0 : 1;
}
