// The elementwise losses (Operators II), composed of other operators as PyTorch 1.13 writes them
// or with its kernels' formulas: binary_cross_entropy, smooth_l1_loss, huber_loss and
// soft_margin_loss are CompositeExplicitAutograd (autograd records the operator and calls its
// _backward operator, manifests/derivatives.yaml); their _backward operators, l1_loss, kl_div,
// binary_cross_entropy_with_logits, margin_ranking_loss and cosine_embedding_loss are
// CompositeImplicitAutograd, so gradients of every order follow from the operators they call.
// The out= forms write the functional result. They run on every backend with the primitives
// (CPU, Meta); the check only the data can tell (binary_cross_entropy's input range) is skipped
// on Meta. `reduction` is 0 (none), 1 (mean) or 2 (sum).

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/nn_shape.h"
#include "common/output.h"
#include "common/type_promotion.h"
#include "loss_out.h"
#include "opd/error.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

using common::Reduction;
using loss::write_result;

// PyTorch's apply_loss_reduction: mean, sum, or the elementwise losses for any other value.
Tensor apply_loss_reduction(const Tensor& loss, int64_t reduction) {
  if (reduction == static_cast<int64_t>(Reduction::Mean)) return opd::mean(loss);
  if (reduction == static_cast<int64_t>(Reduction::Sum)) return opd::sum(loss);
  return loss;
}

// The factor a _backward operator multiplies by: 1 / numel for mean, else 1.
double reduction_norm(const Tensor& self, int64_t reduction) {
  return reduction == static_cast<int64_t>(Reduction::Mean)
             ? 1.0 / static_cast<double>(self.numel())
             : 1.0;
}

bool has(const std::optional<Tensor>& t) { return t.has_value() && t->defined(); }

// binary_cross_entropy's input and target: one floating dtype, float or double (PyTorch 1.13's
// CPU kernel has no Half or BFloat16).
void check_bce_dtypes(const char* op, const Tensor& self, const Tensor& target) {
  OPD_CHECK(target.scalar_type() == self.scalar_type(), "Found dtype {} but expected {}",
            target.scalar_type(), self.scalar_type());
  const ScalarType t = self.scalar_type();
  OPD_CHECK(t == kFloat || t == kDouble, "\"{}\" not implemented for '{}'", op, to_string(t));
}

// The dtype a loss computes in: self's and target's common dtype, which must be floating
// ("\"huber_cpu\" not implemented for 'Long'", `kernel` naming PyTorch's CPU kernel).
ScalarType floating_loss_dtype(const char* kernel, const Tensor& self, const Tensor& target) {
  const ScalarType dtype = common::result_type(self, target);
  OPD_CHECK(is_floating_point(dtype), "\"{}\" not implemented for '{}'", kernel, to_string(dtype));
  return dtype;
}

// PyTorch's losses that write into a tensor like self (huber_loss, soft_margin_loss) refuse an
// integral self: "result type Float can't be cast to the desired output type Long".
void check_castable_to_self(const Tensor& self) {
  OPD_CHECK(!is_integral(self.scalar_type(), /*include_bool=*/true),
            "result type Float can't be cast to the desired output type {}",
            to_string(self.scalar_type()));
}

// x clamped to [lo, hi]; Half in float (clamp has no Half kernel, as PyTorch 1.13's CPU clamp;
// its smooth_l1 and huber backward kernels compute Half).
Tensor clamp_to(const Tensor& x, double lo, double hi) {
  if (x.scalar_type() != kHalf) return opd::clamp(x, Scalar(lo), Scalar(hi));
  return opd::clamp(x.to(kFloat), Scalar(lo), Scalar(hi)).to(kHalf);
}

// d/dx of smooth_l1 (beta) at x = self - target: x / beta clamped to [-1, 1]; with beta 0,
// PyTorch's kernel gives -1 for x <= 0 and 1 above.
Tensor smooth_l1_slope(const Tensor& x, double beta) {
  if (beta == 0.0) return opd::sub(opd::mul(opd::gt(x, 0).to(x.scalar_type()), 2), 1);
  return clamp_to(opd::div(x, beta), -1.0, 1.0);
}

}  // namespace

