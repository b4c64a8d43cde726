// The losses: nll_loss over nll_loss_forward; nll_loss_nd over it and nll_loss2d_forward;
// cross_entropy_loss as log_softmax + nll_loss_nd, with
// label smoothing and class-probability targets; mse_loss and its backward from elementwise
// operators and reductions. `reduction` is 0 (none), 1 (mean) or 2 (sum).

#include <cmath>
#include <tuple>
#include <vector>

#include "common/nn_shape.h"
#include "common/output.h"
#include "common/type_promotion.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

using common::Reduction;
using common::shape_str;

bool is(int64_t reduction, Reduction r) { return reduction == static_cast<int64_t>(r); }

Tensor sum_dim(const Tensor& t, int64_t dim) {
  const std::vector<int64_t> dims{dim};
  return opd::sum(t, IntArrayRef(dims), false, std::nullopt);
}

// A [C] class weight viewed so that it broadcasts along `class_dim` of an ndim-D input.
Tensor class_weight_view(const Tensor& weight, int64_t ndim, int64_t class_dim) {
  if (ndim <= 1) return weight;
  std::vector<int64_t> shape(ndim, 1);
  shape[class_dim] = weight.size(0);
  return weight.view(shape);
}

// PyTorch's nll_loss_nd, returning (output, total_weight): nll_loss_forward for 1-D and 2-D
// inputs, nll_loss2d_forward for 4-D ones; a 3-D or 5-D and larger [N, C, d1, ..., dk] input
// with an [N, d1, ..., dk] target is viewed as [N, C, 1, d1 * ... * dk] (with an
// [N, 1, d1 * ... * dk] target) for nll_loss2d_forward, and with reduction none the losses take
// the target's shape again.
std::tuple<Tensor, Tensor> nll_loss_nd_forward(const Tensor& self, const Tensor& target,
                                               const std::optional<Tensor>& weight,
                                               int64_t reduction, int64_t ignore_index) {
  common::check_nll_loss_batch(self, target);
  if (self.dim() <= 2) return opd::nll_loss_forward(self, target, weight, reduction, ignore_index);
  if (self.dim() == 4)
    return opd::nll_loss2d_forward(self, target, weight, reduction, ignore_index);
  const IntArrayRef sizes = self.sizes();
  const int64_t n = sizes[0], c = sizes[1];
  std::vector<int64_t> out_sizes{n};
  out_sizes.insert(out_sizes.end(), sizes.begin() + 2, sizes.end());
  OPD_CHECK(target.sizes() == IntArrayRef(out_sizes), "Expected target size {}, got {}",
            shape_str(out_sizes), shape_str(target.sizes()));
  const Tensor input = self.numel() > 0 ? self.contiguous().view({n, c, 1, -1})
                                        : self.contiguous().view({n, c, 0, 0});
  const Tensor target4 = target.numel() > 0 ? target.contiguous().view({n, 1, -1})
                                            : target.contiguous().view({n, 0, 0});
  auto [output, total_weight] =
      opd::nll_loss2d_forward(input, target4, weight, reduction, ignore_index);
  if (is(reduction, Reduction::None)) output = output.view(out_sizes);
  return {output, total_weight};
}

// Targets that are class probabilities, of self's shape.
Tensor cross_entropy_prob_target(const Tensor& self, const Tensor& target,
                                 const std::optional<Tensor>& weight, int64_t reduction,
                                 double label_smoothing) {
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  const int64_t n_classes = self.size(class_dim);
  const bool has_weight = weight.has_value() && weight->defined();
  OPD_CHECK(!has_weight || (weight->dim() == 1 && weight->numel() == n_classes),
            "cross_entropy: weight tensor should be defined either for all {} classes or no "
            "classes but got weight tensor of shape: {}",
            n_classes, shape_str(weight->sizes()));
  const Tensor input = opd::log_softmax(self, class_dim, self.scalar_type());
  Tensor probabilities = target;
  if (label_smoothing > 0.0) {
    OPD_CHECK(label_smoothing <= 1.0, "label_smoothing must be between 0.0 and 1.0. Got: {}",
              label_smoothing);
    probabilities = opd::add(opd::mul(target, 1.0 - label_smoothing), label_smoothing / n_classes);
  }
  Tensor terms = opd::mul(input, probabilities);
  if (has_weight) terms = opd::mul(terms, class_weight_view(*weight, input.dim(), class_dim));
  if (is(reduction, Reduction::Mean)) {
    Tensor total = opd::neg(opd::sum(terms));
    if (input.numel() == 0) {
      total.fill_(NAN);
      return total;
    }
    return opd::div(total, input.numel() / n_classes);
  }
  if (is(reduction, Reduction::Sum)) return opd::neg(opd::sum(terms));
  OPD_CHECK(is(reduction, Reduction::None),
            "Invalid reduction type encountered in cross_entropy: {}", reduction);
  return opd::neg(sum_dim(terms, class_dim));
}

