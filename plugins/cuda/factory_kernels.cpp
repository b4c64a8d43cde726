// The factories on CUDA devices (empty, empty_strided, arange, rand, randn) and the two
// operators that touch a tensor's memory as a whole (resize_, _local_scalar_dense). Metadata
// rules are common/factory_shape.h's, as on every backend; the random values are the CPU's,
// element for element (Note [Random numbers per element]).

#include <cuda_runtime_api.h>

#include "common/factory_shape.h"
#include "cuda/allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "cuda/geometry.h"
#include "opd/generator.h"
#include "opd/native/CUDA.h"
#include "opd/ops.h"

namespace opd::native {
namespace {

constexpr const char* kBackend = "cuda";

int index_of(std::optional<Device> device) {
  return cuda::device_index(device.value_or(Device(DeviceType::CUDA)));
}

Tensor random_tensor(const char* op, IntArrayRef size, std::optional<ScalarType> dtype,
                     std::optional<Layout> layout, std::optional<Device> device,
                     std::optional<bool> pin_memory, bool normal) {
  const ScalarType t = factory::factory_dtype(op, dtype, layout, pin_memory, kBackend);
  factory::check_size_nonnegative(size);
  factory::check_random_dtype(op, t);
  const int index = index_of(device);
  Tensor out = cuda::empty_cuda(size, t, index);
  const int64_t n = out.numel();
  if (n == 0) return out;
  const RandomReservation r = reserve_random(static_cast<uint64_t>(n));
  cuda::DeviceGuard guard(index);
  cuda::check_launch(cuda::kern::launch_random(cuda::kernel_dtype(t, op), out.data_ptr(), n, r.seed,
                                               r.offset, normal, cuda::current_stream(index)),
                     op);
  return out;
}

}  // namespace

Tensor empty_memory_format(IntArrayRef size, std::optional<ScalarType> dtype,
                           std::optional<Layout> layout, std::optional<Device> device,
                           std::optional<bool> pin_memory,
                           std::optional<MemoryFormat> memory_format) {
  const ScalarType t = factory::factory_dtype("empty", dtype, layout, pin_memory, kBackend);
  factory::check_size_nonnegative(size);
  return cuda::empty_cuda(size, t, index_of(device),
                          memory_format.value_or(MemoryFormat::Contiguous));
}

Tensor empty_strided(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype,
                     std::optional<Layout> layout, std::optional<Device> device,
                     std::optional<bool> pin_memory) {
  const ScalarType t = factory::factory_dtype("empty_strided", dtype, layout, pin_memory, kBackend);
  factory::check_empty_strided(size, stride);
  return cuda::empty_strided_cuda(size, stride, t, index_of(device));
}

Tensor arange_start_step(const Scalar& start, const Scalar& end, const Scalar& step,
                         std::optional<ScalarType> dtype, std::optional<Layout> layout,
                         std::optional<Device> device, std::optional<bool> pin_memory) {
  const ScalarType t = factory::factory_dtype(
      "arange", factory::arange_dtype(start, end, step, dtype), layout, pin_memory, kBackend);
  const int64_t n = factory::arange_length(start, end, step, t);
  const int index = index_of(device);
  Tensor out = cuda::empty_cuda({n}, t, index);
  if (n == 0) return out;
  cuda::DeviceGuard guard(index);
  cuda::check_launch(cuda::kern::launch_arange(cuda::kernel_dtype(t, "arange_cuda"), out.data_ptr(),
                                               n, cuda::scalar_arg(start), cuda::scalar_arg(step),
                                               cuda::current_stream(index)),
                     "arange_cuda");
  return out;
}

Tensor rand(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
            std::optional<Device> device, std::optional<bool> pin_memory) {
  return random_tensor("rand", size, dtype, layout, device, pin_memory, /*normal=*/false);
}

Tensor randn(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
             std::optional<Device> device, std::optional<bool> pin_memory) {
  return random_tensor("randn", size, dtype, layout, device, pin_memory, /*normal=*/true);
}

// The old bytes are copied in stream order, so nothing waits.
Tensor& resize_(Tensor& self, IntArrayRef size, std::optional<MemoryFormat> memory_format) {
  const int index = cuda::device_index(self.device());
  cuda::DeviceGuard guard(index);
  const cudaStream_t stream = cuda::current_stream(index);
  return factory::resize_with(
      self, size, memory_format,
      [index](size_t nbytes) { return cuda::allocate_storage(nbytes, index); },
      [stream](void* dst, const void* src, size_t n) {
        OPD_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream));
      });
}

// The element copied to the host (a synchronous copy), read there by the CPU plugin.
Scalar _local_scalar_dense(const Tensor& self) {
  OPD_CHECK(self.numel() == 1, "a Tensor with {} elements cannot be converted to Scalar",
            self.numel());
  return opd::_local_scalar_dense(self.to(Device(DeviceType::CPU), self.scalar_type()));
}

}  // namespace opd::native