// ---- binary_cross_entropy --------------------------------------------------------------------

// -w (t log(x) + (1 - t) log(1 - x)), each log clamped to >= -100 as PyTorch's kernel does.
Tensor binary_cross_entropy(const Tensor& self, const Tensor& target,
                            const std::optional<Tensor>& weight, int64_t reduction) {
  check_bce_dtypes("binary_cross_entropy", self, target);
  const Tensor log_x = opd::clamp_min(opd::log(self), -100);
  const Tensor log_1mx = opd::clamp_min(opd::log1p(opd::neg(self)), -100);
  Tensor loss = opd::sub(opd::mul(opd::sub(target, 1), log_1mx), opd::mul(target, log_x));
  if (!self.is_meta() && self.numel() > 0) {
    const Tensor outside = opd::logical_or(opd::lt(self, 0), opd::gt(self, 1));
    OPD_CHECK(!opd::any(outside).item<bool>(), "all elements of input should be between 0 and 1");
  }
  if (has(weight)) loss = opd::mul(loss, *weight);
  return apply_loss_reduction(loss, reduction);
}

Tensor& binary_cross_entropy_out(const Tensor& self, const Tensor& target,
                                 const std::optional<Tensor>& weight, int64_t reduction,
                                 Tensor& out) {
  return write_result("binary_cross_entropy",
                      opd::binary_cross_entropy(self, target, weight, reduction), out);
}

// grad (x - t) / max(x (1 - x), 1e-12) w, divided by numel for mean (PyTorch's kernel).
Tensor binary_cross_entropy_backward(const Tensor& grad_output, const Tensor& self,
                                     const Tensor& target, const std::optional<Tensor>& weight,
                                     int64_t reduction) {
  check_bce_dtypes("binary_cross_entropy_backward", self, target);
  const Tensor denominator = opd::clamp_min(opd::mul(opd::add(opd::neg(self), 1), self), 1e-12);
  Tensor grad = opd::mul(opd::div(opd::sub(self, target), denominator), grad_output);
  if (has(weight)) grad = opd::mul(grad, *weight);
  const double norm = reduction_norm(self, reduction);
  return norm == 1.0 ? grad : opd::mul(grad, norm);
}

Tensor& binary_cross_entropy_backward_grad_input(const Tensor& grad_output, const Tensor& self,
                                                 const Tensor& target,
                                                 const std::optional<Tensor>& weight,
                                                 int64_t reduction, Tensor& grad_input) {
  return write_result(
      "binary_cross_entropy_backward",
      opd::binary_cross_entropy_backward(grad_output, self, target, weight, reduction), grad_input);
}

// (1 - t) x - (1 + (pos_weight - 1) t) log_sigmoid(x), times weight: PyTorch's
// (1 - t) x + log_weight (log(exp(-m) + exp(-x - m)) + m), m = max(-x, 0), whose last factor is
// -log_sigmoid(x).
Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target,
                                        const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight,
                                        int64_t reduction) {
  const ScalarType dtype = common::result_type(self, target);
  OPD_CHECK(is_floating_point(dtype),
            "result type Float can't be cast to the desired output type {}", to_string(dtype));
  Tensor log_sigmoid = opd::log_sigmoid(self);
  if (has(pos_weight))
    log_sigmoid = opd::mul(log_sigmoid, opd::add(opd::mul(opd::sub(*pos_weight, 1), target), 1));
  Tensor loss = opd::sub(opd::mul(opd::add(opd::neg(target), 1), self), log_sigmoid);
  if (has(weight)) loss = opd::mul(loss, *weight);
  return apply_loss_reduction(loss, reduction);
}

// ---- l1, smooth l1, huber ----------------------------------------------------------------------

Tensor l1_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  return apply_loss_reduction(opd::abs(opd::sub(self, target)), reduction);
}

// |x| < beta: 0.5 x^2 / beta, else |x| - 0.5 beta (x = self - target).
Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  OPD_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  const Reduction r = common::to_reduction("smooth_l1_loss", reduction);
  floating_loss_dtype("smooth_l1_cpu", self, target);
  const Tensor z = opd::abs(opd::sub(self, target));
  const Tensor linear = opd::sub(z, 0.5 * beta);
  const Tensor loss =
      beta == 0.0
          ? linear
          : opd::where(opd::lt(z, beta), opd::div(opd::mul(opd::mul(z, z), 0.5), beta), linear);
  return apply_loss_reduction(loss, static_cast<int64_t>(r));
}

