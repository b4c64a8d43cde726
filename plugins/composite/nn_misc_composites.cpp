// Small neural-network operators as PyTorch composes them (issue #32 §1): one_hot (zeros and
// scatter_), relu6 and relu6_ (hardtanh to [0, 6]), cosine_similarity and pairwise_distance
// (vector norms), scaled_dot_product_attention (PyTorch 2.x's math path: two matmuls around a
// softmax), bilinear (x1^T W x2 + b over matmul), all CompositeImplicitAutograd, so autograd sees
// the operators they call; and gelu_ and gelu.out, CompositeExplicitAutograd over gelu's kernel
// (its numerics unchanged), which autograd differentiates through gelu's derivative entry.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>
#include <vector>

#include "common/broadcast.h"
#include "common/output.h"
#include "common/type_meta_name.h"
#include "common/type_promotion.h"
#include "opd/error.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// PyTorch's validate_sdpa_input.
void check_attention_inputs(const Tensor& query, const Tensor& key, const Tensor& value,
                            const std::optional<Tensor>& attn_mask) {
  OPD_CHECK(query.scalar_type() == key.scalar_type() && query.scalar_type() == value.scalar_type(),
            "Expected query, key, and value to have the same dtype, but got query.dtype: {} "
            "key.dtype: {} and value.dtype: {} instead.",
            common::type_meta_name(query.scalar_type()), common::type_meta_name(key.scalar_type()),
            common::type_meta_name(value.scalar_type()));
  OPD_CHECK(query.device() == key.device() && query.device() == value.device(),
            "Expected query, key, and value to have the same device type, but got query.device: "
            "{} key.device: {} and value.device: {} instead.",
            query.device(), key.device(), value.device());
  OPD_CHECK(query.dim() >= 2 && key.dim() >= 2 && value.dim() >= 2,
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            "{} key.dim: {} and value.dim: {} instead.",
            query.dim(), key.dim(), value.dim());
  if (attn_mask.has_value() && attn_mask->defined()) {
    const ScalarType m = attn_mask->scalar_type();
    OPD_CHECK(m == kBool || m == kFloat || m == query.scalar_type(),
              "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
              "attn_mask.dtype: {} and  query.dtype: {} instead.",
              common::type_meta_name(m), common::type_meta_name(query.scalar_type()));
  }
}

// A boolean mask as an additive one of `dtype`: 0 where attention is allowed (true), -inf
// where it is not.
Tensor additive_mask(const Tensor& mask, ScalarType dtype) {
  if (mask.scalar_type() != kBool) return mask;
  return opd::masked_fill(opd::zeros_like(mask, TensorOptions().dtype(dtype)),
                          opd::logical_not(mask), -std::numeric_limits<double>::infinity());
}

}  // namespace

// Note [one_hot on Meta]
// one_hot's shape depends on the data when num_classes is -1 (the largest class + 1), and its
// checks read the values; a Meta tensor has none. With num_classes given, Meta returns the
// shape a CPU call would (as PyTorch 2.x's functional path does; 1.13 refuses every Meta call);
// with -1 it refuses, with PyTorch 1.13's text.
Tensor one_hot(const Tensor& self, int64_t num_classes) {
  OPD_CHECK(self.scalar_type() == kLong, "one_hot is only applicable to index tensor.");
  std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
  if (self.numel() == 0) {
    OPD_CHECK(num_classes > 0, "Can not infer total number of classes from empty tensor.");
    shape.push_back(num_classes);
    return opd::empty(shape, TensorOptions().dtype(kLong).device(self.device()));
  }
  if (self.is_meta()) {
    OPD_CHECK(num_classes != -1, "Can not infer total number of classes from meta tensor.");
    OPD_CHECK(num_classes > 0, "Class values must be smaller than num_classes.");
  } else {
    OPD_CHECK(opd::min(self).item<int64_t>() >= 0, "Class values must be non-negative.");
    const int64_t largest = opd::max(self).item<int64_t>();
    if (num_classes == -1) {
      num_classes = largest + 1;
    } else {
      OPD_CHECK(num_classes > largest, "Class values must be smaller than num_classes.");
    }
  }
  shape.push_back(num_classes);
  Tensor result = opd::zeros(shape, TensorOptions().dtype(kLong).device(self.device()));
  result.scatter_(-1, opd::unsqueeze(self, -1), 1);
  return result;
}

