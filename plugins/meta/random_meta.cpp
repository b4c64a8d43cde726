// Meta kernels of the in-place random fills: PyTorch 1.13's argument and dtype checks
// (common/random_checks.h, shared with the CPU kernels) and the CPU kernels' refusal of an
// expanded self, nothing drawn, `self` returned. No
// numbers are reserved, so the CPU generators' sequences are unaffected.

#include "common/output.h"
#include "common/random_checks.h"
#include "opd/native/Meta.h"
#include "opd/ops.h"

namespace opd::native {

Tensor& uniform_(Tensor& self, double from, double to, const std::optional<Generator>&) {
  common::check_uniform(common::random_value_type(self.scalar_type()), from, to);
  common::check_no_internal_overlap(self);
  return self;
}

Tensor& normal_(Tensor& self, double, double std, const std::optional<Generator>&) {
  common::check_normal_std(std);
  common::check_random_floating("normal_kernel_cpu", common::random_value_type(self.scalar_type()));
  common::check_no_internal_overlap(self);
  return self;
}

Tensor& random__from(Tensor& self, int64_t from, std::optional<int64_t> to,
                     const std::optional<Generator>&) {
  common::random_range(self.scalar_type(), from, to);
  common::check_no_internal_overlap(self);
  return self;
}

Tensor& random__to(Tensor& self, int64_t to, const std::optional<Generator>&) {
  common::random_range(self.scalar_type(), 0, to);
  common::check_no_internal_overlap(self);
  return self;
}

Tensor& random_(Tensor& self, const std::optional<Generator>&) {
  common::random_range(self.scalar_type(), std::nullopt, std::nullopt);
  common::check_no_internal_overlap(self);
  return self;
}

Tensor& exponential_(Tensor& self, double lambd, const std::optional<Generator>&) {
  common::check_exponential(lambd);
  common::check_random_floating("exponential_cpu", self.scalar_type());
  common::check_no_internal_overlap(self);
  return self;
}

Tensor& geometric_(Tensor& self, double p, const std::optional<Generator>&) {
  common::check_geometric(p);
  common::check_random_numeric("geometric_cpu", self.scalar_type(), /*bool_too=*/false);
  common::check_no_internal_overlap(self);
  return self;
}

Tensor& log_normal_(Tensor& self, double, double std, const std::optional<Generator>&) {
  common::check_log_normal(std);
  common::check_random_floating("log_normal_cpu", self.scalar_type());
  common::check_no_internal_overlap(self);
  return self;
}

Tensor& cauchy_(Tensor& self, double, double, const std::optional<Generator>&) {
  common::check_random_floating("cauchy_cpu", self.scalar_type());
  common::check_no_internal_overlap(self);
  return self;
}

Tensor& bernoulli__float(Tensor& self, double p, const std::optional<Generator>&) {
  common::check_bernoulli_p(p);
  common::check_bernoulli_self("bernoulli_scalar_cpu_", self.scalar_type());
  common::check_no_internal_overlap(self);
  return self;
}

Tensor& bernoulli__Tensor(Tensor& self, const Tensor& p, const std::optional<Generator>&) {
  common::check_bernoulli_tensor(self, p);
  common::check_no_internal_overlap(self);
  return self;
}

Tensor& multinomial_out(const Tensor& self, int64_t num_samples, bool replacement,
                        const std::optional<Generator>&, Tensor& out) {
  const std::vector<int64_t> sizes =
      common::check_multinomial(self, num_samples, replacement, out.scalar_type());
  common::resize_output("multinomial", out, sizes);
  return out;
}

}  // namespace opd::native
