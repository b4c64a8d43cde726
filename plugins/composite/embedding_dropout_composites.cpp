// embedding and its backward operators, and the dropout family, as PyTorch 1.13 composes them.
//
// Note [Dropout on the CPU]
// PyTorch 1.13's dropout, feature_dropout and alpha_dropout (and their in-place forms) do not call
// native_dropout on the CPU: they draw a noise tensor with bernoulli_(1 - p) (of the input's shape,
// or [N, C, 1, ...] for the feature forms), scale it, and multiply; p = 0, train = false or an
// empty input give the input itself, p = 1 multiplies by a zero. native_dropout (PyTorch: a CPU
// kernel) is the same draw into a bool mask, here a composite over bernoulli_ so that every
// backend (Meta included) has it; the draws come from the generator (manual_seed reproducible).

#include <cmath>
#include <tuple>

#include "common/nn_shape.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

// ---- embedding ----------------------------------------------------------------------------------

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t, bool, bool) {
  OPD_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  common::check_indices_long_or_int(indices, 1, "embedding");
  if (indices.dim() == 1) return opd::index_select(weight, 0, indices);
  std::vector<int64_t> sizes(indices.sizes().begin(), indices.sizes().end());
  sizes.push_back(weight.size(1));
  return opd::index_select(weight, 0, indices.reshape({-1})).view(sizes);
}

Tensor embedding_backward(const Tensor& grad, const Tensor& indices, int64_t num_weights,
                          int64_t padding_idx, bool scale_grad_by_freq, bool sparse) {
  OPD_CHECK(!sparse, "embedding_backward: sparse gradients are not supported (no sparse tensors)");
  return opd::embedding_dense_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq);
}

// The sum of grad's rows into the rows of a [num_weights, D] gradient, index_add_ as PyTorch's
// CPU kernel; rows of padding_idx get nothing, and with scale_grad_by_freq each row is divided
// by the number of times its index occurs.
Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices,
                                int64_t num_weights, int64_t padding_idx, bool scale_grad_by_freq) {
  common::check_indices_long_or_int(indices, 1, "embedding_backward");
  const int64_t D = grad_output.size(-1);
  const Tensor idx = indices.reshape({-1});
  Tensor rows = grad_output.reshape({idx.numel(), D});
  if (padding_idx >= 0) rows = rows.masked_fill(opd::eq(idx, padding_idx).unsqueeze(1), 0.0);
  if (scale_grad_by_freq) {
    Tensor counts = opd::zeros(
        {num_weights}, TensorOptions(grad_output.scalar_type()).device(grad_output.device()));
    counts.index_add_(0, idx, opd::ones_like(idx, TensorOptions(grad_output.scalar_type())));
    rows = rows.div(opd::index_select(counts, 0, idx).unsqueeze(1));
  }
  Tensor result = opd::zeros({num_weights, D},
                             TensorOptions(grad_output.scalar_type()).device(grad_output.device()));
  result.index_add_(0, idx, rows);
  return result;
}

// ---- dropout ------------------------------------------------------------------------------------

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p,
                                          std::optional<bool> train) {
  const TensorOptions bool_options = TensorOptions(kBool).device(input.device());
  // An empty input: its mask has the input's dtype, as PyTorch 1.13's CPU kernel gives it.
  if (input.numel() == 0) return {input, opd::empty_like(input)};
  if (!train.has_value() || *train) {
    const double p1m = 1. - p;
    const double scale = p1m == 0 ? 0. : 1. / p1m;
    Tensor mask = opd::empty_like(input, bool_options, MemoryFormat::Contiguous);
    mask.bernoulli_(p1m);
    Tensor output = input.mul(mask);
    output.mul_(scale);
    return {output, mask};
  }
  return {input.clone(), opd::ones_like(input, bool_options)};
}

Tensor native_dropout_backward(const Tensor& grad_output, const Tensor& mask, double scale) {
  Tensor result = grad_output.mul(mask);
  result.mul_(scale);
  return result;
}

namespace {

void check_p(double p) {
  OPD_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got {}", p);
}

Tensor feature_noise(const Tensor& input) {
  OPD_CHECK(input.dim() >= 2, "Feature dropout requires at least 2 dimensions in the input");
  std::vector<int64_t> sizes(static_cast<size_t>(input.dim()), 1);
  sizes[0] = input.size(0);
  sizes[1] = input.size(1);
  return opd::empty(sizes, TensorOptions(input.scalar_type()).device(input.device()));
}

// PyTorch's _dropout_impl<feature, alpha, inplace> (Note [Dropout on the CPU]).
template <bool feature, bool alpha, bool inplace>
Tensor dropout_impl(const Tensor& input, double p, bool train) {
  check_p(p);
  if (p == 0 || !train || input.numel() == 0) return input;
  auto multiply = [&](const Tensor& noise) -> Tensor {
    if constexpr (inplace) {
      return input.mul_(noise);
    } else {
      return input.mul(noise);
    }
  };
  if (p == 1) {
    return multiply(opd::zeros({}, TensorOptions(input.scalar_type()).device(input.device())));
  }
  Tensor noise = feature ? feature_noise(input) : opd::empty_like(input);
  noise.bernoulli_(1 - p);
  if constexpr (alpha) {
    constexpr double kAlpha = 1.7580993408473766;
    const double a = 1. / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
    Tensor b = noise.add(-1);
    b.mul_(kAlpha * a);
    b.add_(kAlpha * a * p);
    noise.mul_(a);
    Tensor out = multiply(noise);
    out.add_(b);
    return out;
  } else {
    noise.div_(1 - p);
    return multiply(noise);
  }
}

}  // namespace

Tensor dropout(const Tensor& input, double p, bool train) {
  return dropout_impl<false, false, false>(input, p, train);
}
Tensor& dropout_(Tensor& self, double p, bool train) {
  dropout_impl<false, false, true>(self, p, train);
  return self;
}
Tensor feature_dropout(const Tensor& input, double p, bool train) {
  return dropout_impl<true, false, false>(input, p, train);
}
Tensor& feature_dropout_(Tensor& self, double p, bool train) {
  dropout_impl<true, false, true>(self, p, train);
  return self;
}
Tensor alpha_dropout(const Tensor& input, double p, bool train) {
  return dropout_impl<false, true, false>(input, p, train);
}
Tensor& alpha_dropout_(Tensor& self, double p, bool train) {
  dropout_impl<false, true, true>(self, p, train);
  return self;
}

}  // namespace opd::native
