// The random operators that are compositions of the in-place fills (plugins/cpu/random_kernels.cpp
// and plugins/meta/random_meta.cpp): the `generator` overloads of the random factories, bernoulli's
// functional forms and normal's, each as PyTorch 1.13 composes it (an empty tensor, then the
// fill), so they draw through the generator given and run wherever the fills do.
//
// rand.generator and randn.generator with generator=None give the values rand and randn give
// (uniform_(0, 1) and normal_(0, 1) draw as they do); randint and randperm's generator forms
// scale and sort rand's values as the plain forms do (Note [Random factories]).

#include "common/broadcast.h"
#include "common/factory_shape.h"
#include "common/output.h"
#include "common/random_checks.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// A new tensor of `size`, written by `fill` through a write handle (Note [Factory versions]).
template <class Fill>
Tensor fresh_filled(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
                    std::optional<Device> device, std::optional<bool> pin_memory, Fill fill) {
  Tensor result = opd::empty(size, dtype, layout, device, pin_memory);
  Tensor handle = factory::write_handle(result);
  fill(handle);
  return result;
}

// normal's std tensor: real, and every element >= 0 (not checked on Meta: no values there).
void check_std_tensor(const Tensor& std) {
  OPD_CHECK(!is_complex(std.scalar_type()), "normal expects standard deviation to be non-complex");
  if (std.numel() > 0 && !std.is_meta()) {
    OPD_CHECK(opd::ge(opd::min(std), 0).item<bool>(), "normal expects all elements of std >= 0.0");
  }
}

// out resized to `sizes` as PyTorch's out= kernels resize (resize_output's warning), then filled
// with N(0, 1) scaled and shifted by `finish`.
template <class Finish>
Tensor& normal_into(Tensor& out, IntArrayRef sizes, double std_value,
                    const std::optional<Generator>& generator, Finish finish) {
  common::resize_output("normal", out, sizes);
  out.normal_(0, std_value, generator);
  finish(out);
  return out;
}

}  // namespace

Tensor rand_generator(IntArrayRef size, const std::optional<Generator>& generator,
                      std::optional<ScalarType> dtype, std::optional<Layout> layout,
                      std::optional<Device> device, std::optional<bool> pin_memory) {
  return fresh_filled(size, dtype, layout, device, pin_memory,
                      [&](Tensor& t) { t.uniform_(0, 1, generator); });
}

Tensor randn_generator(IntArrayRef size, const std::optional<Generator>& generator,
                       std::optional<ScalarType> dtype, std::optional<Layout> layout,
                       std::optional<Device> device, std::optional<bool> pin_memory) {
  return fresh_filled(size, dtype, layout, device, pin_memory,
                      [&](Tensor& t) { t.normal_(0, 1, generator); });
}

Tensor randint_low_generator(int64_t low, int64_t high, IntArrayRef size,
                             const std::optional<Generator>& generator,
                             std::optional<ScalarType> dtype, std::optional<Layout> layout,
                             std::optional<Device> device, std::optional<bool> pin_memory) {
  OPD_CHECK(low < high, "random_ expects 'from' to be less than 'to', but got from={} >= to={}",
            low, high);
  // A uniform double in [0, 1) scaled to [low, high) and truncated, as randint.low.
  const Tensor uniform = opd::rand(size, generator, kDouble, layout, device, pin_memory);
  const Tensor offsets = opd::mul(uniform, static_cast<double>(high - low)).to(kLong);
  return opd::add(offsets, low).to(dtype.value_or(kLong));
}

Tensor randint_generator(int64_t high, IntArrayRef size, const std::optional<Generator>& generator,
                         std::optional<ScalarType> dtype, std::optional<Layout> layout,
                         std::optional<Device> device, std::optional<bool> pin_memory) {
  return randint_low_generator(0, high, size, generator, dtype, layout, device, pin_memory);
}

Tensor randperm_generator(int64_t n, const std::optional<Generator>& generator,
                          std::optional<ScalarType> dtype, std::optional<Layout> layout,
                          std::optional<Device> device, std::optional<bool> pin_memory) {
  const ScalarType t = dtype.value_or(kLong);
  OPD_CHECK(t != kBool, "\"randperm\" not implemented for 'Bool'");
  return opd::argsort(opd::rand({n}, generator, kDouble, layout, device, pin_memory)).to(t);
}

