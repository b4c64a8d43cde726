#include "autograd/norm_formulas.h"

#include "opd/autograd.h"

namespace opd::autograd {

namespace {

bool has(const std::optional<Tensor>& t) { return t && t->defined(); }

// The normalised input's gradient: rstd * (g - mean(g) - x_hat * mean(g * x_hat)) over `dims`.
Tensor normalized_grad(const Tensor& g, const Tensor& x_hat, const Tensor& rstd,
                       const std::vector<int64_t>& dims) {
  return rstd * (g - mean(g, dims, true) - x_hat * mean(g * x_hat, dims, true));
}

}  // namespace

Tensor take_input_grad(std::tuple<Tensor, Tensor, Tensor> grads, std::vector<Tensor>& grad_inputs,
                       size_t weight_ix, size_t bias_ix) {
  grad_inputs[weight_ix] = std::move(std::get<1>(grads));
  grad_inputs[bias_ix] = std::move(std::get<2>(grads));
  return std::move(std::get<0>(grads));
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward_formula(
    const Tensor& grad, const Tensor& input, IntArrayRef normalized_shape, const Tensor& mean_,
    const Tensor& rstd_, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
    double eps, std::array<bool, 3> mask) {
  if (!is_grad_enabled()) {
    return native_layer_norm_backward(grad, input, normalized_shape, mean_, rstd_, weight, bias,
                                      mask);
  }
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  std::vector<int64_t> dims, outer;
  for (int64_t d = 0; d < input.dim(); ++d) (d < axis ? outer : dims).push_back(d);
  const Tensor mu = mean(input, dims, true);
  const Tensor rstd = rsqrt(var(input, dims, std::optional<int64_t>(0), true) + eps);
  const Tensor x_hat = (input - mu) * rstd;
  Tensor dx, dw, db;
  if (mask[0]) dx = normalized_grad(has(weight) ? grad * *weight : grad, x_hat, rstd, dims);
  if (mask[1] && has(weight)) dw = sum(grad * x_hat, outer, false).reshape(weight->sizes());
  if (mask[2] && has(bias)) db = sum(grad, outer, false).reshape(bias->sizes());
  return {dx, dw, db};
}

std::tuple<Tensor, Tensor, Tensor> group_norm_backward_formula(
    const Tensor& grad, const Tensor& input, const Tensor& mean_, const Tensor& rstd_,
    const std::optional<Tensor>& weight, int64_t N, int64_t C, int64_t HxW, int64_t group,
    double eps, std::array<bool, 3> mask) {
  if (!is_grad_enabled()) {
    return native_group_norm_backward(grad, input, mean_, rstd_, weight, N, C, HxW, group, mask);
  }
  const std::vector<int64_t> grouped = {N, group, -1}, per_channel = {1, C, 1};
  const std::vector<int64_t> dims = {2};
  const Tensor xg = input.reshape(grouped);
  const Tensor mu = mean(xg, dims, true);
  const Tensor rstd = rsqrt(var(xg, dims, std::optional<int64_t>(0), true) + eps);
  const Tensor x_hat = ((xg - mu) * rstd).reshape({N, C, HxW});
  const Tensor g3 = grad.reshape({N, C, HxW});
  Tensor dx, dw, db;
  if (mask[0]) {
    const Tensor g = has(weight) ? g3 * weight->reshape(per_channel) : g3;
    dx = normalized_grad(g.reshape(grouped), x_hat.reshape(grouped), rstd, dims)
             .reshape(input.sizes());
  }
  if (mask[1]) dw = sum(g3 * x_hat, std::vector<int64_t>{0, 2}, false);
  if (mask[2]) db = sum(g3, std::vector<int64_t>{0, 2}, false);
  return {dx, dw, db};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_formula(
    const Tensor& grad, const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const Tensor& save_mean, const Tensor& save_invstd, bool training, double eps,
    std::array<bool, 3> mask) {
  if (!is_grad_enabled()) {
    return native_batch_norm_backward(grad, input, weight, running_mean, running_var, save_mean,
                                      save_invstd, training, eps, mask);
  }
  std::vector<int64_t> dims, channel(static_cast<size_t>(input.dim()), 1);
  for (int64_t d = 0; d < input.dim(); ++d)
    if (d != 1) dims.push_back(d);
  channel[1] = input.size(1);
  Tensor mu, invstd;
  if (training) {
    mu = mean(input, dims, true);
    invstd = rsqrt(var(input, dims, std::optional<int64_t>(0), true) + eps);
  } else {
    mu = running_mean->reshape(channel);
    invstd = rsqrt(running_var->reshape(channel) + eps);
  }
  const Tensor x_hat = (input - mu) * invstd;
  const Tensor w = has(weight) ? weight->reshape(channel) : Tensor();
  Tensor dx, dw, db;
  if (mask[0]) {
    const Tensor g = w.defined() ? grad * w : grad;
    dx = training ? normalized_grad(g, x_hat, invstd, dims) : g * invstd;
  }
  if (mask[1]) dw = sum(grad * x_hat, dims, false);
  if (mask[2]) db = sum(grad, dims, false);
  return {dx, dw, db};
}

}  // namespace opd::autograd
