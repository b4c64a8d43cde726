// CUDA kernel of cat. The result's shape and dtype (result_type of the inputs) come from
// common/nn_shape.h, as the CPU's and Meta's do. As on the CPU, an input that is contiguous and
// of the result's dtype is copied as whole blocks: its `outer` blocks land `out_block` bytes
// apart in the result, which is one cudaMemcpy2DAsync (a plain copy when there is one block or
// the blocks are adjacent), whatever the dtype. Any other input is copied into its slice of the
// result by copy_ (through the dispatcher: the device's strided, converting copy).

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/nn_shape.h"
#include "cuda/allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "opd/native/CUDA.h"

namespace opd::native {

namespace {

// The largest pitch cudaMemcpy2DAsync takes on device `index`.
int64_t max_pitch(int index) {
  int pitch = 0;
  OPD_CUDA_CHECK(cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, index));
  return pitch;
}

}  // namespace

Tensor cat(TensorList tensors, int64_t dim) {
  const common::CatMeta m = common::cat_meta(tensors, dim);
  const int index = cuda::device_index(tensors[0].device());
  cuda::DeviceGuard guard(index);
  Tensor out = cuda::empty_cuda(m.sizes, m.dtype, index);
  if (out.numel() == 0) return out;

  const int64_t d = m.dim;
  const int64_t elem = static_cast<int64_t>(element_size(m.dtype));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= m.sizes[i];
  for (int64_t i = d + 1; i < out.dim(); ++i) inner *= m.sizes[i];
  char* out_data = static_cast<char*>(out.data_ptr());
  const cudaStream_t stream = cuda::current_stream(index);
  int64_t pitch_limit = -1;  // queried on first need

  int64_t offset = 0;  // where along `d` the next input goes
  for (const Tensor& t : tensors) {
    if (common::cat_should_skip(t)) continue;
    const int64_t size_d = t.size(d);
    const int64_t start = offset;
    offset += size_d;
    if (t.numel() == 0) continue;
    if (t.scalar_type() == m.dtype && t.is_contiguous()) {
      char* dst = out_data + start * inner * elem;
      const void* src = t.data_ptr();
      const int64_t block = size_d * inner * elem;
      const int64_t out_block = m.sizes[d] * inner * elem;
      if (outer == 1 || block == out_block) {
        OPD_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<size_t>(outer * block),
                                       cudaMemcpyDeviceToDevice, stream));
        continue;
      }
      if (pitch_limit < 0) pitch_limit = max_pitch(index);
      if (out_block <= pitch_limit) {
        OPD_CUDA_CHECK(cudaMemcpy2DAsync(dst, static_cast<size_t>(out_block), src,
                                         static_cast<size_t>(block), static_cast<size_t>(block),
                                         static_cast<size_t>(outer), cudaMemcpyDeviceToDevice,
                                         stream));
        continue;
      }
    }
    // The slice [start, start + size_d) of the result along d.
    const Tensor slice = make_view(out, t.sizes(), out.strides(), start * out.stride(d));
    slice.copy_(t);
  }
  return out;
}

}  // namespace opd::native
