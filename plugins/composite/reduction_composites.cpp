// The reductions PyTorch writes over others (CompositeImplicitAutograd): var, std, var_mean and
// std_mean with `unbiased` over their .correction kernels, logsumexp over amax, exp, sum and log,
// norm over linalg_vector_norm, count_nonzero over count_nonzero.dim_IntList.

#include <cmath>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include "common/reduction.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

std::optional<int64_t> correction_of(bool unbiased) { return unbiased ? 1 : 0; }

}  // namespace

Tensor var(const Tensor& self, bool unbiased) {
  return opd::var(self, std::nullopt, correction_of(unbiased), false);
}

Tensor var_dim(const Tensor& self, OptionalIntArrayRef dim, bool unbiased, bool keepdim) {
  return opd::var(self, dim, correction_of(unbiased), keepdim);
}

Tensor std(const Tensor& self, bool unbiased) {
  return opd::std(self, std::nullopt, correction_of(unbiased), false);
}

Tensor std_dim(const Tensor& self, OptionalIntArrayRef dim, bool unbiased, bool keepdim) {
  return opd::std(self, dim, correction_of(unbiased), keepdim);
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& self, bool unbiased) {
  return opd::var_mean(self, std::nullopt, correction_of(unbiased), false);
}

std::tuple<Tensor, Tensor> var_mean_dim(const Tensor& self, OptionalIntArrayRef dim, bool unbiased,
                                        bool keepdim) {
  return opd::var_mean(self, dim, correction_of(unbiased), keepdim);
}

std::tuple<Tensor, Tensor> std_mean(const Tensor& self, bool unbiased) {
  return opd::std_mean(self, std::nullopt, correction_of(unbiased), false);
}

std::tuple<Tensor, Tensor> std_mean_dim(const Tensor& self, OptionalIntArrayRef dim, bool unbiased,
                                        bool keepdim) {
  return opd::std_mean(self, dim, correction_of(unbiased), keepdim);
}

// log(sum(exp(x - m))) + m with m the maximum (taken without history: the gradient is the
// softmax either way), 0 where it is infinite; integers are taken as Float, as PyTorch 1.13.
Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim) {
  const Tensor x = is_integral(self.scalar_type(), /*include_bool=*/true) ? self.to(kFloat) : self;
  if (x.numel() == 0) return opd::log(opd::sum(opd::exp(x), dim, keepdim));
  Tensor m = opd::amax(opd::detach(x), dim, /*keepdim=*/true);
  m = opd::where(opd::eq(opd::abs(m), std::numeric_limits<double>::infinity()), opd::zeros_like(m),
                 m);
  Tensor out = opd::log(opd::sum(opd::exp(x - m), dim, keepdim));
  if (keepdim) return out + m;
  return out + m.reshape(common::reduced_sizes(self.sizes(), common::make_dim_mask(dim, self.dim()),
                                               /*keepdim=*/false));
}

namespace {

// PyTorch 1.13's norm: linalg_vector_norm, except that an empty input has every norm 0.
Tensor norm_impl(const Tensor& self, const Scalar& p, IntArrayRef dim, bool keepdim) {
  const ScalarType t = self.scalar_type();
  OPD_CHECK(is_floating_point(t) || is_complex(t),
            "norm(): input dtype should be either floating point or complex. Got {} instead.", t);
  const double ord = p.to<double>();
  if (self.numel() == 0 && (ord < 0 || std::isinf(ord))) {
    const ScalarType real = t == kComplexFloat ? kFloat : t == kComplexDouble ? kDouble : t;
    return opd::zeros(
        common::reduced_sizes(self.sizes(), common::make_dim_mask(dim, self.dim()), keepdim),
        TensorOptions().dtype(real).device(self.device()));
  }
  return opd::linalg_vector_norm(self, p, dim, keepdim, std::nullopt);
}

}  // namespace

Tensor norm_Scalar(const Tensor& self, const Scalar& p) { return norm_impl(self, p, {}, false); }

Tensor norm_ScalarOpt_dim(const Tensor& self, const std::optional<Scalar>& p, IntArrayRef dim,
                          bool keepdim) {
  return norm_impl(self, p.value_or(Scalar(2.0)), dim, keepdim);
}

Tensor count_nonzero(const Tensor& self, std::optional<int64_t> dim) {
  if (dim) return opd::count_nonzero(self, IntArrayRef(&*dim, 1));
  return opd::count_nonzero(self, IntArrayRef{});
}

}  // namespace opd::native
