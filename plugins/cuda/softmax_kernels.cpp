// CUDA impls of the structured _softmax.out, _log_softmax.out and their backward's. Shapes, dtypes
// and errors come from their meta functions (common/nn_shape.h), as the CPU's and Meta's do; the
// operands are made contiguous and handed to kernels/softmax.cu as [outer, dim_size, inner].
// Unlike the CPU kernel (which refuses it, as PyTorch's CPU kernel does), half_to_float is
// implemented, as in PyTorch's CUDA kernel: a Half input computes in float and writes that float.

#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "cuda/geometry.h"
#include "cuda/kernels/nn_args.h"
#include "opd/native/CUDA.h"

namespace opd::native {

namespace {

namespace kern = cuda::kern;

// The lanes of `t` along the wrapped `dim` (0 for a 0-dim tensor): outer, dim_size, inner as the
// contiguous layout of t's sizes splits them.
void lanes(const Tensor& t, int64_t dim, int64_t* outer, int64_t* dim_size, int64_t* inner) {
  *outer = *inner = 1;
  *dim_size = t.dim() == 0 ? 1 : t.size(dim);
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d < dim) *outer *= t.size(d);
    if (d > dim) *inner *= t.size(d);
  }
}

template <bool kLog>
void softmax_into(const char* op, const Tensor& self, int64_t dim, const Tensor& out) {
  if (out.numel() == 0) return;
  cuda::DeviceGuard guard(self.device());
  const Tensor x = self.contiguous();
  kern::SoftmaxArgs a;
  a.dtype = cuda::kernel_dtype(self.scalar_type(), op);
  a.out_dtype = cuda::kernel_dtype(out.scalar_type(), op);
  a.log = kLog;
  a.input = x.data_ptr();
  a.output = out.data_ptr();
  lanes(x, maybe_wrap_dim(dim, x.dim()), &a.outer, &a.dim_size, &a.inner);
  cuda::check_launch(kern::launch_softmax(a, cuda::current_stream(guard.index())), op);
}

template <bool kLog>
void softmax_backward_into(const char* op, const Tensor& grad, const Tensor& output, int64_t dim,
                           const Tensor& grad_input) {
  if (grad_input.numel() == 0) return;
  cuda::DeviceGuard guard(grad.device());
  const Tensor g = grad.contiguous();
  const Tensor y = output.contiguous();
  kern::SoftmaxBackwardArgs a;
  a.dtype = cuda::kernel_dtype(grad.scalar_type(), op);
  a.out_dtype = cuda::kernel_dtype(grad_input.scalar_type(), op);
  a.log = kLog;
  a.grad_output = g.data_ptr();
  a.output = y.data_ptr();
  a.grad_input = grad_input.data_ptr();
  lanes(g, maybe_wrap_dim(dim, g.dim()), &a.outer, &a.dim_size, &a.inner);
  cuda::check_launch(kern::launch_softmax_backward(a, cuda::current_stream(guard.index())), op);
}

}  // namespace

void softmax_cuda_out(const Tensor& self, int64_t dim, bool, const Tensor& out) {
  softmax_into<false>("_softmax", self, dim, out);
}

void log_softmax_cuda_out(const Tensor& self, int64_t dim, bool, const Tensor& out) {
  softmax_into<true>("_log_softmax", self, dim, out);
}

void softmax_backward_cuda_out(const Tensor& grad_output, const Tensor& output, int64_t dim,
                               ScalarType, const Tensor& grad_input) {
  softmax_backward_into<false>("_softmax_backward_data", grad_output, output, dim, grad_input);
}

void log_softmax_backward_cuda_out(const Tensor& grad_output, const Tensor& output, int64_t dim,
                                   ScalarType, const Tensor& out) {
  softmax_backward_into<true>("_log_softmax_backward_data", grad_output, output, dim, out);
}

}  // namespace opd::native