Tensor relu6(const Tensor& self) { return opd::hardtanh(self, 0, 6); }

Tensor& relu6_(Tensor& self) { return opd::hardtanh_(self, 0, 6); }

// gelu's in-place and out= forms write gelu's result, as PyTorch's structured group would: the
// written tensor must not overlap itself, and out= keeps self's dtype (TensorIterator's rule).
Tensor& gelu_(Tensor& self, std::string_view approximate) {
  common::check_no_internal_overlap(self);
  self.copy_(opd::gelu(self, approximate));
  return self;
}

Tensor& gelu_out(const Tensor& self, std::string_view approximate, Tensor& out) {
  OPD_CHECK(out.scalar_type() == self.scalar_type(), "Found dtype {} but expected {}",
            out.scalar_type(), self.scalar_type());
  common::check_no_internal_overlap(out);
  const Tensor result = opd::gelu(self, approximate);
  common::resize_output("gelu", out, result.sizes());
  out.copy_(result);
  return out;
}

// Note [cosine_similarity's clamped norms]
// PyTorch 1.13 divides each input by its own norm before the product, which keeps the result in
// [-1, 1]: s = sum(x^2) over `dim` (keepdim), clamped to eps^2 in place under NoGradGuard (no
// saved tensor reads s, so autograd never notices), then norm = sqrt(s). Its gradients of every
// order are those of sqrt(sum(x^2)) taken at the clamped value. Here the clamped rows of s are
// (s - s.detach()) + eps^2: the same value and the same derivatives, with no in-place write.
namespace {

Tensor clamped_norm(const Tensor& x, int64_t dim, double eps) {
  const std::vector<int64_t> dims{dim};
  const Tensor s = opd::sum(opd::pow(x, 2), IntArrayRef(dims), true, std::nullopt);
  const Tensor value = opd::clamp_min(s.detach(), eps * eps);
  if (!s.requires_grad()) return opd::sqrt(value);
  const Tensor s_value = s.detach();
  const Tensor clamped = opd::add(opd::sub(s, s_value), eps * eps);
  return opd::sqrt(opd::where(opd::lt(s_value, eps * eps), clamped, s));
}

}  // namespace

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  const ScalarType common_dtype = common::result_type(x1, x2);
  OPD_CHECK(is_floating_point(common_dtype),
            "expected common dtype to be floating point, yet common dtype is {}", common_dtype);
  const Tensor a0 = is_integral(x1.scalar_type(), true) ? x1.to(common_dtype) : x1;
  const Tensor b0 = is_integral(x2.scalar_type(), true) ? x2.to(common_dtype) : x2;
  const std::vector<int64_t> shape = common::infer_size(a0.sizes(), b0.sizes());
  const Tensor a = a0.sizes() == IntArrayRef(shape) ? a0 : a0.expand(shape);
  const Tensor b = b0.sizes() == IntArrayRef(shape) ? b0 : b0.expand(shape);
  const std::vector<int64_t> dims{dim};
  return opd::sum(
      opd::mul(opd::div(a, clamped_norm(a, dim, eps)), opd::div(b, clamped_norm(b, dim, eps))),
      IntArrayRef(dims), false, std::nullopt);
}

// The p-norm of x1 - x2 + eps over the last dimension of the broadcast shape.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  const int64_t last = std::max(x1.dim(), x2.dim()) - 1;
  const std::vector<int64_t> dims{last};
  return opd::norm(opd::add(opd::sub(x1, x2), eps), Scalar(p), IntArrayRef(dims), keepdim);
}

