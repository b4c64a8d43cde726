// CPU kernels of the factory operators (empty, empty_strided, arange, rand, randn) and of the
// two that touch a tensor's memory as a whole (resize_, _local_scalar_dense). Their metadata
// rules are shared with the other backends in common/factory_shape.h.

#include <complex>
#include <cstring>
#include <type_traits>

#include "common/factory_shape.h"
#include "common/philox.h"
#include "common/type_dispatch.h"
#include "cpu/allocator.h"
#include "cpu/convert.h"
#include "cpu/parallel.h"
#include "opd/generator.h"
#include "opd/half.h"
#include "opd/native/CPU.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

constexpr const char* kBackend = "cpu";
// Elements per parallel chunk: a cheap loop (arange), and a Philox block per element.
constexpr int64_t kFillGrain = 32768;
constexpr int64_t kRandomGrain = 4096;

using cpu::kIsComplex;

// Half, BFloat16, Float and Double, the dtypes of rand and randn.
#define OPD_DISPATCH_RANDOM_TYPES(TYPE, NAME, ...)                                       \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                                                \
                              OPD_PRIVATE_CASE_TYPE(Float16, Half, __VA_ARGS__)          \
                                  OPD_PRIVATE_CASE_TYPE(BFloat16, BFloat16, __VA_ARGS__) \
                                      OPD_PRIVATE_CASES_FLOATING(__VA_ARGS__))

// Fills `out` (contiguous) with draw(block of element i, T{}) per element, from the counters of
// one reservation (Note [Random numbers per element]).
template <class Draw>
void fill_random(const Tensor& out, const char* name, Draw draw) {
  const int64_t n = out.numel();
  const RandomReservation r = reserve_random(static_cast<uint64_t>(n));
  OPD_DISPATCH_RANDOM_TYPES(out.scalar_type(), name, [&] {
    auto* data = static_cast<scalar_t*>(out.data_ptr());
    cpu::parallel_for(0, n, kRandomGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        data[i] = draw(philox::philox4x32_10(r.seed, r.offset + i), scalar_t{});
      }
    });
  });
}

// Element i is start + i * step computed in PyTorch's CPU accumulation type, then cast.
template <class T>
void fill_arange(T* data, int64_t n, const Scalar& start, const Scalar& step) {
  if constexpr (std::is_same_v<T, bool> || kIsComplex<T>) {
    OPD_INTERNAL_ASSERT(false, "arange_length admitted a dtype arange has no values for");
  } else {
    using Acc = std::conditional_t<std::is_integral_v<T>, int64_t,
                                   std::conditional_t<sizeof(T) == 2, float, double>>;
    const Acc a = start.to<Acc>();
    const Acc s = step.to<Acc>();
    cpu::parallel_for(0, n, kFillGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) data[i] = static_cast<T>(a + s * static_cast<Acc>(i));
    });
  }
}

// The element as a Scalar of its category: bool, int64, double or complex<double>.
template <class T>
Scalar to_scalar(T value) {
  if constexpr (std::is_same_v<T, bool> || kIsComplex<T>) {
    return Scalar(value);
  } else if constexpr (std::is_integral_v<T>) {
    return Scalar(static_cast<int64_t>(value));
  } else if constexpr (std::is_floating_point_v<T>) {
    return Scalar(static_cast<double>(value));
  } else {
    return Scalar(static_cast<double>(static_cast<float>(value)));  // Half, BFloat16
  }
}

// A new tensor of uninitialised memory, pinned when pin_memory is true: pinned memory comes from
// a device plugin through _opd_empty_pinned (Note [Pinned memory]), which says why when none
// answers.
Tensor new_strided(IntArrayRef size, IntArrayRef stride, ScalarType dtype,
                   std::optional<bool> pin_memory) {
  if (pin_memory.value_or(false)) {
    return opd::_opd_empty_pinned(size, stride, dtype, Device(DeviceType::CUDA));
  }
  return cpu::empty_strided_cpu(size, stride, dtype);
}

Tensor new_tensor(IntArrayRef size, ScalarType dtype, std::optional<bool> pin_memory,
                  MemoryFormat format = MemoryFormat::Contiguous) {
  if (!pin_memory.value_or(false)) return cpu::empty_cpu(size, dtype, format);
  const auto strides = factory::strides_for_memory_format(size, format);
  return new_strided(size, IntArrayRef(strides.data(), strides.size()), dtype, pin_memory);
}

