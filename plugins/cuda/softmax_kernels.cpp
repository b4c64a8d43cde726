// CUDA kernels of _softmax, _log_softmax and their backward. Shapes, dtypes and errors come from
// common/nn_shape.h, as the CPU's and Meta's do; the operands are made contiguous and handed to
// kernels/softmax.cu as [outer, dim_size, inner]. Unlike the CPU kernel (which refuses it, as
// PyTorch's CPU kernel does), half_to_float is implemented, as in PyTorch's CUDA kernel: a Half
// input computes in float and writes that float.

#include "common/nn_shape.h"
#include "cuda/allocator.h"
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
Tensor softmax_impl(const char* op, const Tensor& self, int64_t dim, bool half_to_float) {
  ScalarType dtype;
  const int64_t d = common::softmax_meta(op, self, dim, half_to_float, &dtype);
  cuda::DeviceGuard guard(self.device());
  Tensor out = cuda::empty_cuda(self.sizes(), dtype, guard.index());
  if (out.numel() == 0) return out;
  const Tensor x = self.contiguous();
  kern::SoftmaxArgs a;
  a.dtype = cuda::kernel_dtype(self.scalar_type(), op);
  a.out_dtype = cuda::kernel_dtype(dtype, op);
  a.log = kLog;
  a.input = x.data_ptr();
  a.output = out.data_ptr();
  lanes(x, d, &a.outer, &a.dim_size, &a.inner);
  cuda::check_launch(kern::launch_softmax(a, cuda::current_stream(guard.index())), op);
  return out;
}

template <bool kLog>
Tensor softmax_backward_impl(const char* op, const char* check_name, const Tensor& grad,
                             const Tensor& output, int64_t dim, ScalarType input_dtype) {
  ScalarType dtype;
  const int64_t d =
      common::softmax_backward_meta(op, check_name, grad, output, dim, input_dtype, &dtype);
  cuda::DeviceGuard guard(grad.device());
  Tensor grad_input = cuda::empty_cuda(grad.sizes(), dtype, guard.index());
  if (grad_input.numel() == 0) return grad_input;
  const Tensor g = grad.contiguous();
  const Tensor y = output.contiguous();
  kern::SoftmaxBackwardArgs a;
  a.dtype = cuda::kernel_dtype(grad.scalar_type(), op);
  a.out_dtype = cuda::kernel_dtype(dtype, op);
  a.log = kLog;
  a.grad_output = g.data_ptr();
  a.output = y.data_ptr();
  a.grad_input = grad_input.data_ptr();
  lanes(g, d, &a.outer, &a.dim_size, &a.inner);
  cuda::check_launch(kern::launch_softmax_backward(a, cuda::current_stream(guard.index())), op);
  return grad_input;
}

}  // namespace

Tensor _softmax(const Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_impl<false>("_softmax", self, dim, half_to_float);
}

Tensor _log_softmax(const Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_impl<true>("_log_softmax", self, dim, half_to_float);
}

Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim,
                              ScalarType input_dtype) {
  return softmax_backward_impl<false>("_softmax_backward_data", "softmax_backward", grad_output,
                                      output, dim, input_dtype);
}

Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim,
                                  ScalarType input_dtype) {
  return softmax_backward_impl<true>("_log_softmax_backward_data", "log_softmax_backward",
                                     grad_output, output, dim, input_dtype);
}

}  // namespace opd::native
