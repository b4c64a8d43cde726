// CPU kernels of the factory operators (empty, empty_strided, arange, linspace, logspace,
// tril_indices, triu_indices, rand, randn) and of the two that touch a tensor's memory as a whole
// (resize_, _local_scalar_dense). Their metadata rules are shared with the other backends in
// common/factory_shape.h and common/range_shape.h.

#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>

#include "common/factory_shape.h"
#include "common/philox.h"
#include "common/range_shape.h"
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

// A Scalar as T (the 16-bit floats through float).
template <class T>
T to_value(const Scalar& s) {
  if constexpr (cpu::kIsHalfLike<T>) {
    return T(s.to<float>());
  } else {
    return s.to<T>();
  }
}

// linspace's element i as PyTorch's CPU kernel computes it: start + step * i for the first half,
// end - step * (steps - 1 - i) for the second (so that both ends are exact), the step in T (in
// double for integral T), fused multiply-adds as PyTorch's vectorised loop compiles to.
template <class T>
T linspace_value(const Scalar& start_s, const Scalar& end_s, int64_t steps, int64_t i) {
  const int64_t halfway = steps / 2;
  if constexpr (kIsComplex<T>) {
    const T start = start_s.to<T>(), end = end_s.to<T>();
    const T step = (end - start) / static_cast<typename T::value_type>(steps - 1);
    using R = typename T::value_type;
    return i < halfway ? start + step * static_cast<R>(i)
                       : end - step * static_cast<R>(steps - i - 1);
  } else if constexpr (std::is_integral_v<T>) {
    const T start = start_s.to<T>(), end = end_s.to<T>();
    const double step = (static_cast<double>(end) - static_cast<double>(start)) / (steps - 1);
    return static_cast<T>(i < halfway ? start + step * static_cast<double>(i)
                                      : end - step * static_cast<double>(steps - i - 1));
  } else if constexpr (std::is_floating_point_v<T>) {
    const T start = start_s.to<T>(), end = end_s.to<T>();
    const T step = (end - start) / static_cast<T>(steps - 1);
    return i < halfway ? std::fma(step, static_cast<T>(i), start)
                       : std::fma(-step, static_cast<T>(steps - i - 1), end);
  } else {
    // Half and BFloat16: each operation rounds to T, as c10::Half's operators do.
    const float start = static_cast<float>(to_value<T>(start_s));
    const float end = static_cast<float>(to_value<T>(end_s));
    const float step =
        static_cast<float>(T((end - start) / static_cast<float>(T(float(steps - 1)))));
    const int64_t k = i < halfway ? i : steps - i - 1;
    const float product = static_cast<float>(T(step * static_cast<float>(T(float(k)))));
    return i < halfway ? T(start + product) : T(end - product);
  }
}

// logspace's element i: base ** (linspace's exponent), in double (complex<double>), as
// PyTorch's; an integral result through int64, so that values past T's range wrap as there.
template <class T>
T logspace_value(const Scalar& start_s, const Scalar& end_s, int64_t steps, double base,
                 int64_t i) {
  const int64_t halfway = steps / 2;
  if constexpr (kIsComplex<T>) {
    const std::complex<double> start = start_s.to<std::complex<double>>();
    const std::complex<double> end = end_s.to<std::complex<double>>();
    const std::complex<double> step = (end - start) / static_cast<double>(steps - 1);
    const std::complex<double> e = i < halfway ? start + step * static_cast<double>(i)
                                               : end - step * static_cast<double>(steps - i - 1);
    return static_cast<T>(std::pow(std::complex<double>(base), e));
  } else {
    const double start = static_cast<double>(cpu::arithmetic(to_value<T>(start_s)));
    const double end = static_cast<double>(cpu::arithmetic(to_value<T>(end_s)));
    const double step = (end - start) / static_cast<double>(steps - 1);
    const double e = i < halfway ? start + step * static_cast<double>(i)
                                 : end - step * static_cast<double>(steps - i - 1);
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(static_cast<int64_t>(std::pow(static_cast<float>(base), e)));
    } else {
      return static_cast<T>(std::pow(base, e));
    }
  }
}

// Fills `out` (contiguous, `n` elements) with value(i).
template <class T, class Value>
void fill_each(const Tensor& out, int64_t n, Value value) {
  T* data = static_cast<T*>(out.data_ptr());
  cpu::parallel_for(0, n, kFillGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) data[i] = value(i);
  });
}

