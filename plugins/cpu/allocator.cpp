#include "cpu/allocator.h"

#include <cstdlib>

#include "common/factory_shape.h"
#include "opd/error.h"
#include "opd/plugin.h"

namespace opd::cpu {

namespace {
void free_aligned(void* data, void*) { std::free(data); }
}  // namespace

Storage allocate_storage(size_t nbytes) {
  const Device cpu(DeviceType::CPU);
  if (nbytes == 0)
    return Storage::create(nullptr, 0, cpu, nullptr, nullptr, this_plugin_reference());
  void* data = nullptr;
  OPD_CHECK(::posix_memalign(&data, kAlignment, nbytes) == 0,
            "cpu allocator: not enough memory: you tried to allocate {} bytes.", nbytes);
  return Storage::create(data, nbytes, cpu, &free_aligned, nullptr, this_plugin_reference());
}

Tensor empty_strided_cpu(IntArrayRef size, IntArrayRef stride, ScalarType dtype) {
  const size_t nbytes = factory::storage_nbytes(size, stride, element_size(dtype));
  return make_tensor(allocate_storage(nbytes), size, stride, 0, dtype, Device(DeviceType::CPU));
}

Tensor empty_cpu(IntArrayRef size, ScalarType dtype, MemoryFormat format) {
  const size_t nbytes = factory::storage_nbytes_contiguous(size, element_size(dtype));
  return make_tensor(allocate_storage(nbytes), size,
                     factory::strides_for_memory_format(size, format), 0, dtype,
                     Device(DeviceType::CPU));
}

}  // namespace opd::cpu