Tensor bernoulli(const Tensor& self, const std::optional<Generator>& generator) {
  Tensor result = opd::empty_like(self, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                                  MemoryFormat::Contiguous);
  result.bernoulli_(self, generator);
  return result;
}

Tensor& bernoulli_out(const Tensor& self, const std::optional<Generator>& generator, Tensor& out) {
  common::resize_output("bernoulli", out, self.sizes());
  out.bernoulli_(self, generator);
  return out;
}

Tensor bernoulli_p(const Tensor& self, double p, const std::optional<Generator>& generator) {
  Tensor result = opd::empty_like(self, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                                  MemoryFormat::Contiguous);
  result.bernoulli_(p, generator);
  return result;
}

// normal(mean, std): N(0, std) + mean (PyTorch 1.13's normal_out_impl, in its order). Its
// out= form broadcasts mean with out's own shape (an empty out of a 2-d mean raises "The size of
// tensor a (4) must match the size of tensor b (0) ..."), as PyTorch 1.13's does; the functional
// form starts from a tensor of mean's shape.
Tensor& normal_Tensor_float_out(const Tensor& mean, double std,
                                const std::optional<Generator>& generator, Tensor& out) {
  common::check_normal_std(std);
  const std::vector<int64_t> shape = common::infer_size(mean.sizes(), out.sizes());
  return normal_into(out, shape, std, generator, [&](Tensor& o) { o.add_(mean); });
}

Tensor normal_Tensor_float(const Tensor& mean, double std,
                           const std::optional<Generator>& generator) {
  common::check_normal_std(std);
  Tensor out = opd::empty_like(mean, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                               MemoryFormat::Contiguous);
  return normal_Tensor_float_out(mean, std, generator, out);
}

// normal(mean, std): N(0, 1) * std + mean.
Tensor& normal_float_Tensor_out(double mean, const Tensor& std,
                                const std::optional<Generator>& generator, Tensor& out) {
  check_std_tensor(std);
  return normal_into(out, std.sizes(), 1, generator, [&](Tensor& o) { o.mul_(std).add_(mean); });
}

Tensor normal_float_Tensor(double mean, const Tensor& std,
                           const std::optional<Generator>& generator) {
  check_std_tensor(std);
  Tensor out = opd::empty({0}, std.scalar_type(), std::nullopt, std.device(), std::nullopt);
  return normal_float_Tensor_out(mean, std, generator, out);
}

Tensor& normal_Tensor_Tensor_out(const Tensor& mean, const Tensor& std,
                                 const std::optional<Generator>& generator, Tensor& out) {
  check_std_tensor(std);
  const std::vector<int64_t> shape = common::infer_size(mean.sizes(), std.sizes());
  return normal_into(out, shape, 1, generator, [&](Tensor& o) { o.mul_(std).add_(mean); });
}

Tensor normal_Tensor_Tensor(const Tensor& mean, const Tensor& std,
                            const std::optional<Generator>& generator) {
  check_std_tensor(std);
  Tensor out = opd::empty({0}, mean.scalar_type(), std::nullopt, mean.device(), std::nullopt);
  return normal_Tensor_Tensor_out(mean, std, generator, out);
}

Tensor normal_float_float(double mean, double std, IntArrayRef size,
                          const std::optional<Generator>& generator,
                          std::optional<ScalarType> dtype, std::optional<Layout> layout,
                          std::optional<Device> device, std::optional<bool> pin_memory) {
  common::check_normal_std(std);
  return fresh_filled(size, dtype, layout, device, pin_memory,
                      [&](Tensor& t) { t.normal_(mean, std, generator); });
}

Tensor& normal_float_float_out(double mean, double std, IntArrayRef size,
                               const std::optional<Generator>& generator, Tensor& out) {
  common::check_normal_std(std);
  common::resize_output("normal", out, size);
  out.normal_(mean, std, generator);
  return out;
}

Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement,
                   const std::optional<Generator>& generator) {
  Tensor out = opd::empty({0}, kLong, std::nullopt, self.device(), std::nullopt);
  return opd::multinomial_out(out, self, num_samples, replacement, generator);
}

}  // namespace opd::native
