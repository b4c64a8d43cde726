// Meta kernels of native_layer_norm, native_group_norm, native_batch_norm and their backward
// operators: the CPU kernels' checks, shapes and dtypes (common/norm_shape.h), and no data.

#include <array>
#include <tuple>

#include "common/norm_shape.h"
#include "common/output.h"
#include "opd/native/Meta.h"

namespace opd::native {

namespace {

Tensor like(IntArrayRef sizes, const Tensor& input) {
  return common::empty_output(sizes, input.scalar_type(), input.device());
}

// A batch/group norm output: channels-last when the input is (as the CPU kernels give it).
Tensor like_input(const Tensor& input) {
  Tensor out = like(input.sizes(), input);
  const MemoryFormat f = common::norm_memory_format(input);
  return f == MemoryFormat::Contiguous ? out : out.contiguous(f);
}

bool has(const std::optional<Tensor>& t) { return t && t->defined(); }

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input,
                                                     IntArrayRef normalized_shape,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, double) {
  const common::LayerNormMeta m = common::layer_norm_meta(input, normalized_shape, weight, bias);
  return {like(input.sizes(), input), like(m.stat_sizes, input), like(m.stat_sizes, input)};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor&, const Tensor& input,
                                                              IntArrayRef normalized_shape,
                                                              const Tensor&, const Tensor&,
                                                              const std::optional<Tensor>& weight,
                                                              const std::optional<Tensor>& bias,
                                                              std::array<bool, 3> output_mask) {
  common::layer_norm_meta(input, normalized_shape, weight, bias);
  Tensor dX, dgamma, dbeta;
  if (output_mask[0]) dX = like(input.sizes(), input);
  if (output_mask[1] && has(weight))
    dgamma = common::empty_output(weight->sizes(), weight->scalar_type(), input.device());
  if (output_mask[2] && has(bias))
    dbeta = common::empty_output(bias->sizes(), bias->scalar_type(), input.device());
  return {dX, dgamma, dbeta};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, int64_t N,
                                                     int64_t C, int64_t HxW, int64_t group,
                                                     double) {
  common::check_group_norm(input, weight, bias, N, C, HxW, group);
  return {like_input(input), like({N, group}, input), like({N, group}, input)};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(const Tensor&, const Tensor& input,
                                                              const Tensor&, const Tensor&,
                                                              const std::optional<Tensor>& weight,
                                                              int64_t N, int64_t C, int64_t HxW,
                                                              int64_t group,
                                                              std::array<bool, 3> output_mask) {
  common::check_group_norm(input, weight, std::nullopt, N, C, HxW, group);
  Tensor dX, dgamma, dbeta;
  if (output_mask[0]) dX = like_input(input);
  if (output_mask[1]) dgamma = like({C}, input);
  if (output_mask[2]) dbeta = like({C}, input);
  return {dX, dgamma, dbeta};
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias,
                                                     const std::optional<Tensor>& running_mean,
                                                     const std::optional<Tensor>& running_var,
                                                     bool training, double, double) {
  const int64_t C =
      common::check_batch_norm(input, weight, bias, running_mean, running_var, training);
  return {like_input(input), like({training ? C : 0}, input), like({training ? C : 0}, input)};
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor&, const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd, bool train,
    double, std::array<bool, 3> output_mask) {
  const int64_t C =
      common::check_batch_norm(input, weight, std::nullopt, running_mean, running_var, train);
  OPD_CHECK(!train || (has(save_mean) && has(save_invstd)),
            "save_mean and save_invstd must be defined in training mode");
  const ScalarType wt = has(weight) ? weight->scalar_type() : input.scalar_type();
  Tensor dX, dW, dB;
  if (output_mask[0]) dX = like_input(input);
  if (output_mask[1]) dW = common::empty_output({C}, wt, input.device());
  if (output_mask[2]) dB = common::empty_output({C}, wt, input.device());
  return {dX, dW, dB};
}

}  // namespace opd::native
