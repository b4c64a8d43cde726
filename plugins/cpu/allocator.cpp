#include "cpu/allocator.h"

#include <cstdint>

#include "common/factory_shape.h"
#include "cpu/block_cache.h"
#include "opd/error.h"
#include "opd/plugin.h"

namespace opd::cpu {

namespace {
// The block's capacity travels in the deleter's context.
void free_block(void* data, void* capacity) {
  release_block(data, reinterpret_cast<uintptr_t>(capacity));
}
}  // namespace

Storage allocate_storage(size_t nbytes) {
  const Device cpu(DeviceType::CPU);
  if (nbytes == 0)
    return Storage::create(nullptr, 0, cpu, nullptr, nullptr, this_plugin_reference());
  size_t capacity = 0;
  void* data = acquire_block(nbytes, kAlignment, &capacity);
  OPD_CHECK(data != nullptr, "cpu allocator: not enough memory: you tried to allocate {} bytes.",
            nbytes);
  return Storage::create(data, nbytes, cpu, &free_block,
                         reinterpret_cast<void*>(static_cast<uintptr_t>(capacity)),
                         this_plugin_reference());
}

Tensor empty_strided_cpu(IntArrayRef size, IntArrayRef stride, ScalarType dtype) {
  const size_t nbytes = factory::storage_nbytes(size, stride, element_size(dtype));
  return make_tensor(allocate_storage(nbytes), size, stride, 0, dtype, Device(DeviceType::CPU));
}

Tensor empty_cpu(IntArrayRef size, ScalarType dtype, MemoryFormat format) {
  const size_t nbytes = factory::storage_nbytes_contiguous(size, element_size(dtype));
  const auto strides = factory::strides_for_memory_format(size, format);
  return make_tensor(allocate_storage(nbytes), size, IntArrayRef(strides.data(), strides.size()), 0,
                     dtype, Device(DeviceType::CPU));
}

}  // namespace opd::cpu