// Class-index targets with label_smoothing in (0, 1]: the nll loss blended with the mean
// negative log-probability over all classes; ignored targets contribute to neither.
Tensor cross_entropy_label_smoothing(const Tensor& self, const Tensor& target,
                                     const std::optional<Tensor>& weight, int64_t reduction,
                                     int64_t ignore_index, double label_smoothing) {
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  const Tensor input = opd::log_softmax(self, class_dim, self.scalar_type());
  auto [nll, total_weight] = nll_loss_nd_forward(input, target, weight, reduction, ignore_index);
  const int64_t n_classes = input.size(class_dim);

  const bool has_weight = weight.has_value() && weight->defined();
  const Tensor weighted =
      has_weight ? opd::mul(input, class_weight_view(*weight, input.dim(), class_dim)) : input;
  Tensor smooth_loss = opd::neg(sum_dim(weighted, class_dim));
  const Tensor zero = opd::zeros(IntArrayRef{}, smooth_loss.scalar_type(), std::nullopt,
                                 smooth_loss.device(), std::nullopt);
  smooth_loss = opd::where(opd::eq(target, ignore_index), zero, smooth_loss);

  Tensor smooth;
  if (is(reduction, Reduction::Mean)) {
    // Normalised as the nll term is: by the total weight of the targets not ignored, which is
    // what nll_loss_forward reports (their count when unweighted).
    smooth = opd::div(opd::sum(smooth_loss), total_weight);
  } else if (is(reduction, Reduction::Sum)) {
    smooth = opd::sum(smooth_loss);
  } else {
    smooth = smooth_loss;
  }
  return opd::add(opd::mul(nll, 1.0 - label_smoothing),
                  opd::mul(smooth, label_smoothing / n_classes));
}

}  // namespace

Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                int64_t reduction, int64_t ignore_index) {
  // aten::nll_loss takes 1-D and 2-D inputs only, as PyTorch's (F.nll_loss, like
  // cross_entropy_loss here, reshapes larger ones first).
  return std::get<0>(opd::nll_loss_forward(self, target, weight, reduction, ignore_index));
}

Tensor nll_loss_nd(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                   int64_t reduction, int64_t ignore_index) {
  return std::get<0>(nll_loss_nd_forward(self, target, weight, reduction, ignore_index));
}

Tensor cross_entropy_loss(const Tensor& self, const Tensor& target,
                          const std::optional<Tensor>& weight, int64_t reduction,
                          int64_t ignore_index, double label_smoothing) {
  if (self.sizes() == target.sizes()) {
    OPD_CHECK(is_floating_point(target.scalar_type()),
              "Expected floating point type for target with class probabilities, got {}",
              target.scalar_type());
    OPD_CHECK(ignore_index < 0, "ignore_index is not supported for floating point target");
    return cross_entropy_prob_target(self, target, weight, reduction, label_smoothing);
  }
  if (label_smoothing > 0.0) {
    OPD_CHECK(label_smoothing <= 1.0, "label_smoothing must be between 0.0 and 1.0. Got: {}",
              label_smoothing);
    return cross_entropy_label_smoothing(self, target, weight, reduction, ignore_index,
                                         label_smoothing);
  }
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  return opd::nll_loss_nd(opd::log_softmax(self, class_dim, self.scalar_type()), target, weight,
                          reduction, ignore_index);
}

Tensor mse_loss(const Tensor& self, const Tensor& target, int64_t reduction) {
  const Reduction r = common::to_reduction("mse_loss", reduction);
  const ScalarType dtype = common::result_type(self, target);
  // PyTorch 1.13's CPU kernel: float, double and Half.
  OPD_CHECK(is_floating_point(dtype) && dtype != kBFloat16, "\"mse_cpu\" not implemented for '{}'",
            to_string(dtype));
  const Tensor diff = opd::sub(self, target);
  const Tensor loss = opd::mul(diff, diff);
  if (r == Reduction::Mean) return opd::mean(loss);
  if (r == Reduction::Sum) return opd::sum(loss);
  return loss;
}

// d/dself of mse_loss: 2 (self - target) grad_output, divided by the element count for mean.
Tensor mse_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                         int64_t reduction) {
  const Reduction r = common::to_reduction("mse_loss_backward", reduction);
  // PyTorch 1.13's CPU kernel: float and double.
  const ScalarType dtype = common::result_type(self, target);
  OPD_CHECK(dtype == kFloat || dtype == kDouble,
            "\"mse_backward_cpu_out\" not implemented for '{}'", to_string(dtype));
  const double norm = r == Reduction::Mean ? 2.0 / static_cast<double>(self.numel()) : 2.0;
  return opd::mul(opd::mul(opd::sub(self, target), norm), grad_output);
}

}  // namespace opd::native
