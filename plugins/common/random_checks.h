#pragma once

// The argument and dtype checks of the in-place random fills (uniform_, normal_, random_,
// bernoulli_, exponential_, geometric_, log_normal_, cauchy_), shared by the CPU kernels and the
// Meta ones so that both raise PyTorch 1.13's errors, in its order: the check PyTorch makes
// first comes first here too.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "opd/scalar_type.h"
#include "opd/tensor.h"

namespace opd::common {

// The dtypes each fill draws (PyTorch 1.13's CPU dispatch, and its macro's name in the error).
// Half, BFloat16, Float, Double.
void check_random_floating(std::string_view kernel, ScalarType dtype);
// Every numeric type and Bool, Half and BFloat16 (random_'s and geometric_'s, less Bool there).
void check_random_numeric(std::string_view kernel, ScalarType dtype, bool bool_too);

// The dtype uniform_ and normal_ draw in: a complex tensor's real type (PyTorch fills
// view_as_real(self) for them), else the dtype itself.
ScalarType random_value_type(ScalarType dtype);

// uniform_(from, to): "uniform_ expects to return a [from, to) range, but found from=2 > to=1",
// each bound within the dtype, to - from within its max.
void check_uniform(ScalarType dtype, double from, double to);
// normal_'s (and normal's scalar std): "normal expects std >= 0.0, but found std -1".
void check_normal_std(double std);
// bernoulli_.float: "bernoulli_ expects p to be in [0, 1], but got p=1.5".
void check_bernoulli_p(double p);
// bernoulli_'s self: every numeric type, Bool and BFloat16 (not Half, as PyTorch 1.13's CPU).
void check_bernoulli_self(std::string_view kernel, ScalarType dtype);
// bernoulli_.Tensor: p expands to self's shape (expand's errors), self's dtype as above, p's
// Float, Double or BFloat16 ("bernoulli_tensor_cpu_p_"), in PyTorch's order. Returns p's strides
// over self's shape (0 where p is broadcast).
std::vector<int64_t> check_bernoulli_tensor(const Tensor& self, const Tensor& p);
// exponential_: "exponential_ expects lambda >= 0.0, but found lambda=-1".
void check_exponential(double lambd);
// geometric_: "geometric_ expects p to be in (0, 1), but got p=0".
void check_geometric(double p);
// log_normal_: "log_normal_ expects std > 0.0, but found std=-1".
void check_log_normal(double std);

// multinomial's argument checks, in PyTorch 1.13's order (its values are checked by the CPU
// kernel): "prob_dist must be 1 or 2 dim", "multinomial only supports floating-point dtypes for
// input, got: Long", "multinomial expects Long tensor out, got: Float", "cannot sample n_sample <=
// 0 samples", "cannot sample n_sample > prob_dist.size(-1) samples without replacement",
// "number of categories cannot exceed 2^24", "multinomial is not implemented for half on CPU".
// Returns the result's sizes: {n_sample} or {rows, n_sample}.
std::vector<int64_t> check_multinomial(const Tensor& self, int64_t n_sample, bool replacement,
                                       ScalarType out_dtype);

// random_'s range [from, to_inclusive] for `dtype` (Note [random_ ranges]): random_.from with
// `to` (exclusive) or without (the dtype's largest integer), random_.to (from 0), random_()
// (both defaulted). Checks "random_ expects 'from' to be less than 'to', but got from=3 >= to=2"
// and "from is out of bounds for signed char" / "to - 1 is out of bounds for float".
struct RandomRange {
  int64_t from;
  // to - from + 1 as an unsigned count; 0 means all 2^64 values.
  uint64_t span;
};
RandomRange random_range(ScalarType dtype, std::optional<int64_t> from, std::optional<int64_t> to);

}  // namespace opd::common
