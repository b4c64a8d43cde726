#include "common/nn_shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>

#include "common/device_check.h"
#include "common/output.h"
#include "common/type_promotion.h"
#include "common/view_shape.h"
#include "opd/native/meta_functions.h"

namespace opd::common {

namespace {

std::string sizes_str(IntArrayRef sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

void check_floating(const char* op, ScalarType t) {
  OPD_CHECK(is_floating_point(t), "\"{}\" not implemented for '{}'", op, t);
}

// The data_ptr<T>() mismatch PyTorch's kernels report when a second tensor's dtype differs.
void check_same_dtype(ScalarType expected, ScalarType found) {
  OPD_CHECK(expected == found, "expected scalar type {} but found {}", expected, found);
}

}  // namespace

CatMeta cat_meta(TensorList tensors, int64_t dim) {
  OPD_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    OPD_CHECK(tensors[i].dim() > 0,
              "zero-dimensional tensor (at position {}) cannot be concatenated", i);
  }
  check_same_device("cat", tensors);

  CatMeta meta;
  meta.dtype = result_type(tensors);
  size_t valid = tensors.size();
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!cat_should_skip(tensors[i])) {
      valid = i;
      break;
    }
  }
  if (valid == tensors.size()) {
    // Every input is a legacy empty tensor: PyTorch leaves dim unwrapped and returns [0].
    meta.dim = dim;
    meta.sizes = {0};
    return meta;
  }

  const Tensor& first = tensors[valid];
  meta.dim = maybe_wrap_dim(dim, first.dim());
  int64_t size_at_dim = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (cat_should_skip(t)) continue;
    OPD_CHECK(t.dim() == first.dim(), "Tensors must have same number of dimensions: got {} and {}",
              first.dim(), t.dim());
    for (int64_t d = 0; d < first.dim(); ++d) {
      if (d == meta.dim) continue;
      OPD_CHECK(first.size(d) == t.size(d),
                "Sizes of tensors must match except in dimension {}. Expected size {} but got "
                "size {} for tensor number {} in the list.",
                meta.dim, first.size(d), t.size(d), i);
    }
    size_at_dim += t.size(meta.dim);
  }
  meta.sizes = first.sizes().vec();
  meta.sizes[meta.dim] = size_at_dim;
  return meta;
}

int64_t softmax_meta(const char* op, const Tensor& self, int64_t dim, bool half_to_float,
                     ScalarType* out_dtype) {
  const int64_t wrapped = maybe_wrap_dim(dim, self.dim());
  if (half_to_float) {
    OPD_CHECK(self.scalar_type() == kHalf, "conversion is supported for Half type only");
  }
  check_floating(op, self.scalar_type());
  *out_dtype = half_to_float ? kFloat : self.scalar_type();
  return wrapped;
}

int64_t softmax_backward_meta(const char* op, const char* check_name, const Tensor& grad,
                              const Tensor& output, int64_t dim, ScalarType input_dtype,
                              ScalarType* out_dtype) {
  const std::array<Tensor, 2> args{grad, output};
  check_same_device(op, args);
  OPD_CHECK(grad.sizes() == output.sizes(),
            "Expected tensor for argument #1 'grad' to have same size as tensor for argument #2 "
            "'output'; but {} does not equal {} (while checking arguments for {})",
            sizes_str(grad.sizes()), sizes_str(output.sizes()), check_name);
  const int64_t wrapped = maybe_wrap_dim(dim, grad.dim());
  check_same_dtype(grad.scalar_type(), output.scalar_type());
  check_floating(op, grad.scalar_type());
  const bool half_to_float = grad.scalar_type() == kFloat && input_dtype == kHalf;
  *out_dtype = half_to_float ? kHalf : grad.scalar_type();
  return wrapped;
}

Reduction to_reduction(const char* op, int64_t reduction) {
  OPD_CHECK_T(ValueError, reduction >= 0 && reduction <= 2,
              "{}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {}", op, reduction);
  return static_cast<Reduction>(reduction);
}

namespace {

// The checks nll_loss_forward and nll_loss_backward share (PyTorch's meta functions).
NllLossMeta nll_loss_common(const char* op, const Tensor& self, const Tensor& target,
                            const std::optional<Tensor>& weight, int64_t reduction) {
  NllLossMeta meta;
  meta.reduction = to_reduction(op, reduction);
  OPD_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
  OPD_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  const bool no_batch_dim = self.dim() == 1 && target.dim() == 0;
  OPD_CHECK(no_batch_dim || (target.dim() == 1 && self.size(0) == target.size(0)),
            "size mismatch (got input: {}, target: {})", sizes_str(self.sizes()),
            sizes_str(target.sizes()));
  meta.n_classes = self.size(-1);
  meta.batch_size = self.dim() == 1 ? 1 : self.size(0);
  const bool has_weight = weight && weight->defined();
  if (has_weight) {
    OPD_CHECK(weight->dim() == 1 && weight->numel() == meta.n_classes,
              "weight tensor should be defined either for all {} classes or no classes but got "
              "weight tensor of shape: {}",
              meta.n_classes, sizes_str(weight->sizes()));
  }
  check_floating(op, self.scalar_type());
  const ScalarType tt = target.scalar_type();
  OPD_CHECK(tt == kLong || tt == kByte, "expected scalar type Long but found {}", tt);
  if (has_weight) check_same_dtype(self.scalar_type(), weight->scalar_type());
  return meta;
}

}  // namespace

