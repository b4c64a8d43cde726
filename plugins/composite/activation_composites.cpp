// The activation functions PyTorch 1.13 writes over other operators (Operators II):
// CompositeExplicitAutograd hardtanh (clamp with bounds that do not promote; autograd records
// hardtanh_backward) and celu (elu with input_scale 1 / alpha); CompositeImplicitAutograd selu
// (elu with SELU's constants), log_sigmoid (log_sigmoid_forward's output), and prelu,
// prelu_backward and glu_backward, composed of differentiable operators here (PyTorch 1.13 has
// CPU kernels for them; the values are the same, and the gradients of every order follow); and
// the out= forms of the unstructured operators (glu_backward, hardtanh_backward,
// log_sigmoid_backward, log_sigmoid_forward), CompositeExplicitAutograd over the functional ones.

#include <cstdint>
#include <tuple>
#include <vector>

#include "common/activation.h"
#include "common/output.h"
#include "common/type_dispatch.h"
#include "common/type_promotion.h"
#include "opd/error.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// hardtanh's bounds: integral tensors take them as integers (truncated), so that they never
// promote, and an unsigned tensor refuses negative ones.
std::pair<Scalar, Scalar> hardtanh_bounds(const Tensor& self, const Scalar& min_val,
                                          const Scalar& max_val) {
  OPD_CHECK(self.scalar_type() != kBool, "Bool inputs not supported for hardtanh");
  if (!is_integral(self.scalar_type(), /*include_bool=*/false)) return {min_val, max_val};
  const int64_t lo = min_val.to<int64_t>(), hi = max_val.to<int64_t>();
  OPD_CHECK(self.scalar_type() != kByte || (lo >= 0 && hi >= 0),
            "cannot do hardtanh on an unsigned type with negative limits");
  return {Scalar(lo), Scalar(hi)};
}

double celu_inverse_alpha(const Scalar& alpha) {
  const double a = alpha.to<double>();
  OPD_CHECK(a != 0.0, "ZeroDivisionError: alpha cannot be 0 for CELU");
  return 1.0 / a;
}

constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

// prelu's weight as a tensor broadcasting against self: one value, or one per channel (dim 1).
Tensor prelu_weight(const Tensor& self, const Tensor& weight) {
  const int64_t n = weight.numel();
  if (n != 1) {
    OPD_CHECK(self.dim() > 0, "Not allow zero-dim input tensor.");
    const int64_t channels = self.dim() > 1 ? self.size(1) : 1;
    OPD_CHECK(channels == n,
              "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
              "{} and channel size = {}.",
              n, channels);
  }
  OPD_CHECK(weight.dim() <= 1,
            "prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = {}",
            weight.dim());
  OPD_CHECK(weight.scalar_type() == self.scalar_type(), "Found dtype {} but expected {}",
            weight.scalar_type(), self.scalar_type());
  common::check_dtype_in("prelu_cpu", self.scalar_type(), common::kActivationTypes);
  if (n == 1 || self.dim() < 2) return weight.reshape({});
  std::vector<int64_t> shape(static_cast<size_t>(self.dim()), 1);
  shape[1] = n;
  return weight.reshape(shape);
}

// The out= forms PyTorch 1.13 has for the unstructured operators: the functional result, which
// must cast to out's dtype ("result type Float can't be cast to the desired output type Long"),
// written into `out`, resized by resize_output (with its warning when out had elements).
Tensor& write_result(std::string_view op, const Tensor& result, Tensor& out) {
  OPD_CHECK(common::can_cast(result.scalar_type(), out.scalar_type()),
            "result type {} can't be cast to the desired output type {}", result.scalar_type(),
            out.scalar_type());
  common::resize_output(op, out, result.sizes());
  out.copy_(result);
  return out;
}

}  // namespace

Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  auto [lo, hi] = hardtanh_bounds(self, min_val, max_val);
  return opd::clamp(self, lo, hi);
}

Tensor& hardtanh_(Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  auto [lo, hi] = hardtanh_bounds(self, min_val, max_val);
  return opd::clamp_(self, lo, hi);
}

Tensor& hardtanh_out(const Tensor& self, const Scalar& min_val, const Scalar& max_val,
                     Tensor& out) {
  auto [lo, hi] = hardtanh_bounds(self, min_val, max_val);
  return opd::clamp_out(out, self, lo, hi);
}

Tensor celu(const Tensor& self, const Scalar& alpha) {
  return opd::elu(self, alpha, 1.0, celu_inverse_alpha(alpha));
}

