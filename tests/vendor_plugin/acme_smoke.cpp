// A host program built against the installed package: loads the default plugins and the vendor
// plugin, calls the vendor's operators through their generated typed API (acme/ops.h), on CPU
// and Meta tensors, and checks the gradients of acme::scale (from acme_derivatives.yaml),
// acme::axpy (the same) and acme::softsign (a Function) against central differences.
// Exit 0 when every check passes.

#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "acme/ops.h"
#include "opd/opd.h"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  failures += !ok;
}

opd::Tensor input(std::vector<double> values) {
  opd::Tensor t = opd::empty({static_cast<int64_t>(values.size())},
                             opd::TensorOptions().dtype(opd::ScalarType::Float64));
  for (size_t i = 0; i < values.size(); ++i) t.data_ptr<double>()[i] = values[i];
  return t;
}

// d sum(w * f(inputs)) / d inputs[i] from backward, against central differences in float64.
bool gradients_match(const std::function<opd::Tensor(const std::vector<opd::Tensor>&)>& f,
                     std::vector<opd::Tensor> inputs) {
  const opd::Tensor w = input({0.5, -1.5, 2.0});
  auto loss = [&](const std::vector<opd::Tensor>& in) { return opd::sum(f(in) * w); };
  for (opd::Tensor& x : inputs) x.requires_grad_(true);
  loss(inputs).backward();
  const double eps = 1e-6;
  bool ok = true;
  for (size_t i = 0; i < inputs.size(); ++i) {
    opd::Tensor grad = inputs[i].grad();
    if (!grad.defined()) return false;
    for (int64_t k = 0; k < inputs[i].numel(); ++k) {
      opd::NoGradGuard no_grad;
      std::vector<opd::Tensor> plus, minus;
      for (const opd::Tensor& x : inputs) {
        plus.push_back(x.detach().clone());
        minus.push_back(x.detach().clone());
      }
      plus[i].data_ptr<double>()[k] += eps;
      minus[i].data_ptr<double>()[k] -= eps;
      const double numeric = (loss(plus).item<double>() - loss(minus).item<double>()) / (2 * eps);
      const double analytic = grad.data_ptr<double>()[k];
      if (std::abs(numeric - analytic) > 1e-6 + 1e-4 * std::abs(numeric)) {
        std::printf("  input %zu element %lld: backward %g, finite differences %g\n", i,
                    static_cast<long long>(k), analytic, numeric);
        ok = false;
      }
    }
  }
  return ok;
}

}  // namespace

int main() {
  opd::plugins().load_default();
  opd::PluginStatus s = opd::plugins().load(ACME_MANIFEST);
  std::printf("plugin %s %s: %s\n", s.name.c_str(), s.version.c_str(), opd::to_string(s.state));

  std::vector<float> x = {1, 2, 3}, y = {10, 20, 30};
  {
    opd::Tensor out = acme::axpy(2.0, opd::from_blob(x.data(), {3}, opd::ScalarType::Float32),
                                 opd::from_blob(y.data(), {3}, opd::ScalarType::Float32));
    const float* o = out.data_ptr<float>();
    std::printf("acme::axpy(2, [1, 2, 3], [10, 20, 30]) = [%g, %g, %g]\n", o[0], o[1], o[2]);
    check(o[0] == 12 && o[1] == 24 && o[2] == 36, "acme::axpy on the CPU");
    opd::Tensor scaled = acme::scale(opd::from_blob(x.data(), {3}, opd::ScalarType::Float32));
    check(scaled.data_ptr<float>()[2] == 3, "acme::scale's default alpha (1) from the YAML");
    opd::Tensor meta = acme::scale(opd::empty({2, 5}, opd::TensorOptions().device("meta")), 3.0);
    check(meta.device().type == opd::DeviceType::Meta && meta.size(0) == 2 && meta.size(1) == 5,
          "acme::scale on a Meta tensor (its Meta kernel): shape (2, 5)");
  }
  check(
      gradients_match([](const auto& in) { return acme::scale(in[0], 2.5); }, {input({1, -2, 3})}),
      "acme::scale's gradient (derivatives YAML) matches finite differences");
  check(gradients_match([](const auto& in) { return acme::axpy(-0.5, in[0], in[1]); },
                        {input({1, -2, 3}), input({0.25, 4, -1})}),
        "acme::axpy's gradients, both inputs (derivatives YAML), match finite differences");
  check(
      gradients_match([](const auto& in) { return acme::softsign(in[0]); }, {input({0.5, -2, 3})}),
      "acme::softsign's gradient (a Function) matches finite differences");

  check(opd::find_operator_or_throw("acme::softsign").has_tag(opd::Tag::pointwise),
        "acme::softsign has the tag its YAML gives (pointwise)");

  s = opd::plugins().unload("acme");
  std::printf("after unload: %s\n", opd::to_string(s.state));
  check(s.state == opd::PluginState::Unloaded, "the plugin unloads");
  return failures == 0 ? 0 : 1;
}
