// copy_ and fill_ on CUDA devices, and the copies between the host and a device or two devices.
//
// Note [CUDA copies]
// copy_ dispatches here whenever either tensor is on a CUDA device (CUDA outranks CPU among the
// backend keys). A copy within one device is one elementwise launch that broadcasts and converts.
// A copy that crosses devices moves dense bytes of the destination's dtype and shape: the side
// that has the data first converts and broadcasts into a dense staging tensor (on its own
// device), one cudaMemcpy moves it, and the receiving side scatters it into a destination that is
// not dense. A copy between the host and a device returns when it is complete, as PyTorch's do
// for pageable memory, except when non_blocking is requested and the host side is a block of the
// pinned host allocator that needs no staging (same dtype and shape, dense): the copy is then
// only queued on the current stream, with an event recorded against the block so that the
// allocator does not hand it out again before the copy is done (Note [Pinned host allocator]).
// The caller synchronises before reading a device-to-host result, as in PyTorch.

#include <cuda_runtime_api.h>

#include "common/elementwise.h"
#include "cuda/allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "cuda/geometry.h"
#include "cuda/pinned.h"
#include "opd/native/CUDA.h"
#include "opd/ops.h"

namespace opd::native {
namespace {

using common::TensorIterator;

// A copy within one device: src broadcast into self and converted to its dtype.
void device_copy(const TensorIterator& iter) {
  const auto dst = cuda::kernel_dtype(iter.dtype(0), "copy_", /*with_complex=*/true);
  const auto src = cuda::kernel_dtype(iter.dtype(1), "copy_", /*with_complex=*/true);
  cuda::run_elementwise(iter, "copy_", [&](const cuda::kern::Geometry& g, cuda::kern::Stream s) {
    return cuda::kern::launch_copy(dst, src, g, s);
  });
}

void device_copy(const Tensor& self, const Tensor& src) {
  if (std::optional<TensorIterator> iter = common::copy_meta(self, src)) device_copy(*iter);
}

size_t nbytes_of(const Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

// src (CUDA) as a dense tensor on its own device with like's dtype and sizes: src itself when it
// already is one.
Tensor dense_on_device(const Tensor& src, const Tensor& like) {
  if (src.scalar_type() == like.scalar_type() && src.sizes() == like.sizes() &&
      src.is_contiguous()) {
    return src;
  }
  Tensor staged =
      cuda::empty_cuda(like.sizes(), like.scalar_type(), cuda::device_index(src.device()));
  device_copy(staged, src);
  return staged;
}

// Copies nbytes from src to dst on `stream`, one side being the memory of the `host` tensor. The
// copy is left queued when `queue_only` and `host` is a pinned block (Note [CUDA copies]), and is
// otherwise complete on return.
void transfer(void* dst, const void* src, size_t nbytes, cudaMemcpyKind kind, const Tensor& host,
              bool queue_only, cudaStream_t stream) {
  OPD_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, kind, stream));
  if (queue_only && cuda::is_pinned_block(host)) {
    try {
      cuda::record_host_use(host, stream);
    } catch (...) {
      // Without its event the block could be handed out while the copy still uses it.
      (void)cudaStreamSynchronize(stream);
      throw;
    }
  } else {
    OPD_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
}

void copy_from_host(Tensor& self, const Tensor& src, bool non_blocking) {
  const int index = cuda::device_index(self.device());
  cuda::DeviceGuard guard(index);
  const cudaStream_t stream = cuda::current_stream(index);
  // Converted and broadcast on the host, where the data is: src itself when nothing changes.
  Tensor host = src.to(self.scalar_type()).expand(self.sizes()).contiguous();
  Tensor dense =
      self.is_contiguous() ? self : cuda::empty_cuda(self.sizes(), self.scalar_type(), index);
  transfer(dense.data_ptr(), host.data_ptr(), nbytes_of(dense), cudaMemcpyHostToDevice, host,
           non_blocking, stream);
  if (!dense.is_same(self)) device_copy(self, dense);
}

// Returns whether it bumped self's version (the CPU's copy_ does when it scatters).
bool copy_to_host(Tensor& self, const Tensor& src, bool non_blocking) {
  const int index = cuda::device_index(src.device());
  cuda::DeviceGuard guard(index);
  const cudaStream_t stream = cuda::current_stream(index);
  Tensor dense = dense_on_device(src, self);
  Tensor host = self.is_contiguous()
                    ? self
                    : opd::empty(self.sizes(), TensorOptions().dtype(self.scalar_type()));
  // Only into self itself may the copy be left queued: a staging tensor is read right below.
  transfer(host.data_ptr(), dense.data_ptr(), nbytes_of(dense), cudaMemcpyDeviceToHost, host,
           non_blocking && host.is_same(self), stream);
  if (host.is_same(self)) return false;
  self.copy_(host);  // the CPU plugin scatters it
  return true;
}

void copy_between_devices(Tensor& self, const Tensor& src) {
  const int from = cuda::device_index(src.device());
  const int to = cuda::device_index(self.device());
  Tensor dense_src;
  {
    cuda::DeviceGuard guard(from);
    dense_src = dense_on_device(src, self);
    // The staging copy must be complete before the other device reads it.
    OPD_CUDA_CHECK(cudaStreamSynchronize(cuda::current_stream(from)));
  }
  cuda::DeviceGuard guard(to);
  const cudaStream_t stream = cuda::current_stream(to);
  Tensor dense =
      self.is_contiguous() ? self : cuda::empty_cuda(self.sizes(), self.scalar_type(), to);
  OPD_CUDA_CHECK(cudaMemcpyPeerAsync(dense.data_ptr(), to, dense_src.data_ptr(), from,
                                     nbytes_of(dense), stream));
  OPD_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (!dense.is_same(self)) device_copy(self, dense);
}

}  // namespace

Tensor& copy_(Tensor& self, const Tensor& src, bool non_blocking) {
  std::optional<TensorIterator> iter = common::copy_meta(self, src);
  bool bumped = false;
  if (iter) {
    OPD_CHECK((self.is_cuda() || self.is_cpu()) && (src.is_cuda() || src.is_cpu()),
              "copy_: the CUDA plugin copies between CUDA and CPU tensors, not from {} to {}",
              src.device(), self.device());
    if (self.is_cuda() && src.is_cuda() && self.device() == src.device()) {
      device_copy(*iter);
    } else if (self.is_cuda() && src.is_cuda()) {
      copy_between_devices(self, src);
    } else if (self.is_cuda()) {
      copy_from_host(self, src, non_blocking);
    } else {
      bumped = copy_to_host(self, src, non_blocking);
    }
  }
  if (!bumped) self.bump_version();
  return self;
}

Tensor& fill__Scalar(Tensor& self, const Scalar& value) {
  TensorIterator iter = common::fill_meta(self, value);
  const auto dtype = cuda::kernel_dtype(iter.dtype(), "fill_cuda", /*with_complex=*/true);
  const cuda::kern::ScalarArg v = cuda::scalar_arg(value);
  cuda::run_elementwise(iter, "fill_cuda",
                        [&](const cuda::kern::Geometry& g, cuda::kern::Stream s) {
                          return cuda::kern::launch_fill(dtype, g, v, s);
                        });
  self.bump_version();
  return self;
}

}  // namespace opd::native