// Note [scaled_dot_product_attention's math path]
// PyTorch 2.x's _scaled_dot_product_attention_math: softmax(q k^T * scale + mask) v, with the
// scale (default 1 / sqrt(E), E = q.size(-1)) split as sqrt(scale) on q and on k^T, which keeps
// the products small in low precision; a negative scale puts its sign on q. A boolean mask
// (true: attend) becomes 0 / -inf; is_causal is the lower-triangular boolean mask of
// [L, S] and excludes an explicit mask. A fully masked row is NaN, as softmax of -inf is.
// dropout_p > 0 drops attention weights through aten::dropout (train=True), as PyTorch's.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, double dropout_p,
                                    bool is_causal, std::optional<double> scale) {
  check_attention_inputs(query, key, value, attn_mask);
  std::optional<Tensor> mask;
  if (attn_mask.has_value() && attn_mask->defined()) {
    mask = additive_mask(*attn_mask, query.scalar_type());
  }
  const bool negative = scale.has_value() && *scale < 0.0;
  const double full_scale =
      scale.has_value() ? std::abs(*scale) : 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
  const double root = std::sqrt(full_scale);
  const Tensor q = opd::mul(query, negative ? -root : root);
  if (is_causal) {
    OPD_CHECK(!mask.has_value(),
              "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
              "is_causal=True");
    const int64_t target = q.size(-2), source = key.size(-2);
    const Tensor allowed =
        opd::tril(opd::ones({target, source}, TensorOptions().dtype(kBool).device(q.device())));
    mask = additive_mask(allowed, q.scalar_type());
  }
  Tensor attn = opd::matmul(q, opd::mul(opd::transpose(key, -2, -1), root));
  if (mask.has_value()) attn.add_(*mask);
  attn = opd::softmax(attn, -1, std::nullopt);
  if (dropout_p > 0.0) attn = opd::dropout(attn, dropout_p, true);
  return opd::matmul(attn, value);
}

// out[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o], PyTorch 1.13's checks and texts;
// computed as (x1 W) . x2 over flattened batches (PyTorch's _trilinear is not an operator here).
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const std::optional<Tensor>& bias) {
  const bool has_bias = bias.has_value() && bias->defined();
  OPD_CHECK(input1.dim() == input2.dim(),
            "bilinear(): input dimensions do not match: got {} and {}", input1.dim(), input2.dim());
  for (int64_t i = 0; i + 1 < input1.dim(); ++i) {
    OPD_CHECK(input1.size(i) == input2.size(i),
              "bilinear(): input batch dimensions do not match at dim {}: got {} and {}", i,
              input1.size(i), input2.size(i));
  }
  OPD_CHECK(input1.size(-1) == weight.size(1),
            "bilinear(): input1 size does not match weight size: got {} but expected {}",
            input1.size(-1), weight.size(1));
  OPD_CHECK(input2.size(-1) == weight.size(2),
            "bilinear(): input2 size does not match weight size: got {} but expected {}",
            input2.size(-1), weight.size(2));
  OPD_CHECK(!has_bias || bias->size(0) == weight.size(0),
            "bilinear(): bias size does not match weight size: got {} but expected {}",
            has_bias ? bias->size(0) : 0, weight.size(0));
  for (const Tensor* t : {&input2, &weight}) {
    OPD_CHECK(t->scalar_type() == input1.scalar_type(), "expected scalar type {} but found {}",
              input1.scalar_type(), t->scalar_type());
  }
  std::vector<int64_t> output_size(input1.sizes().begin(), input1.sizes().end() - 1);
  output_size.push_back(weight.size(0));
  const Tensor x1 = input1.reshape({-1, input1.size(-1)});  // [B, I]
  const Tensor x2 = input2.reshape({-1, input2.size(-1)});  // [B, J]
  const Tensor x1_w = opd::matmul(x1, weight);              // [O, B, J]
  const std::vector<int64_t> last{-1};
  Tensor output =
      opd::transpose(opd::sum(opd::mul(x1_w, x2), IntArrayRef(last), false, std::nullopt), 0, 1);
  output = output.reshape(output_size);
  if (has_bias) output = opd::add(output, *bias);
  return output;
}

}  // namespace opd::native