Tensor& smooth_l1_loss_out(const Tensor& self, const Tensor& target, int64_t reduction, double beta,
                           Tensor& out) {
  return write_result("smooth_l1_loss", opd::smooth_l1_loss(self, target, reduction, beta), out);
}

Tensor smooth_l1_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                               int64_t reduction, double beta) {
  OPD_CHECK(self.scalar_type() != kHalf,
            "\"smooth_l1_backward_cpu_out\" not implemented for 'Half'");
  const Tensor grad = opd::mul(smooth_l1_slope(opd::sub(self, target), beta), grad_output);
  const double norm = reduction_norm(self, reduction);
  return norm == 1.0 ? grad : opd::mul(grad, norm);
}

Tensor& smooth_l1_loss_backward_grad_input(const Tensor& grad_output, const Tensor& self,
                                           const Tensor& target, int64_t reduction, double beta,
                                           Tensor& grad_input) {
  return write_result("smooth_l1_loss_backward",
                      opd::smooth_l1_loss_backward(grad_output, self, target, reduction, beta),
                      grad_input);
}

// |x| < delta: 0.5 x^2, else delta (|x| - 0.5 delta).
Tensor huber_loss(const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
  OPD_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  floating_loss_dtype("huber_cpu", self, target);
  check_castable_to_self(self);
  const Tensor z = opd::abs(opd::sub(self, target));
  const Tensor loss = opd::where(opd::lt(z, delta), opd::mul(opd::mul(z, z), 0.5),
                                 opd::mul(opd::sub(z, 0.5 * delta), delta));
  // PyTorch computes in the common dtype and writes a tensor like self.
  const Tensor result = apply_loss_reduction(loss, reduction);
  return result.scalar_type() == self.scalar_type() ? result : result.to(self.scalar_type());
}

Tensor& huber_loss_out(const Tensor& self, const Tensor& target, int64_t reduction, double delta,
                       Tensor& out) {
  return write_result("huber_loss", opd::huber_loss(self, target, reduction, delta), out);
}

Tensor huber_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                           int64_t reduction, double delta) {
  const Tensor slope = clamp_to(opd::sub(self, target), -delta, delta);
  const Tensor grad = opd::mul(slope, grad_output);
  const double norm = reduction_norm(self, reduction);
  return norm == 1.0 ? grad : opd::mul(grad, norm);
}

Tensor& huber_loss_backward_out(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                int64_t reduction, double delta, Tensor& grad_input) {
  return write_result("huber_loss_backward",
                      opd::huber_loss_backward(grad_output, self, target, reduction, delta),
                      grad_input);
}

// ---- soft margin, kl_div, margin ranking, cosine embedding --------------------------------------

// PyTorch 1.13's exp has no Half CPU kernel.
void check_soft_margin_dtype(const Tensor& self, const Tensor& target) {
  const ScalarType dtype = common::result_type(self, target);
  OPD_CHECK(dtype != kHalf, "\"exp_vml_cpu\" not implemented for 'Half'");
}

// log(1 + exp(-t x)).
Tensor soft_margin_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  check_castable_to_self(self);
  check_soft_margin_dtype(self, target);
  const Tensor loss = opd::log1p(opd::exp(opd::mul(opd::neg(self), target)));
  return apply_loss_reduction(loss, reduction);
}

Tensor& soft_margin_loss_out(const Tensor& self, const Tensor& target, int64_t reduction,
                             Tensor& out) {
  return write_result("soft_margin_loss", opd::soft_margin_loss(self, target, reduction), out);
}

// -t z / (1 + z) grad, z = exp(-t x), divided by numel for mean.
Tensor soft_margin_loss_backward(const Tensor& grad_output, const Tensor& self,
                                 const Tensor& target, int64_t reduction) {
  check_soft_margin_dtype(self, target);
  const Tensor z = opd::exp(opd::mul(opd::neg(target), self));
  const Tensor grad =
      opd::mul(opd::div(opd::mul(opd::neg(target), z), opd::add(z, 1)), grad_output);
  const double norm = reduction_norm(self, reduction);
  return norm == 1.0 ? grad : opd::mul(grad, norm);
}

