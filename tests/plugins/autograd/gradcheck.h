#pragma once

// gradcheck / gradgradcheck (PyTorch's torch.autograd.gradcheck): compares the Jacobian autograd
// computes with central finite differences, in float64. A test utility: inputs are float64
// tensors that require grad (any strides; a non-contiguous input is perturbed in place through
// its own strides).

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "opd/autograd.h"
#include "opd/ops.h"

namespace opd::test {

using TensorFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

namespace detail {

// The storage offset (in elements) of logical element `k` (row-major) of t.
inline int64_t element_offset(const Tensor& t, int64_t k) {
  int64_t off = t.storage_offset();
  for (int64_t d = t.dim() - 1; d >= 0; --d) {
    off += (k % t.size(d)) * t.stride(d);
    k /= t.size(d);
  }
  return off;
}

inline double* element(const Tensor& t, int64_t k) {
  return static_cast<double*>(t.storage().data()) + element_offset(t, k);
}

// A tensor's values in row-major order, as doubles.
inline std::vector<double> flat(const Tensor& t) {
  std::vector<double> out;
  if (!t.defined()) return out;
  NoGradGuard no_grad;
  Tensor d = _to_copy(t, TensorOptions().dtype(kDouble));
  for (int64_t k = 0; k < d.numel(); ++k) out.push_back(*element(d, k));
  return out;
}

}  // namespace detail

// Checks d fn(inputs) / d inputs against finite differences. Every output must be float64.
inline ::testing::AssertionResult gradcheck(const TensorFn& fn, const std::vector<Tensor>& inputs,
                                            double eps = 1e-6, double atol = 1e-5,
                                            double rtol = 1e-3) {
  std::vector<Tensor> outputs = fn(inputs);
  std::vector<Tensor> diff_inputs;
  for (const Tensor& x : inputs) {
    if (x.requires_grad()) diff_inputs.push_back(x);
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    const Tensor& out = outputs[o];
    if (out.scalar_type() != kDouble) {
      return ::testing::AssertionFailure() << "gradcheck: output " << o << " is not float64";
    }
    const int64_t n_out = out.numel();
    // Analytical: one backward per output element, row j of the Jacobian.
    std::vector<std::vector<std::vector<double>>> analytical(diff_inputs.size());
    for (int64_t j = 0; j < n_out; ++j) {
      Tensor onehot = zeros(out.sizes(), TensorOptions().dtype(kDouble));
      *detail::element(onehot, j) = 1.0;
      std::vector<Tensor> g;
      if (out.requires_grad()) {
        g = autograd::grad({out}, diff_inputs, {onehot}, /*retain_graph=*/true,
                           /*create_graph=*/false, /*allow_unused=*/true);
      } else {
        g.resize(diff_inputs.size());
      }
      for (size_t i = 0; i < diff_inputs.size(); ++i) {
        auto row =
            g[i].defined() ? detail::flat(g[i]) : std::vector<double>(diff_inputs[i].numel(), 0.0);
        analytical[i].push_back(row);
      }
    }
    // Numerical: perturb each input element in place, both ways.
    for (size_t i = 0; i < diff_inputs.size(); ++i) {
      const Tensor& x = diff_inputs[i];
      for (int64_t k = 0; k < x.numel(); ++k) {
        double* p = detail::element(x, k);
        const double orig = *p;
        std::vector<double> plus, minus;
        {
          NoGradGuard no_grad;
          *p = orig + eps;
          plus = detail::flat(fn(inputs)[o]);
          *p = orig - eps;
          minus = detail::flat(fn(inputs)[o]);
          *p = orig;
        }
        for (int64_t j = 0; j < n_out; ++j) {
          const double numerical = (plus[j] - minus[j]) / (2 * eps);
          const double a = analytical[i][j][k];
          if (std::abs(a - numerical) > atol + rtol * std::abs(numerical)) {
            return ::testing::AssertionFailure()
                   << "Jacobian mismatch for output " << o << " with respect to input " << i
                   << ", element (out " << j << ", in " << k << "): analytical " << a
                   << ", numerical " << numerical;
          }
        }
      }
    }
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult gradcheck(
    const std::function<Tensor(const std::vector<Tensor>&)>& fn,
    const std::vector<Tensor>& inputs) {
  return gradcheck([&](const std::vector<Tensor>& xs) { return std::vector<Tensor>{fn(xs)}; },
                   inputs);
}

// Second order: gradcheck of (inputs, grad_outputs) -> autograd::grad(fn(inputs), inputs,
// grad_outputs, create_graph=true).
inline ::testing::AssertionResult gradgradcheck(
    const std::function<Tensor(const std::vector<Tensor>&)>& fn,
    const std::vector<Tensor>& inputs) {
  Tensor out = fn(inputs);
  Tensor go = randn(out.sizes(), TensorOptions().dtype(kDouble)).requires_grad_();
  std::vector<Tensor> all = inputs;
  all.push_back(go);
  const size_t n = inputs.size();
  TensorFn second = [&](const std::vector<Tensor>& xs) {
    AutoGradMode enable(true);  // gradcheck evaluates it under NoGradGuard too
    std::vector<Tensor> ins(xs.begin(), xs.begin() + n);
    std::vector<Tensor> diff;
    for (const Tensor& x : ins) {
      if (x.requires_grad()) diff.push_back(x);
    }
    std::vector<Tensor> g = autograd::grad({fn(ins)}, diff, {xs[n]}, /*retain_graph=*/true,
                                           /*create_graph=*/true, /*allow_unused=*/true);
    for (size_t i = 0; i < g.size(); ++i) {
      if (!g[i].defined()) g[i] = zeros_like(diff[i]);
    }
    return g;
  };
  return gradcheck(second, all);
}

// A float64 leaf that requires grad, seeded uniform in [lo, hi).
inline Tensor leaf(std::vector<int64_t> sizes, double lo = -1.0, double hi = 1.0) {
  Tensor t = rand(sizes, TensorOptions().dtype(kDouble));
  NoGradGuard no_grad;
  t = t * (hi - lo) + lo;
  return t.requires_grad_();
}

}  // namespace opd::test
