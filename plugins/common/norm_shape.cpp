#include "common/norm_shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/view_shape.h"

namespace opd::common {

namespace {

std::string sizes_str(IntArrayRef sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

void check_norm_dtype(const char* kernel, ScalarType t) {
  OPD_CHECK(t == kFloat || t == kDouble || t == kBFloat16, "\"{}\" not implemented for '{}'",
            kernel, t);
}

int64_t numel_of(const std::optional<Tensor>& t) { return t && t->defined() ? t->numel() : -1; }

// layer_norm's and group_norm's weight and bias: the input's dtype (PyTorch's data_ptr<T> check).
void check_param_dtype(const Tensor& input, const std::optional<Tensor>& t) {
  if (!t || !t->defined()) return;
  OPD_CHECK(t->scalar_type() == input.scalar_type(), "expected scalar type {} but found {}",
            input.scalar_type(), t->scalar_type());
}

// batch_norm's parameters and running statistics: the input's dtype, or Float for a BFloat16
// input (PyTorch's mixed type).
void check_batch_norm_param_dtype(const Tensor& input, const std::optional<Tensor>& t) {
  if (!t || !t->defined()) return;
  const ScalarType want =
      input.scalar_type() == kBFloat16 && t->scalar_type() == kFloat ? kFloat : input.scalar_type();
  OPD_CHECK(t->scalar_type() == want,
            "mixed dtype (CPU): expect parameter to have scalar type of {}", want);
}

}  // namespace

LayerNormMeta layer_norm_meta(const Tensor& input, IntArrayRef normalized_shape,
                              const std::optional<Tensor>& weight,
                              const std::optional<Tensor>& bias) {
  const int64_t normalized_ndim = static_cast<int64_t>(normalized_shape.size());
  OPD_CHECK(normalized_ndim >= 1,
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
            "element, but got normalized_shape = {}",
            sizes_str(normalized_shape));
  OPD_CHECK(!weight || !weight->defined() || weight->sizes().equals(normalized_shape),
            "Expected weight to be of same shape as normalized_shape, but got weight of shape {} "
            "and normalized_shape = {}",
            sizes_str(weight->sizes()), sizes_str(normalized_shape));
  OPD_CHECK(!bias || !bias->defined() || bias->sizes().equals(normalized_shape),
            "Expected bias to be of same shape as normalized_shape, but got bias of shape {} and "
            "normalized_shape = {}",
            sizes_str(bias->sizes()), sizes_str(normalized_shape));
  const int64_t input_ndim = input.dim();
  const IntArrayRef input_shape = input.sizes();
  bool matches = input_ndim >= normalized_ndim;
  for (int64_t i = 0; matches && i < normalized_ndim; ++i) {
    matches = input_shape[input_ndim - normalized_ndim + i] == normalized_shape[i];
  }
  if (!matches) {
    std::string expected = "[*";
    for (int64_t s : normalized_shape) expected += fmt::format(", {}", s);
    expected += "]";
    OPD_CHECK(false,
              "Given normalized_shape={}, expected input with shape {}, but got input of size{}",
              sizes_str(normalized_shape), expected, sizes_str(input_shape));
  }
  check_norm_dtype("LayerNormKernelImpl", input.scalar_type());
  check_param_dtype(input, weight);
  check_param_dtype(input, bias);
  LayerNormMeta m;
  const int64_t axis = input_ndim - normalized_ndim;
  for (int64_t i = 0; i < input_ndim; ++i) {
    if (i < axis) {
      m.M *= input_shape[i];
      m.stat_sizes.push_back(input_shape[i]);
    } else {
      m.N *= input_shape[i];
      m.stat_sizes.push_back(1);
    }
  }
  return m;
}

void check_group_norm(const Tensor& input, const std::optional<Tensor>& weight,
                      const std::optional<Tensor>& bias, int64_t N, int64_t C, int64_t HxW,
                      int64_t group) {
  OPD_CHECK(group > 0 && C % group == 0,
            "Expected number of channels in input to be divisible by num_groups, but got input of "
            "shape {} and num_groups={}",
            sizes_str(input.sizes()), group);
  OPD_CHECK(numel_of(weight) < 0 || (weight->dim() == 1 && weight->numel() == C),
            "Expected weight to be a vector of size equal to the number of channels in input, but "
            "got weight of shape {} and input of shape {}",
            sizes_str(weight->sizes()), sizes_str(input.sizes()));
  OPD_CHECK(numel_of(bias) < 0 || (bias->dim() == 1 && bias->numel() == C),
            "Expected bias to be a vector of size equal to the number of channels in input, but "
            "got bias of shape {} and input of shape {}",
            sizes_str(bias->sizes()), sizes_str(input.sizes()));
  OPD_CHECK(input.numel() == N * C * HxW,
            "Expected the input to have N * C * HxW = {} elements, but got input of shape {}",
            N * C * HxW, sizes_str(input.sizes()));
  check_norm_dtype("GroupNormKernelImpl", input.scalar_type());
  check_param_dtype(input, weight);
  check_param_dtype(input, bias);
}

void check_batch_norm_features(const Tensor& input, const std::optional<Tensor>& weight,
                               const std::optional<Tensor>& bias,
                               const std::optional<Tensor>& running_mean,
                               const std::optional<Tensor>& running_var) {
  const int64_t C = input.size(1);
  auto check = [&](const std::optional<Tensor>& t, const char* name) {
    const int64_t n = numel_of(t);
    OPD_CHECK(n < 0 || n == C, "{} should contain {} elements not {}", name, C, n);
  };
  check(running_mean, "running_mean");
  check(running_var, "running_var");
  check(weight, "weight");
  check(bias, "bias");
}

int64_t check_batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                         const std::optional<Tensor>& bias,
                         const std::optional<Tensor>& running_mean,
                         const std::optional<Tensor>& running_var, bool training) {
  const int64_t C = input.size(1);  // IndexError below rank 2, as PyTorch's
  check_norm_dtype("batch_norm", input.scalar_type());
  check_batch_norm_features(input, weight, bias, running_mean, running_var);
  for (const auto* t : {&weight, &bias, &running_mean, &running_var})
    check_batch_norm_param_dtype(input, *t);
  OPD_CHECK(training || (numel_of(running_mean) >= 0 && numel_of(running_var) >= 0),
            "running_mean and running_var must be defined in evaluation mode");
  return C;
}

MemoryFormat norm_memory_format(const Tensor& input) {
  return suggest_memory_format(input.sizes(), input.strides());
}

}  // namespace opd::common
