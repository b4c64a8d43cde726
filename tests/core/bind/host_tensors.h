#pragma once

// CPU tensors over buffers of their own, made without any plugin, for the binder's tests and
// opd eval's (the test kernels of tests/tools/eval_parser_test.cpp make their outputs with it).

#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

#include "opd/tensor.h"

namespace opd::test_util {

inline void free_buffer(void* p, void*) { ::operator delete(p); }

// A tensor of `sizes`, contiguous, with uninitialised values; on Meta, one without storage.
inline Tensor new_tensor(IntArrayRef sizes, ScalarType dtype, Device device) {
  if (device.type == DeviceType::Meta) return from_blob(nullptr, sizes, dtype, device);
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  void* p = ::operator new(std::max<size_t>(n * element_size(dtype), 1));
  return from_blob(p, sizes, contiguous_strides(sizes), dtype, device, &free_buffer, nullptr);
}

inline Tensor floats(std::vector<float> values, std::vector<int64_t> sizes) {
  Tensor t = new_tensor(sizes, kFloat, Device(DeviceType::CPU));
  std::copy(values.begin(), values.end(), t.data_ptr<float>());
  return t;
}

template <class T>
Tensor filled(std::vector<T> values, std::vector<int64_t> sizes) {
  constexpr ScalarType st = cpp_type_to_scalar_type<T>();
  Tensor t = new_tensor(sizes, st, Device(DeviceType::CPU));
  std::copy(values.begin(), values.end(), t.data_ptr<T>());
  return t;
}

}  // namespace opd::test_util
