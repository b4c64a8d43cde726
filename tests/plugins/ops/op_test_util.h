#pragma once

// Shared by the operator tests: the default plugins loaded once per process, tensors from
// values, and comparisons that print both sides. Operator tests are parameterised over devices
// (op_test_devices): CPU, and CUDA where a device is there, each checked against the same
// expected values.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <string>
#include <typeinfo>
#include <vector>

#include "opd/cuda.h"
#include "opd/ops.h"
#include "opd/plugin_manager.h"

namespace opd::test {

// Loads cpu, meta and composite (and whatever else is `load: default`) once.
inline void load_default_plugins() {
  static const bool loaded = [] {
    plugins().load_default();
    return true;
  }();
  (void)loaded;
}

// A tensor with these values (row-major) and sizes, of `dtype`, on `device`.
inline Tensor tensor(const std::vector<double>& values, std::vector<int64_t> sizes,
                     ScalarType dtype = kFloat, Device device = Device(kCPU)) {
  Tensor t = empty(sizes, TensorOptions().dtype(kDouble));
  OPD_CHECK(t.numel() == static_cast<int64_t>(values.size()),
            "test tensor: {} values for {} elements", values.size(), t.numel());
  double* p = t.data_ptr<double>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t.to(device, dtype);
}
inline Tensor tensor(const std::vector<double>& values, ScalarType dtype = kFloat,
                     Device device = Device(kCPU)) {
  return tensor(values, {static_cast<int64_t>(values.size())}, dtype, device);
}

// The values of `t` in row-major logical order, as doubles (any dtype, any strides, any device
// with data).
inline std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(Device(kCPU), kDouble).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

using Complex = std::complex<double>;

// A complex tensor with these values (row-major) and sizes, of `dtype`, on `device`: made in
// ComplexDouble on the CPU, then converted and moved by to().
inline Tensor complex_tensor(const std::vector<Complex>& values, std::vector<int64_t> sizes,
                             ScalarType dtype = kComplexFloat, Device device = Device(kCPU)) {
  Tensor t = empty(sizes, TensorOptions().dtype(kComplexDouble));
  OPD_CHECK(t.numel() == static_cast<int64_t>(values.size()),
            "test tensor: {} values for {} elements", values.size(), t.numel());
  auto* p = static_cast<Complex*>(t.data_ptr());
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t.to(device, dtype);
}

// The values of `t` in row-major logical order, as complex doubles (real dtypes too).
inline std::vector<Complex> complex_values(const Tensor& t) {
  Tensor c = t.to(Device(kCPU), kComplexDouble).contiguous();
  const auto* p = static_cast<const Complex*>(c.data_ptr());
  return std::vector<Complex>(p, p + c.numel());
}

inline std::vector<int64_t> sizes(const Tensor& t) { return t.sizes().vec(); }
inline std::vector<int64_t> strides(const Tensor& t) { return t.strides().vec(); }

// Same dtype, sizes and values (within `tol` for floating and complex types; NaN equals NaN;
// complex values compare both parts).
inline ::testing::AssertionResult tensors_equal(const Tensor& actual, const Tensor& expected,
                                                double tol = 1e-6) {
  if (actual.scalar_type() != expected.scalar_type()) {
    return ::testing::AssertionFailure() << "dtype " << to_string(actual.scalar_type())
                                         << " != " << to_string(expected.scalar_type());
  }
  if (sizes(actual) != sizes(expected)) {
    return ::testing::AssertionFailure() << "sizes " << ::testing::PrintToString(sizes(actual))
                                         << " != " << ::testing::PrintToString(sizes(expected));
  }
  if (is_complex(actual.scalar_type())) {
    auto a = complex_values(actual), e = complex_values(expected);
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != e[i] && !(std::abs(a[i] - e[i]) <= tol * (1 + std::abs(e[i])))) {
        return ::testing::AssertionFailure()
               << "element " << i << ": " << a[i] << " != " << e[i] << "\n  actual   "
               << ::testing::PrintToString(a) << "\n  expected " << ::testing::PrintToString(e);
      }
    }
    return ::testing::AssertionSuccess();
  }
  auto a = values(actual), e = values(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    bool same = a[i] == e[i] || (std::isnan(a[i]) && std::isnan(e[i])) ||
                std::abs(a[i] - e[i]) <= tol * (1 + std::abs(e[i]));
    if (!same) {
      return ::testing::AssertionFailure()
             << "element " << i << ": " << a[i] << " != " << e[i] << "\n  actual   "
             << ::testing::PrintToString(a) << "\n  expected " << ::testing::PrintToString(e);
    }
  }
  return ::testing::AssertionSuccess();
}

// The devices operator tests run on: CPU first (the reference), then the first CUDA device when
// the CUDA plugin is loaded and found one. Called while GoogleTest registers the tests, so the
// default plugins are loaded by then.
inline std::vector<Device> op_test_devices() {
  load_default_plugins();
  std::vector<Device> devices{Device(kCPU)};
  if (cuda::is_available()) devices.emplace_back(kCUDA, 0);
  return devices;
}

// The message of the Error `fn` throws, or "" (and a test failure) when it throws none.
template <class F>
std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.msg();
  }
  ADD_FAILURE() << "expected an opd::Error";
  return "";
}

// The message of the error `fn` throws, which must be exactly an `E` (opd::Error stands for
// PyTorch's RuntimeError).
template <class E, class F>
std::string error_of_type(F&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    if (typeid(e) != typeid(E)) {
      ADD_FAILURE() << "expected " << typeid(E).name() << ", got " << typeid(e).name() << ": "
                    << e.msg();
    }
    return e.msg();
  }
  ADD_FAILURE() << "expected " << typeid(E).name() << ", nothing was thrown";
  return "";
}

}  // namespace opd::test