// tril_indices / triu_indices: the rows, then the columns, of the triangle's elements in
// row-major order; `in_triangle(r, c)` says which.
template <class Index, class InTriangle>
void fill_trilu(const Tensor& out, int64_t row, int64_t col, InTriangle in_triangle) {
  Index* rows = static_cast<Index*>(out.data_ptr());
  Index* cols = rows + out.size(1);
  int64_t k = 0;
  for (int64_t r = 0; r < row; ++r) {
    for (int64_t c = 0; c < col; ++c) {
      if (!in_triangle(r, c)) continue;
      rows[k] = static_cast<Index>(r);
      cols[k] = static_cast<Index>(c);
      ++k;
    }
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

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                std::optional<ScalarType> dtype, std::optional<Layout> layout,
                std::optional<Device>, std::optional<bool> pin_memory) {
  range::check_steps(steps);
  const ScalarType t = factory::factory_dtype("linspace", dtype, layout, std::nullopt, kBackend);
  range::check_range_dtype("linspace_cpu", t, /*half_too=*/true);
  Tensor out = new_tensor({steps}, t, pin_memory);
  if (steps == 0) return out;
  OPD_DISPATCH_EVERY_TYPE(t, "linspace_cpu", [&] {
    if constexpr (!std::is_same_v<scalar_t, bool>) {
      fill_each<scalar_t>(out, steps, [&](int64_t i) {
        return steps == 1 ? to_value<scalar_t>(start)
                          : linspace_value<scalar_t>(start, end, steps, i);
      });
    }
  });
  return out;
}

Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base,
                std::optional<ScalarType> dtype, std::optional<Layout> layout,
                std::optional<Device>, std::optional<bool> pin_memory) {
  range::check_steps(steps);
  const ScalarType t = factory::factory_dtype("logspace", dtype, layout, std::nullopt, kBackend);
  range::check_range_dtype("logspace_cpu", t, /*half_too=*/false);
  Tensor out = new_tensor({steps}, t, pin_memory);
  if (steps == 0) return out;
  OPD_DISPATCH_EVERY_TYPE(t, "logspace_cpu", [&] {
    if constexpr (!std::is_same_v<scalar_t, bool>) {
      // One step: base ** start (PyTorch's fill, in double).
      const Scalar& last = steps == 1 ? start : end;
      fill_each<scalar_t>(out, steps, [&](int64_t i) {
        return logspace_value<scalar_t>(start, last, std::max<int64_t>(steps, 2), base, i);
      });
    }
  });
  return out;
}

Tensor tril_indices(int64_t row, int64_t col, int64_t offset, std::optional<ScalarType> dtype,
                    std::optional<Layout> layout, std::optional<Device>,
                    std::optional<bool> pin_memory) {
  const ScalarType t =
      factory::factory_dtype("tril_indices", dtype.value_or(kLong), layout, std::nullopt, kBackend);
  range::check_trilu("tril_indices", row, col, t);
  Tensor out = new_tensor({2, range::tril_size(row, col, offset)}, t, pin_memory);
  auto in_triangle = [offset](int64_t r, int64_t c) { return c - r <= offset; };
  if (t == kInt) {
    fill_trilu<int32_t>(out, row, col, in_triangle);
  } else {
    fill_trilu<int64_t>(out, row, col, in_triangle);
  }
  return out;
}

Tensor triu_indices(int64_t row, int64_t col, int64_t offset, std::optional<ScalarType> dtype,
                    std::optional<Layout> layout, std::optional<Device>,
                    std::optional<bool> pin_memory) {
  const ScalarType t =
      factory::factory_dtype("triu_indices", dtype.value_or(kLong), layout, std::nullopt, kBackend);
  range::check_trilu("triu_indices", row, col, t);
  Tensor out = new_tensor({2, range::triu_size(row, col, offset)}, t, pin_memory);
  auto in_triangle = [offset](int64_t r, int64_t c) { return c - r >= offset; };
  if (t == kInt) {
    fill_trilu<int32_t>(out, row, col, in_triangle);
  } else {
    fill_trilu<int64_t>(out, row, col, in_triangle);
  }
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
