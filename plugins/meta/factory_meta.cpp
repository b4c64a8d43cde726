// Meta kernels of the factory operators (linspace, logspace, tril_indices and triu_indices
// included) and of resize_: the CPU kernels' checks and metadata
// (common/factory_shape.h), over storages that have the byte size the geometry needs and no
// memory, whatever that size.

#include "common/factory_shape.h"
#include "common/range_shape.h"
#include "opd/native/Meta.h"

namespace opd::native {

namespace {

constexpr const char* kBackend = "meta";

Storage meta_storage(size_t nbytes) {
  return Storage::create(nullptr, nbytes, Device(DeviceType::Meta));
}

Tensor empty_strided_meta(IntArrayRef size, IntArrayRef stride, ScalarType dtype) {
  const size_t nbytes = factory::storage_nbytes(size, stride, element_size(dtype));
  return make_tensor(meta_storage(nbytes), size, stride, 0, dtype, Device(DeviceType::Meta));
}

// PyTorch sizes a new tensor's storage as a contiguous one, whatever its memory format.
Tensor empty_meta(IntArrayRef size, ScalarType dtype, MemoryFormat format) {
  const size_t nbytes = factory::storage_nbytes_contiguous(size, element_size(dtype));
  const auto strides = factory::strides_for_memory_format(size, format);
  return make_tensor(meta_storage(nbytes), size, IntArrayRef(strides.data(), strides.size()), 0,
                     dtype, Device(DeviceType::Meta));
}

Tensor random_meta(const char* op, IntArrayRef size, std::optional<ScalarType> dtype,
                   std::optional<Layout> layout, std::optional<bool> pin_memory) {
  const ScalarType t = factory::factory_dtype(op, dtype, layout, pin_memory, kBackend);
  factory::check_size_nonnegative(size);
  factory::check_random_dtype(op, t);
  return empty_meta(size, t, MemoryFormat::Contiguous);
}

}  // namespace

Tensor empty_memory_format(IntArrayRef size, std::optional<ScalarType> dtype,
                           std::optional<Layout> layout, std::optional<Device>,
                           std::optional<bool> pin_memory,
                           std::optional<MemoryFormat> memory_format) {
  const ScalarType t = factory::factory_dtype("empty", dtype, layout, pin_memory, kBackend);
  factory::check_size_nonnegative(size);
  return empty_meta(size, t, memory_format.value_or(MemoryFormat::Contiguous));
}

Tensor empty_strided(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype,
                     std::optional<Layout> layout, std::optional<Device>,
                     std::optional<bool> pin_memory) {
  const ScalarType t = factory::factory_dtype("empty_strided", dtype, layout, pin_memory, kBackend);
  factory::check_empty_strided(size, stride);
  return empty_strided_meta(size, stride, t);
}

Tensor arange_start_step(const Scalar& start, const Scalar& end, const Scalar& step,
                         std::optional<ScalarType> dtype, std::optional<Layout> layout,
                         std::optional<Device>, std::optional<bool> pin_memory) {
  const ScalarType t = factory::factory_dtype(
      "arange", factory::arange_dtype(start, end, step, dtype), layout, pin_memory, kBackend);
  const int64_t n = factory::arange_length(start, end, step, t);
  return empty_meta({n}, t, MemoryFormat::Contiguous);
}

Tensor linspace(const Scalar&, const Scalar&, int64_t steps, std::optional<ScalarType> dtype,
                std::optional<Layout> layout, std::optional<Device>,
                std::optional<bool> pin_memory) {
  range::check_steps(steps);
  const ScalarType t = factory::factory_dtype("linspace", dtype, layout, pin_memory, kBackend);
  range::check_range_dtype("linspace_cpu", t, /*half_too=*/true);
  return empty_meta({steps}, t, MemoryFormat::Contiguous);
}

Tensor logspace(const Scalar&, const Scalar&, int64_t steps, double,
                std::optional<ScalarType> dtype, std::optional<Layout> layout,
                std::optional<Device>, std::optional<bool> pin_memory) {
  range::check_steps(steps);
  const ScalarType t = factory::factory_dtype("logspace", dtype, layout, pin_memory, kBackend);
  range::check_range_dtype("logspace_cpu", t, /*half_too=*/false);
  return empty_meta({steps}, t, MemoryFormat::Contiguous);
}

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, std::optional<ScalarType> dtype,
                    std::optional<Layout> layout, std::optional<Device>,
                    std::optional<bool> pin_memory) {
  const ScalarType t =
      factory::factory_dtype("tril_indices", dtype.value_or(kLong), layout, pin_memory, kBackend);
  range::check_trilu("tril_indices", row, col, t);
  return empty_meta({2, range::tril_size(row, col, offset)}, t, MemoryFormat::Contiguous);
}

Tensor triu_indices(int64_t row, int64_t col, int64_t offset, std::optional<ScalarType> dtype,
                    std::optional<Layout> layout, std::optional<Device>,
                    std::optional<bool> pin_memory) {
  const ScalarType t =
      factory::factory_dtype("triu_indices", dtype.value_or(kLong), layout, pin_memory, kBackend);
  range::check_trilu("triu_indices", row, col, t);
  return empty_meta({2, range::triu_size(row, col, offset)}, t, MemoryFormat::Contiguous);
}

// Shapes only: no random numbers are drawn, so the CPU generator's sequence is unaffected.
Tensor rand(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
            std::optional<Device>, std::optional<bool> pin_memory) {
  return random_meta("rand", size, dtype, layout, pin_memory);
}

Tensor randn(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
             std::optional<Device>, std::optional<bool> pin_memory) {
  return random_meta("randn", size, dtype, layout, pin_memory);
}

Tensor& resize_(Tensor& self, IntArrayRef size, std::optional<MemoryFormat> memory_format) {
  const factory::ResizeGeometry g = factory::resize_geometry(self, size, memory_format);
  TensorImpl* impl = self.unsafe_get_impl();
  if (g.needs_new_storage) {
    impl->set_storage_and_geometry(meta_storage(g.nbytes), g.sizes, g.strides, g.storage_offset);
  } else {
    impl->set_sizes_and_strides(g.sizes, g.strides, g.storage_offset);
  }
  return self;
}

Scalar _local_scalar_dense(const Tensor&) {
  OPD_CHECK(false, "Tensor.item() cannot be called on meta tensors");
  return Scalar();
}

}  // namespace opd::native