Tensor random_tensor(const char* op, IntArrayRef size, std::optional<ScalarType> dtype,
                     std::optional<Layout> layout, std::optional<bool> pin_memory) {
  const ScalarType t = factory::factory_dtype(op, dtype, layout, std::nullopt, kBackend);
  factory::check_size_nonnegative(size);
  factory::check_random_dtype(op, t);
  return new_tensor(size, t, pin_memory);
}

}  // namespace

Tensor empty_memory_format(IntArrayRef size, std::optional<ScalarType> dtype,
                           std::optional<Layout> layout, std::optional<Device>,
                           std::optional<bool> pin_memory,
                           std::optional<MemoryFormat> memory_format) {
  const ScalarType t = factory::factory_dtype("empty", dtype, layout, std::nullopt, kBackend);
  factory::check_size_nonnegative(size);
  return new_tensor(size, t, pin_memory, memory_format.value_or(MemoryFormat::Contiguous));
}

Tensor empty_strided(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype,
                     std::optional<Layout> layout, std::optional<Device>,
                     std::optional<bool> pin_memory) {
  const ScalarType t =
      factory::factory_dtype("empty_strided", dtype, layout, std::nullopt, kBackend);
  factory::check_empty_strided(size, stride);
  return new_strided(size, stride, t, pin_memory);
}

Tensor arange_start_step(const Scalar& start, const Scalar& end, const Scalar& step,
                         std::optional<ScalarType> dtype, std::optional<Layout> layout,
                         std::optional<Device>, std::optional<bool> pin_memory) {
  const ScalarType t = factory::factory_dtype(
      "arange", factory::arange_dtype(start, end, step, dtype), layout, std::nullopt, kBackend);
  const int64_t n = factory::arange_length(start, end, step, t);
  Tensor out = new_tensor({n}, t, pin_memory);
  OPD_DISPATCH_EVERY_TYPE(t, "arange_cpu", [&] {
    fill_arange(static_cast<scalar_t*>(out.data_ptr()), n, start, step);
  });
  return out;
}

Tensor rand(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
            std::optional<Device>, std::optional<bool> pin_memory) {
  Tensor out = random_tensor("rand", size, dtype, layout, pin_memory);
  fill_random(out, "rand", [](const philox::Block& b, auto zero) -> decltype(zero) {
    using T = decltype(zero);
    // As many random bits as T's significand holds, so that no value rounds up to 1.
    if constexpr (std::is_same_v<T, double>) {
      return philox::uniform_double(b.v[0], b.v[1]);
    } else if constexpr (std::is_same_v<T, float>) {
      return philox::uniform_float(b.v[0]);
    } else if constexpr (std::is_same_v<T, Half>) {
      return T(philox::uniform_bits<11>(b.v[0]));
    } else {
      return T(philox::uniform_bits<8>(b.v[0]));
    }
  });
  return out;
}

Tensor randn(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Layout> layout,
             std::optional<Device>, std::optional<bool> pin_memory) {
  Tensor out = random_tensor("randn", size, dtype, layout, pin_memory);
  fill_random(out, "randn", [](const philox::Block& b, auto zero) -> decltype(zero) {
    using T = decltype(zero);
    const double v = philox::normal_double(b);
    if constexpr (std::is_same_v<T, double>) {
      return v;
    } else {
      return T(static_cast<float>(v));
    }
  });
  return out;
}

Tensor& resize_(Tensor& self, IntArrayRef size, std::optional<MemoryFormat> memory_format) {
  return factory::resize_with(
      self, size, memory_format, [](size_t nbytes) { return cpu::allocate_storage(nbytes); },
      [](void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); });
}

Scalar _local_scalar_dense(const Tensor& self) {
  OPD_CHECK(self.numel() == 1, "a Tensor with {} elements cannot be converted to Scalar",
            self.numel());
  Scalar result;
  OPD_DISPATCH_EVERY_TYPE(self.scalar_type(), "_local_scalar_dense_cpu", [&] {
    result = to_scalar(*static_cast<const scalar_t*>(self.data_ptr()));
  });
  return result;
}

}  // namespace opd::native