Tensor& soft_margin_loss_backward_grad_input(const Tensor& grad_output, const Tensor& self,
                                             const Tensor& target, int64_t reduction,
                                             Tensor& grad_input) {
  return write_result("soft_margin_loss_backward",
                      opd::soft_margin_loss_backward(grad_output, self, target, reduction),
                      grad_input);
}

// Pointwise KL divergence: t (log t - x), or exp(t) (t - x) for a log target.
Tensor kl_div(const Tensor& self, const Tensor& target, int64_t reduction, bool log_target) {
  OPD_CHECK(!is_complex(self.scalar_type()) && !is_complex(target.scalar_type()),
            "kl_div: Complex inputs not supported.");
  OPD_CHECK(!is_integral(self.scalar_type(), /*include_bool=*/true) &&
                !is_integral(target.scalar_type(), /*include_bool=*/true),
            "kl_div: Integral inputs not supported.");
  const Tensor loss = log_target ? opd::mul(opd::exp(target), opd::sub(target, self))
                                 : opd::sub(opd::xlogy(target, target), opd::mul(target, self));
  return apply_loss_reduction(loss, reduction);
}

// max(0, -t (x1 - x2) + margin).
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin, int64_t reduction) {
  const Tensor unclamped = opd::add(opd::mul(opd::neg(target), opd::sub(input1, input2)), margin);
  return apply_loss_reduction(opd::clamp_min(unclamped, 0), reduction);
}

// 1 - cos(x1, x2) where t == 1, max(0, cos - margin) where t == -1, 0 elsewhere; cos over the
// last dimension with 1e-12 added to each squared norm.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin, int64_t reduction) {
  const int64_t dim = target.dim();
  OPD_CHECK(dim == 1 || dim == 0, "0D or 1D target tensor expected, multi-target not supported");
  if (dim == 1) {
    OPD_CHECK(input1.dim() == 2 && input2.dim() == 2,
              "1D target tensor expects 2D input tensors, but found inputs with sizes {} and {}.",
              common::shape_str(input1.sizes()), common::shape_str(input2.sizes()));
  } else {
    OPD_CHECK(input1.dim() == 1 && input2.dim() == 1,
              "0D target tensor expects 1D input tensors, but found inputs with sizes {} and {}.",
              common::shape_str(input1.sizes()), common::shape_str(input2.sizes()));
  }
  const std::vector<int64_t> dims{dim};
  auto sum_last = [&](const Tensor& t) {
    return opd::sum(t, IntArrayRef(dims), false, std::nullopt);
  };
  const Tensor prod_sum = sum_last(opd::mul(input1, input2));
  const Tensor mag1 = opd::add(sum_last(opd::mul(input1, input1)), 1e-12);
  const Tensor mag2 = opd::add(sum_last(opd::mul(input2, input2)), 1e-12);
  const Tensor cos = opd::div(prod_sum, opd::sqrt(opd::mul(mag1, mag2)));
  const Tensor zeros = opd::zeros_like(cos);
  const Tensor pos = opd::add(opd::neg(cos), 1);
  const Tensor neg = opd::clamp_min(opd::sub(cos, margin), 0);
  const Tensor output = opd::add(opd::where(opd::eq(target, 1), pos, zeros),
                                 opd::where(opd::eq(target, -1), neg, zeros));
  return apply_loss_reduction(output, reduction);
}

// ---- mse_loss's out= forms ---------------------------------------------------------------------

Tensor& mse_loss_out(const Tensor& self, const Tensor& target, int64_t reduction, Tensor& out) {
  return write_result("mse_loss", opd::mse_loss(self, target, reduction), out);
}

Tensor& mse_loss_backward_grad_input(const Tensor& grad_output, const Tensor& self,
                                     const Tensor& target, int64_t reduction, Tensor& grad_input) {
  return write_result("mse_loss_backward",
                      opd::mse_loss_backward(grad_output, self, target, reduction), grad_input);
}

}  // namespace opd::native
