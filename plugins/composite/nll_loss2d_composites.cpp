// nll_loss over images (Operators II): nll_loss2d_forward reads an [N, C, H, W] input with an
// [N, H, W] target as N * H * W rows of C classes (the class dimension moved last) and calls
// nll_loss_forward, whose kernels check the targets; with reduction none the losses take the
// target's shape again. CompositeExplicitAutograd, as PyTorch's CPU kernel is one operator to
// autograd (its derivative is nll_loss2d_backward, manifests/derivatives.yaml); its backward is
// CompositeImplicitAutograd over nll_loss_backward, so second-order gradients follow. nll_loss2d
// and the out= forms of the nll losses go through the functional operators.

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "common/output.h"
#include "loss_out.h"
#include "opd/error.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

using common::shape_str;
using loss::write_result;

// PyTorch's check_inputs_nll_loss2d (its texts, the unclosed parenthesis included).
void check_nll_loss2d_inputs(const Tensor& self, const Tensor& target,
                             const std::optional<Tensor>& weight) {
  OPD_CHECK(target.dim() == 3,
            "only batches of spatial targets supported (3D tensors) but got targets of "
            "dimension: {}",
            target.dim());
  OPD_CHECK(self.dim() == 4,
            "only batches of spatial inputs supported (4D tensors), but got input of dimension: "
            "{}",
            self.dim());
  OPD_CHECK(!weight.has_value() || !weight->defined() || weight->numel() == self.size(1),
            "weight tensor should be defined either for all or no classes");
  OPD_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) &&
                self.size(3) == target.size(2),
            "size mismatch (got input: {} , target: {}", shape_str(self.sizes()),
            shape_str(target.sizes()));
}

// [N, C, H, W] as [N * H * W, C].
Tensor rows_of_classes(const Tensor& self) {
  return self.permute({0, 2, 3, 1})
      .reshape({self.size(0) * self.size(2) * self.size(3), self.size(1)});
}

}  // namespace

std::tuple<Tensor, Tensor> nll_loss2d_forward(const Tensor& self, const Tensor& target,
                                              const std::optional<Tensor>& weight,
                                              int64_t reduction, int64_t ignore_index) {
  check_nll_loss2d_inputs(self, target, weight);
  auto [output, total_weight] = opd::nll_loss_forward(
      rows_of_classes(self), target.reshape({target.numel()}), weight, reduction, ignore_index);
  if (reduction == 0) output = output.view(target.sizes());
  return {output, total_weight};
}

std::tuple<Tensor&, Tensor&> nll_loss2d_forward_output(const Tensor& self, const Tensor& target,
                                                       const std::optional<Tensor>& weight,
                                                       int64_t reduction, int64_t ignore_index,
                                                       Tensor& output, Tensor& total_weight) {
  auto [out, tw] = opd::nll_loss2d_forward(self, target, weight, reduction, ignore_index);
  write_result("nll_loss2d_forward", out, output);
  write_result("nll_loss2d_forward", tw, total_weight);
  return {output, total_weight};
}

Tensor nll_loss2d_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                           const std::optional<Tensor>& weight, int64_t reduction,
                           int64_t ignore_index, const Tensor& total_weight) {
  check_nll_loss2d_inputs(self, target, weight);
  if (reduction == 0) {
    OPD_CHECK(grad_output.dim() == 3 && grad_output.sizes() == target.sizes(),
              "size mismatch (got grad_output: {} target: {}", shape_str(grad_output.sizes()),
              shape_str(target.sizes()));
  }
  const Tensor go = reduction == 0 ? grad_output.reshape({grad_output.numel()}) : grad_output;
  const Tensor rows =
      opd::nll_loss_backward(go, rows_of_classes(self), target.reshape({target.numel()}), weight,
                             reduction, ignore_index, total_weight);
  return rows.view({self.size(0), self.size(2), self.size(3), self.size(1)})
      .permute({0, 3, 1, 2})
      .contiguous();
}

Tensor& nll_loss2d_backward_grad_input(const Tensor& grad_output, const Tensor& self,
                                       const Tensor& target, const std::optional<Tensor>& weight,
                                       int64_t reduction, int64_t ignore_index,
                                       const Tensor& total_weight, Tensor& grad_input) {
  return write_result("nll_loss2d_backward",
                      opd::nll_loss2d_backward(grad_output, self, target, weight, reduction,
                                               ignore_index, total_weight),
                      grad_input);
}

Tensor nll_loss2d(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                  int64_t reduction, int64_t ignore_index) {
  return std::get<0>(opd::nll_loss2d_forward(self, target, weight, reduction, ignore_index));
}

Tensor& nll_loss2d_out(const Tensor& self, const Tensor& target,
                       const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                       Tensor& out) {
  return write_result("nll_loss2d", opd::nll_loss2d(self, target, weight, reduction, ignore_index),
                      out);
}

Tensor& nll_loss_out(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                     int64_t reduction, int64_t ignore_index, Tensor& out) {
  return write_result("nll_loss", opd::nll_loss(self, target, weight, reduction, ignore_index),
                      out);
}

std::tuple<Tensor&, Tensor&> nll_loss_forward_output(const Tensor& self, const Tensor& target,
                                                     const std::optional<Tensor>& weight,
                                                     int64_t reduction, int64_t ignore_index,
                                                     Tensor& output, Tensor& total_weight) {
  auto [out, tw] = opd::nll_loss_forward(self, target, weight, reduction, ignore_index);
  write_result("nll_loss_forward", out, output);
  write_result("nll_loss_forward", tw, total_weight);
  return {output, total_weight};
}

Tensor& nll_loss_backward_grad_input(const Tensor& grad_output, const Tensor& self,
                                     const Tensor& target, const std::optional<Tensor>& weight,
                                     int64_t reduction, int64_t ignore_index,
                                     const Tensor& total_weight, Tensor& grad_input) {
  return write_result("nll_loss_backward",
                      opd::nll_loss_backward(grad_output, self, target, weight, reduction,
                                             ignore_index, total_weight),
                      grad_input);
}

}  // namespace opd::native
