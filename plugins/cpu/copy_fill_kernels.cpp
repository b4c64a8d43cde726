// copy_ and fill_ on the CPU: every dtype, any strides, src broadcast into self.

#include <complex>
#include <cstring>
#include <type_traits>

#include "common/elementwise.h"
#include "cpu/elementwise_loops.h"
#include "opd/half.h"
#include "opd/native/CPU.h"

namespace opd::native {
namespace {

using common::TensorIterator;

template <class T>
inline constexpr bool kIsComplex = false;
template <class T>
inline constexpr bool kIsComplex<std::complex<T>> = true;
template <class T>
inline constexpr bool kIsHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// A real value as an arithmetic type (the 16-bit floats as float).
template <class T>
auto arithmetic(T v) {
  if constexpr (kIsHalfLike<T>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}

// C++'s conversions, as PyTorch's copy does them: to bool is "non-zero"; complex to real keeps
// the real part; the 16-bit floats go through float.
template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    if constexpr (kIsComplex<From>) {
      return v.real() != 0 || v.imag() != 0;
    } else {
      return arithmetic(v) != 0;
    }
  } else if constexpr (kIsComplex<From>) {
    if constexpr (kIsComplex<To>) {
      return To(static_cast<typename To::value_type>(v.real()),
                static_cast<typename To::value_type>(v.imag()));
    } else {
      return convert<To>(v.real());
    }
  } else if constexpr (kIsComplex<To>) {
    return To(static_cast<typename To::value_type>(arithmetic(v)));
  } else if constexpr (kIsHalfLike<To>) {
    return To(static_cast<float>(arithmetic(v)));
  } else {
    return static_cast<To>(arithmetic(v));
  }
}

void copy_kernel(const TensorIterator& iter) {
  const ScalarType dst = iter.dtype(0), src = iter.dtype(1);
  if (dst == src && iter.is_contiguous()) {
    const auto item = static_cast<int64_t>(iter.tensor(0).element_size());
    char* out = static_cast<char*>(iter.tensor(0).data_ptr());
    const char* in = static_cast<const char*>(iter.tensor(1).data_ptr());
    cpu::parallel_for(0, iter.numel(), common::kGrainSize, [&](int64_t begin, int64_t end) {
      std::memcpy(out + begin * item, in + begin * item, (end - begin) * item);
    });
    return;
  }
  OPD_DISPATCH_EVERY_TYPE(dst, "copy_", [&] {
    using dst_t = scalar_t;
    OPD_DISPATCH_EVERY_TYPE(src, "copy_", [&] {
      cpu::cpu_kernel(iter, [](scalar_t v) -> dst_t { return convert<dst_t>(v); });
    });
  });
}

}  // namespace

Tensor& copy_(Tensor& self, const Tensor& src, bool non_blocking) {
  std::optional<TensorIterator> iter = common::copy_meta(self, src);
  if (iter) {
    OPD_CHECK(self.is_cpu() && src.is_cpu(),
              "copy_: the CPU plugin copies between CPU tensors only, not from {} to {}",
              src.device(), self.device());
    copy_kernel(*iter);
  }
  self.bump_version();
  return self;
}

Tensor& fill__Scalar(Tensor& self, const Scalar& value) {
  TensorIterator iter = common::fill_meta(self, value);
  if (iter.numel() > 0) {
    OPD_DISPATCH_EVERY_TYPE(iter.dtype(), "fill_cpu", [&] {
      const auto v = common::scalar_to<scalar_t>(value);
      cpu::cpu_kernel(iter, [v]() -> scalar_t { return v; });
    });
  }
  self.bump_version();
  return self;
}

}  // namespace opd::native