Tensor& celu_(Tensor& self, const Scalar& alpha) {
  return opd::elu_(self, alpha, 1.0, celu_inverse_alpha(alpha));
}

Tensor selu(const Tensor& self) { return opd::elu(self, kSeluAlpha, kSeluScale); }

Tensor& selu_(Tensor& self) { return opd::elu_(self, kSeluAlpha, kSeluScale); }

Tensor log_sigmoid(const Tensor& self) { return std::get<0>(opd::log_sigmoid_forward(self)); }

Tensor& log_sigmoid_out(const Tensor& self, Tensor& out) {
  Tensor result = std::get<0>(opd::log_sigmoid_forward(self));
  common::resize_output("log_sigmoid", out, result.sizes());
  out.copy_(result);
  return out;
}

// self where positive, weight * self elsewhere (NaN stays NaN).
Tensor prelu(const Tensor& self, const Tensor& weight) {
  Tensor w = prelu_weight(self, weight);
  return opd::where(opd::gt(self, 0), self, w * self);
}

// BFloat16 computes in float and rounds each result once, as PyTorch's kernel (the weight's
// gradient sums products).
std::tuple<Tensor, Tensor> prelu_backward(const Tensor& grad_output, const Tensor& self,
                                          const Tensor& weight) {
  if (self.scalar_type() == kBFloat16 && weight.scalar_type() == kBFloat16) {
    auto [grad_self, grad_weight] =
        native::prelu_backward(grad_output.to(kFloat), self.to(kFloat), weight.to(kFloat));
    return {grad_self.to(kBFloat16), grad_weight.to(kBFloat16)};
  }
  Tensor w = prelu_weight(self, weight);
  Tensor positive = opd::gt(self, 0);
  Tensor grad_self = opd::where(positive, grad_output, w * grad_output);
  Tensor per_element = opd::where(positive, opd::zeros_like(self), self * grad_output);
  Tensor grad_weight;
  if (weight.numel() == 1 || self.dim() < 2) {
    grad_weight = per_element.sum().reshape(weight.sizes());
  } else {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (d != 1) dims.push_back(d);
    }
    grad_weight = per_element.sum(IntArrayRef(dims)).reshape(weight.sizes());
  }
  return {std::move(grad_self), std::move(grad_weight)};
}

// d glu / da = sigmoid(b), d glu / db = a sigmoid(b) (1 - sigmoid(b)); the two halves of the
// gradient joined along dim.
Tensor glu_backward(const Tensor& grad_output, const Tensor& self, int64_t dim) {
  common::GluHalves h = common::glu_halves(self, dim);
  OPD_CHECK(!is_complex(self.scalar_type()), "\"glu_backward_cpu\" not implemented for '{}'",
            self.scalar_type());
  OPD_CHECK(is_floating_point(self.scalar_type()),
            "result type Float can't be cast to the desired output type {}", self.scalar_type());
  Tensor s = opd::sigmoid(h.second);
  Tensor grad_first = s * grad_output;
  Tensor grad_second = (1 - s) * s * h.first * grad_output;
  return opd::cat({grad_first, grad_second}, h.dim);
}

Tensor& glu_backward_grad_input(const Tensor& grad_output, const Tensor& self, int64_t dim,
                                Tensor& grad_input) {
  return write_result("glu_backward", opd::glu_backward(grad_output, self, dim), grad_input);
}

Tensor& hardtanh_backward_grad_input(const Tensor& grad_output, const Tensor& self,
                                     const Scalar& min_val, const Scalar& max_val,
                                     Tensor& grad_input) {
  return write_result("hardtanh_backward",
                      opd::hardtanh_backward(grad_output, self, min_val, max_val), grad_input);
}

Tensor& log_sigmoid_backward_grad_input(const Tensor& grad_output, const Tensor& self,
                                        const Tensor& buffer, Tensor& grad_input) {
  return write_result("log_sigmoid_backward", opd::log_sigmoid_backward(grad_output, self, buffer),
                      grad_input);
}

std::tuple<Tensor&, Tensor&> log_sigmoid_forward_output(const Tensor& self, Tensor& output,
                                                        Tensor& buffer) {
  auto [out, buf] = opd::log_sigmoid_forward(self);
  write_result("log_sigmoid_forward", out, output);
  write_result("log_sigmoid_forward", buf, buffer);
  return {output, buffer};
}

}  // namespace opd::native
