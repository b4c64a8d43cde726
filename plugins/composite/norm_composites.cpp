// The normalisation front operators, as PyTorch 1.13 composes them: batch_norm (over
// native_batch_norm directly: PyTorch's _batch_norm_impl_index, which picks cuDNN/MIOpen, is
// left out), layer_norm, group_norm, instance_norm, and PyTorch 2.x's _native_batch_norm_legit
// (.no_stats) over native_batch_norm; native_batch_norm.out (PyTorch 1.13: a CPU kernel) over the
// functional form.

#include <tuple>

#include "common/norm_shape.h"
#include "common/output.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, bool training, double momentum,
                  double eps, bool) {
  common::check_batch_norm_features(input, weight, bias, running_mean, running_var);
  return std::get<0>(opd::native_batch_norm(input, weight, bias, running_mean, running_var,
                                            training, momentum, eps));
}

// The functional results written into out, save_mean and save_invstd, as a structured out=
// kernel writes them (dtype and device checked, resized with resize_output's warning).
std::tuple<Tensor&, Tensor&, Tensor&> native_batch_norm_out(
    const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    bool training, double momentum, double eps, Tensor& out, Tensor& save_mean,
    Tensor& save_invstd) {
  const auto result = opd::native_batch_norm(input, weight, bias, running_mean, running_var,
                                             training, momentum, eps);
  Tensor* outs[] = {&out, &save_mean, &save_invstd};
  const Tensor* values[] = {&std::get<0>(result), &std::get<1>(result), &std::get<2>(result)};
  for (int i = 0; i < 3; ++i) {
    common::structured_output("native_batch_norm", *outs[i], values[i]->sizes(),
                              values[i]->scalar_type(), values[i]->device());
    outs[i]->copy_(*values[i]);
  }
  return {out, save_mean, save_invstd};
}

std::tuple<Tensor, Tensor, Tensor> _native_batch_norm_legit(
    const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
    Tensor& running_mean, Tensor& running_var, bool training, double momentum, double eps) {
  return opd::native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                                eps);
}

std::tuple<Tensor, Tensor, Tensor> _native_batch_norm_legit_no_stats(
    const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
    bool training, double momentum, double eps) {
  return opd::native_batch_norm(input, weight, bias, std::nullopt, std::nullopt, training, momentum,
                                eps);
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                  const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  double eps, bool) {
  return std::get<0>(opd::native_layer_norm(input, normalized_shape, weight, bias, eps));
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, bool) {
  const int64_t N = input.size(0), C = input.size(1);
  int64_t HxW = 1;
  for (int64_t i = 2; i < input.dim(); ++i) HxW *= input.size(i);
  common::check_group_norm(input, weight, bias, N, C, HxW, num_groups);
  return std::get<0>(opd::native_group_norm(input, weight, bias, N, C, HxW, num_groups, eps));
}

// PyTorch's instance_norm: batch_norm over the input seen as one sample of N * C channels, the
// parameters and running statistics repeated N times; the running statistics get the mean of
// the N updated copies.
Tensor instance_norm(const Tensor& input, const std::optional<Tensor>& weight,
                     const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                     const std::optional<Tensor>& running_var, bool use_input_stats,
                     double momentum, double eps, bool cudnn_enabled) {
  const bool has_mean = running_mean && running_mean->defined();
  const bool has_var = running_var && running_var->defined();
  OPD_CHECK(use_input_stats || (has_mean && has_var),
            "Expected running_mean and running_var to be defined when use_input_stats is false");
  std::vector<int64_t> shape(input.sizes().begin(), input.sizes().end());
  const int64_t b = input.size(0), c = input.size(1);
  shape[1] = b * c;
  shape[0] = 1;
  auto repeated = [&](const std::optional<Tensor>& t) -> std::optional<Tensor> {
    if (!t || !t->defined()) return std::nullopt;
    return t->repeat({b});
  };
  std::optional<Tensor> mean_r = repeated(running_mean), var_r = repeated(running_var);
  const Tensor out =
      opd::batch_norm(input.contiguous().view(shape), repeated(weight), repeated(bias), mean_r,
                      var_r, use_input_stats, momentum, eps, cudnn_enabled);
  if (has_mean) running_mean->copy_(mean_r->view({b, c}).mean(std::vector<int64_t>{0}, false));
  if (has_var) running_var->copy_(var_r->view({b, c}).mean(std::vector<int64_t>{0}, false));
  return out.view(input.sizes());
}

}  // namespace opd::native
