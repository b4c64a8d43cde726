// CPU kernels of nll_loss_forward and nll_loss_backward. Shapes, dtypes and argument errors come
// from common/nn_shape.h (shared with Meta); what only the data can tell (a target out of range)
// is checked here. Inputs are read through their strides; sums accumulate in double.

#include <cstring>
#include <limits>
#include <tuple>

#include "common/nn_shape.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/parallel.h"
#include "opd/half.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

using common::NllLossMeta;
using common::Reduction;

constexpr int64_t kGrain = 4096;

// Target dtypes: Long, or Byte (PyTorch's legacy class labels).
template <class F>
void visit_target(ScalarType dtype, F&& f) {
  if (dtype == kByte) return f(uint8_t{});
  return f(int64_t{});
}

// Strided access to the three inputs every nll_loss kernel reads.
template <class T, class I>
struct NllInputs {
  const T* x;
  int64_t xs0, xs1;  // sample stride (0 for a 1-D input), class stride
  const I* t;
  int64_t ts;
  const T* w;  // null without weight
  int64_t ws;
  int64_t n_classes;
  int64_t ignore_index;

  NllInputs(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
            int64_t n, int64_t ignore)
      : x(static_cast<const T*>(self.data_ptr())),
        xs0(self.dim() == 2 ? self.stride(0) : 0),
        xs1(self.stride(-1)),
        t(static_cast<const I*>(target.data_ptr())),
        ts(target.dim() == 1 ? target.stride(0) : 0),
        w(weight && weight->defined() ? static_cast<const T*>(weight->data_ptr()) : nullptr),
        ws(weight && weight->defined() ? weight->stride(0) : 0),
        n_classes(n),
        ignore_index(ignore) {}

  // Sample i's class, or -1 when it is ignored. Throws IndexError for a class out of range.
  int64_t target(int64_t i) const {
    const int64_t c = static_cast<int64_t>(t[i * ts]);
    if (c == ignore_index) return -1;
    OPD_CHECK_T(IndexError, c >= 0 && c < n_classes, "Target {} is out of bounds.", c);
    return c;
  }
  double weight(int64_t c) const { return w ? static_cast<double>(w[c * ws]) : 1.0; }
  double input(int64_t i, int64_t c) const { return static_cast<double>(x[i * xs0 + c * xs1]); }
};

}  // namespace

std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction,
                                            int64_t ignore_index) {
  const NllLossMeta m = common::nll_loss_forward_meta(self, target, weight, reduction);
  Tensor output = cpu::empty_cpu(m.output_sizes, self.scalar_type());
  Tensor total_weight = cpu::empty_cpu({}, self.scalar_type());
  common::visit_floating_dtype(self.scalar_type(), "nll_loss_forward", [&](auto tv) {
    using T = decltype(tv);
    visit_target(target.scalar_type(), [&](auto iv) {
      using I = decltype(iv);
      const NllInputs<T, I> in(self, target, weight, m.n_classes, ignore_index);
      T* out = static_cast<T*>(output.data_ptr());
      T* tw = static_cast<T*>(total_weight.data_ptr());
      if (m.reduction == Reduction::None && self.dim() == 2) {
        *tw = T(0);
        cpu::parallel_for(0, m.batch_size, kGrain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            const int64_t c = in.target(i);
            out[i] = static_cast<T>(c < 0 ? 0.0 : -in.input(i, c) * in.weight(c));
          }
        });
        return;
      }
      // One loss: an empty batch sums to 0, and its mean is 0 / 0.
      const int64_t batch = target.numel() == 0 ? 0 : m.batch_size;
      double loss = 0, weight_sum = 0;
      for (int64_t i = 0; i < batch; ++i) {
        const int64_t c = in.target(i);
        if (c < 0) continue;
        const double wc = in.weight(c);
        loss -= in.input(i, c) * wc;
        weight_sum += wc;
      }
      if (m.reduction == Reduction::Mean)
        loss = batch == 0 ? std::numeric_limits<double>::quiet_NaN() : loss / weight_sum;
      *out = static_cast<T>(loss);
      *tw = static_cast<T>(weight_sum);
    });
  });
  return {output, total_weight};
}

Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                         const std::optional<Tensor>& weight, int64_t reduction,
                         int64_t ignore_index, const Tensor& total_weight) {
  const NllLossMeta m =
      common::nll_loss_backward_meta(grad_output, self, target, weight, reduction, total_weight);
  Tensor grad_input = cpu::empty_cpu(m.output_sizes, self.scalar_type());
  if (grad_input.numel() == 0) return grad_input;
  // All-zero bits are +0 in every floating type.
  std::memset(grad_input.data_ptr(), 0, grad_input.numel() * grad_input.element_size());
  common::visit_floating_dtype(self.scalar_type(), "nll_loss_backward", [&](auto tv) {
    using T = decltype(tv);
    visit_target(target.scalar_type(), [&](auto iv) {
      using I = decltype(iv);
      const NllInputs<T, I> in(self, target, weight, m.n_classes, ignore_index);
      T* gi = static_cast<T*>(grad_input.data_ptr());
      const T* go = static_cast<const T*>(grad_output.data_ptr());
      const int64_t row = self.dim() == 2 ? m.n_classes : 0;  // grad_input is contiguous
      if (m.reduction == Reduction::None && self.dim() == 2) {
        const int64_t gs = grad_output.stride(0);
        cpu::parallel_for(0, m.batch_size, kGrain, [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            const int64_t c = in.target(i);
            if (c >= 0) gi[i * row + c] = static_cast<T>(-in.weight(c) * double(go[i * gs]));
          }
        });
        return;
      }
      double g = static_cast<double>(*go);
      if (m.reduction == Reduction::Mean)
        g /= static_cast<double>(*static_cast<const T*>(total_weight.data_ptr()));
      for (int64_t i = 0; i < m.batch_size; ++i) {
        const int64_t c = in.target(i);
        if (c >= 0) gi[i * row + c] = static_cast<T>(-in.weight(c) * g);
      }
    });
  });
  return grad_input;
}

}  // namespace opd::native
