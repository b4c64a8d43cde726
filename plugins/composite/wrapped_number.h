// PyTorch's wrapped_scalar_tensor, for the composites that take a number where the kernel takes
// a tensor (the `.Scalar` overloads of the binary operators, xlogy's).
#pragma once

#include <complex>
#include <new>

#include "opd/plugin.h"
#include "opd/storage.h"
#include "opd/tensor.h"

namespace opd::native {

// Note [Wrapped numbers]
// PyTorch's wrapped_scalar_tensor: a 0-dim CPU tensor of the number's own kind (Bool, Long,
// Double or ComplexDouble) marked as a wrapped number. Type promotion ranks it below every
// tensor of the same category, so `int_tensor * 2.5` is Float, not Double, and `float_tensor
// + 1` stays Float; 0-dim CPU tensors combine with tensors on any device, so it needs no copy.
// It is made here, as PyTorch's scalar_to_tensor makes it, not by calling scalar_tensor: a
// dispatched factory (scalar_tensor, then empty and fill_) cost x.mul(2) a third of its time.
// Its memory is freed by the storage's deleter below, which lives in this plugin's code: the
// storage holds this plugin's reference (this_plugin_reference()), so a wrapped number an
// autograd graph saved keeps that code mapped until it goes (Note [Storage ownership]).
namespace wrapped_number_detail {
inline void free_number(void* data, void*) noexcept { ::operator delete(data); }
}  // namespace wrapped_number_detail

inline Tensor wrapped_scalar_tensor(const Scalar& s) {
  const ScalarType type = s.type();
  // Room for the largest of the four kinds, complex<double>.
  void* data = ::operator new(sizeof(std::complex<double>));  // aligned for any of them
  switch (type) {
    case ScalarType::Bool:
      *static_cast<bool*>(data) = s.to<bool>();
      break;
    case ScalarType::Int64:
      *static_cast<int64_t*>(data) = s.to<int64_t>();
      break;
    case ScalarType::ComplexDouble:
      *static_cast<std::complex<double>*>(data) = s.to<std::complex<double>>();
      break;
    default:
      *static_cast<double*>(data) = s.to<double>();
      break;
  }
  const Device cpu(DeviceType::CPU);
  Storage storage =
      Storage::create(data, element_size(type), cpu, &wrapped_number_detail::free_number, nullptr,
                      this_plugin_reference());
  Tensor t = make_tensor(std::move(storage), {}, {}, 0, type, cpu);
  t.unsafe_get_impl()->set_wrapped_number(true);
  return t;
}

}  // namespace opd::native
