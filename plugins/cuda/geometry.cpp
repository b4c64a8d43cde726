#include "cuda/geometry.h"

#include <cmath>
#include <complex>
#include <cstring>

#include "cuda/device_guard.h"
#include "opd/error.h"

namespace opd::cuda {

static_assert(static_cast<int>(kern::Dtype::Bool) == static_cast<int>(ScalarType::Bool));
static_assert(static_cast<int>(kern::Dtype::Int64) == static_cast<int>(ScalarType::Int64));
static_assert(static_cast<int>(kern::Dtype::Float16) == static_cast<int>(ScalarType::Float16));
static_assert(static_cast<int>(kern::Dtype::Float64) == static_cast<int>(ScalarType::Float64));

static_assert(static_cast<int>(kern::Dtype::ComplexDouble) ==
              static_cast<int>(ScalarType::ComplexDouble));

kern::Dtype kernel_dtype(ScalarType dtype, std::string_view kernel, bool with_complex) {
  const ScalarType last = with_complex ? ScalarType::ComplexDouble : ScalarType::Float64;
  OPD_CHECK_T(TypeError, dtype <= last, "\"{}\" not implemented for '{}'", kernel,
              to_string(dtype));
  return static_cast<kern::Dtype>(dtype);
}

kern::ScalarArg scalar_arg(const Scalar& s) {
  kern::ScalarArg a;
  a.is_set = true;
  if (s.is_complex()) {
    // Only complex kernels read `imag`; a real kernel gets the real part, as Scalar::to would
    // refuse a non-zero imaginary part before the launch (common::check_scalar_fits).
    const std::complex<double> z = s.to_complex_double();
    a.f = z.real();
    a.imag = z.imag();
    const bool fits = std::isfinite(a.f) && std::fabs(a.f) < 0x1p63;
    a.i = fits ? static_cast<int64_t>(a.f) : 0;
  } else if (s.is_floating_point()) {
    a.f = s.to_double();
    // Converting NaN, an infinity or a value past int64's range is undefined; only integer
    // kernels read `i`, and the metadata step refuses such values for them.
    const bool fits = std::isfinite(a.f) && std::fabs(a.f) < 0x1p63;
    a.i = fits ? static_cast<int64_t>(a.f) : 0;
  } else {
    a.i = s.to_int64();
    a.f = static_cast<double>(a.i);
    a.is_integral = true;
  }
  return a;
}

kern::ScalarArg scalar_arg(const std::optional<Scalar>& s) {
  return s ? scalar_arg(*s) : kern::ScalarArg{};
}

Launch make_launch(const common::TensorIterator& iter) {
  const int nt = iter.ntensors();
  const int nd = static_cast<int>(iter.loop_shape().size());
  OPD_CHECK(nt <= kern::kMaxOperands,
            "{}: CUDA elementwise kernels take at most {} operands, got {}", iter.name(),
            kern::kMaxOperands, nt);
  OPD_CHECK(nd <= kern::kMaxDims,
            "{}: CUDA elementwise kernels take at most {} dims after merging, got {}", iter.name(),
            kern::kMaxDims, nd);
  Launch launch;
  launch.device = device_index(iter.tensor(0).device());
  launch.stream = current_stream(launch.device);
  kern::Geometry& g = launch.geometry;
  g.ndim = nd;
  g.ntensors = nt;
  g.numel = iter.numel();
  g.contiguous = iter.is_contiguous();
  for (int d = 0; d < nd; ++d) {
    g.sizes[d] = iter.loop_shape()[d];
    for (int k = 0; k < nt; ++k) g.strides[d][k] = iter.loop_stride(k, d);
  }
  for (int k = 0; k < nt; ++k) {
    const Tensor& t = iter.tensor(k);
    if (k > 0 && t.is_cpu()) {
      // A CPU scalar (check_same_device let only a zero-dim one through): its value travels in
      // the launch's parameters, read with stride 0 like any broadcast operand.
      OPD_INTERNAL_ASSERT(t.dim() == 0 && t.element_size() <= sizeof(g.inline_values[k]),
                          "{}: a CPU operand that is not a scalar", iter.name());
      std::memcpy(g.inline_values[k], t.data_ptr(), t.element_size());
      g.inline_mask |= 1u << k;
      g.data[k] = nullptr;
      g.contiguous = false;
      for (int d = 0; d < nd; ++d) g.strides[d][k] = 0;
    } else {
      g.data[k] = static_cast<char*>(t.data_ptr());
    }
  }
  return launch;
}

}  // namespace opd::cuda
