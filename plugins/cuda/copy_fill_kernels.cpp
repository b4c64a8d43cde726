// copy_ and fill_ on CUDA devices, and the copies between the host and a device or two devices.
//
// Note [CUDA copies]
// copy_ dispatches here whenever either tensor is on a CUDA device (CUDA outranks CPU among the
// backend keys). A copy within one device is one elementwise launch that broadcasts and converts.
// A copy that crosses devices moves dense bytes of the destination's dtype and shape: the side
// that has the data first converts and broadcasts into a dense staging tensor (on its own
// device), one cudaMemcpy moves it, and the receiving side scatters it into a destination that is
// not dense. Copies are synchronous, as PyTorch's are for pageable host memory: the plugin has no
// pinned host allocator, so non_blocking changes nothing.

#include <cuda_runtime_api.h>

#include "common/elementwise.h"
#include "cuda/allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "cuda/geometry.h"
#include "opd/native/CUDA.h"
#include "opd/ops.h"

namespace opd::native {
namespace {

using common::TensorIterator;

// A copy within one device: src broadcast into self and converted to its dtype.
void device_copy(const TensorIterator& iter) {
  const auto dst = cuda::kernel_dtype(iter.dtype(0), "copy_");
  const auto src = cuda::kernel_dtype(iter.dtype(1), "copy_");
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

void copy_from_host(Tensor& self, const Tensor& src) {
  const int index = cuda::device_index(self.device());
  cuda::DeviceGuard guard(index);
  const cudaStream_t stream = cuda::current_stream(index);
  // Converted and broadcast on the host, where the data is.
  Tensor host = src.to(self.scalar_type()).expand(self.sizes()).contiguous();
  Tensor dense =
      self.is_contiguous() ? self : cuda::empty_cuda(self.sizes(), self.scalar_type(), index);
  OPD_CUDA_CHECK(cudaMemcpyAsync(dense.data_ptr(), host.data_ptr(), nbytes_of(dense),
                                 cudaMemcpyHostToDevice, stream));
  OPD_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (!dense.is_same(self)) device_copy(self, dense);
}

// Returns whether it bumped self's version (the CPU's copy_ does when it scatters).
bool copy_to_host(Tensor& self, const Tensor& src) {
  const int index = cuda::device_index(src.device());
  cuda::DeviceGuard guard(index);
  const cudaStream_t stream = cuda::current_stream(index);
  Tensor dense = dense_on_device(src, self);
  Tensor host = self.is_contiguous()
                    ? self
                    : opd::empty(self.sizes(), TensorOptions().dtype(self.scalar_type()));
  OPD_CUDA_CHECK(cudaMemcpyAsync(host.data_ptr(), dense.data_ptr(), nbytes_of(dense),
                                 cudaMemcpyDeviceToHost, stream));
  OPD_CUDA_CHECK(cudaStreamSynchronize(stream));
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
  (void)non_blocking;  // see Note [CUDA copies]
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
      copy_from_host(self, src);
    } else {
      bumped = copy_to_host(self, src);
    }
  }
  if (!bumped) self.bump_version();
  return self;
}

Tensor& fill__Scalar(Tensor& self, const Scalar& value) {
  TensorIterator iter = common::fill_meta(self, value);
  const auto dtype = cuda::kernel_dtype(iter.dtype(), "fill_cuda");
  const cuda::kern::ScalarArg v = cuda::scalar_arg(value);
  cuda::run_elementwise(iter, "fill_cuda",
                        [&](const cuda::kern::Geometry& g, cuda::kern::Stream s) {
                          return cuda::kern::launch_fill(dtype, g, v, s);
                        });
  self.bump_version();
  return self;
}

}  // namespace opd::native