NllLossMeta nll_loss_forward_meta(const Tensor& self, const Tensor& target,
                                  const std::optional<Tensor>& weight, int64_t reduction) {
  if (weight && weight->defined()) {
    const std::array<Tensor, 3> args{self, target, *weight};
    check_same_device("nll_loss_forward", args);
  } else {
    const std::array<Tensor, 2> args{self, target};
    check_same_device("nll_loss_forward", args);
  }
  NllLossMeta meta = nll_loss_common("nll_loss_forward", self, target, weight, reduction);
  if (meta.reduction == Reduction::None && self.dim() == 2) meta.output_sizes = {meta.batch_size};
  return meta;
}

NllLossMeta nll_loss_backward_meta(const Tensor& grad_output, const Tensor& self,
                                   const Tensor& target, const std::optional<Tensor>& weight,
                                   int64_t reduction, const Tensor& total_weight) {
  std::vector<Tensor> args{grad_output, self, target, total_weight};
  if (weight && weight->defined()) args.push_back(*weight);
  check_same_device("nll_loss_backward", args);
  NllLossMeta meta = nll_loss_common("nll_loss_backward", self, target, weight, reduction);
  OPD_CHECK(total_weight.numel() == 1,
            "expected total_weight to be a  single element tensor, got: {} ({} elements)",
            sizes_str(total_weight.sizes()), total_weight.numel());
  if (meta.reduction == Reduction::None && self.dim() == 2) {
    const int64_t got = grad_output.dim() > 0 ? grad_output.size(0) : 1;
    OPD_CHECK(grad_output.dim() == 1 && got == meta.batch_size,
              "Expected a tensor of dimension 1 and tensor.size[0] == {} but got: dimension {} "
              "and tensor.size[0] == {}",
              meta.batch_size, grad_output.dim(), got);
  } else {
    OPD_CHECK(grad_output.dim() <= 1 && grad_output.numel() == 1,
              "Expected a single element grad_output tensor, but got: {}",
              sizes_str(grad_output.sizes()));
  }
  check_same_dtype(self.scalar_type(), grad_output.scalar_type());
  check_same_dtype(self.scalar_type(), total_weight.scalar_type());
  meta.output_sizes = self.sizes().vec();
  return meta;
}

void check_nll_loss_batch(const Tensor& self, const Tensor& target) {
  OPD_CHECK_T(ValueError, self.dim() >= 1, "Expected 1 or more dimensions (got {})", self.dim());
  if (self.dim() == 1 || target.dim() == 0) return;
  OPD_CHECK_T(ValueError, self.size(0) == target.size(0),
              "Expected input batch_size ({}) to match target batch_size ({}).", self.size(0),
              target.size(0));
}

void check_indices_long_or_int(const Tensor& indices, int position, std::string_view op) {
  const ScalarType it = indices.scalar_type();
  OPD_CHECK(it == kLong || it == kInt,
            "Expected tensor for argument #{} 'indices' to have one of the following scalar "
            "types: Long, Int; but got {} instead (while checking arguments for {})",
            position, legacy_type_name(it, indices.device()), op);
}

void embedding_renorm_check(const Tensor& self, const Tensor& indices) {
  OPD_CHECK(self.dim() == 2,
            "Expected 2-dimensional tensor, but got {}-dimensional tensor for argument #1 'self' "
            "(while checking arguments for embedding_renorm_)",
            self.dim());
  check_indices_long_or_int(indices, 2, "embedding_renorm_");
  const ScalarType t = self.scalar_type();
  OPD_CHECK(indices.numel() == 0 || is_floating_point(t) || is_complex(t),
            "norm(): input dtype should be either floating point or complex. Got {} instead.",
            to_string(t));
}

}  // namespace opd::common

// The structured softmax operators' meta functions (opd/native/meta_functions.h).
namespace opd {

namespace {

Tensor softmax_output(const char* op, const Tensor& out, const Tensor& self, int64_t dim,
                      bool half_to_float) {
  // PyTorch's CPU kernels refuse it before anything else (its CUDA kernels implement it); a Meta
  // tensor cannot know.
  OPD_CHECK(!half_to_float || !self.is_cpu(),
            "softmax with half to float conversion is not supported on CPU");
  ScalarType dtype;
  common::softmax_meta(op, self, dim, half_to_float, &dtype);
  return common::structured_output(op, out, self.sizes(), dtype, self.device());
}

Tensor softmax_backward_output(const char* op, const char* check_name, const Tensor& out,
                               const Tensor& grad, const Tensor& output, int64_t dim,
                               ScalarType input_dtype) {
  ScalarType dtype;
  common::softmax_backward_meta(op, check_name, grad, output, dim, input_dtype, &dtype);
  return common::structured_output(op, out, grad.sizes(), dtype, grad.device());
}

}  // namespace

Tensor meta::_softmax(const Tensor& out, const Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_output("_softmax", out, self, dim, half_to_float);
}

Tensor meta::_log_softmax(const Tensor& out, const Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_output("_log_softmax", out, self, dim, half_to_float);
}

Tensor meta::_softmax_backward_data(const Tensor& grad_input, const Tensor& grad_output,
                                    const Tensor& output, int64_t dim, ScalarType input_dtype) {
  return softmax_backward_output("_softmax_backward_data", "softmax_backward", grad_input,
                                 grad_output, output, dim, input_dtype);
}

Tensor meta::_log_softmax_backward_data(const Tensor& out, const Tensor& grad_output,
                                        const Tensor& output, int64_t dim, ScalarType input_dtype) {
  return softmax_backward_output("_log_softmax_backward_data", "log_softmax_backward", out,
                                 grad_output, output, dim, input_dtype);
}

}  // namespace opd
