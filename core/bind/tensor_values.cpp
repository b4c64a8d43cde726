#include "opd/bind/tensor_values.h"

#include <fmt/format.h>

#include <complex>
#include <cstring>
#include <new>

#include "opd/bind/binding.h"
#include "opd/error.h"
#include "opd/half.h"
#include "opd/ops.h"

namespace opd::bind {
namespace {

struct Number {
  enum class Kind { Bool, Int, Float, Complex } kind;
  int64_t i = 0;  // Bool (0/1) and Int
  std::complex<double> z;
};

std::optional<std::vector<IValue>> sequence(const IValue& v) {
  if (v.is_generic_list() || v.is_tuple()) {
    return v.is_tuple() ? v.to_tuple() : v.to_generic_list();
  }
  std::vector<IValue> out;
  if (v.is_int_list()) {
    for (int64_t x : v.to_int_list()) out.emplace_back(x);
  } else if (v.is_double_list()) {
    for (double x : v.to_double_list()) out.emplace_back(x);
  } else if (v.is_bool_list()) {
    for (bool x : v.to_bool_list()) out.emplace_back(x);
  } else {
    return std::nullopt;
  }
  return out;
}

// Walks nested lists as torch.tensor does: the first element of each level fixes that level's
// length, every sibling must agree.
class LiteralReader {
 public:
  void read(const IValue& data) {
    infer_sizes(data);
    collect(data, 0);
  }
  std::vector<int64_t> sizes;
  std::vector<Number> values;

 private:
  void infer_sizes(const IValue& v) {
    const IValue* at = &v;
    std::optional<std::vector<IValue>> items;
    std::vector<std::vector<IValue>> keep;  // keeps each level alive while descending
    while ((items = sequence(*at))) {
      sizes.push_back(static_cast<int64_t>(items->size()));
      if (items->empty()) break;
      keep.push_back(std::move(*items));
      at = &keep.back()[0];
    }
  }
  void collect(const IValue& v, size_t dim) {
    auto items = sequence(v);
    if (dim == sizes.size()) {
      OPD_CHECK_T(ValueError, !items, "tensor(): expected a number at dim {} but got a sequence",
                  dim);
      values.push_back(number(v));
      return;
    }
    if (!items) {
      throw ValueError(fmt::format("tensor(): expected sequence of length {} at dim {} (got {})",
                                   sizes[dim], dim, python_type_name(v)));
    }
    OPD_CHECK_T(ValueError, static_cast<int64_t>(items->size()) == sizes[dim],
                "tensor(): expected sequence of length {} at dim {} (got {})", sizes[dim], dim,
                items->size());
    for (const IValue& x : *items) collect(x, dim + 1);
  }
  static Number number(const IValue& v) {
    if (v.is_bool()) return {Number::Kind::Bool, v.to_bool() ? 1 : 0, {}};
    if (v.is_int()) return {Number::Kind::Int, v.to_int(), {}};
    if (v.is_double()) return {Number::Kind::Float, 0, {v.to_double(), 0}};
    if (v.is_complex_double()) return {Number::Kind::Complex, 0, v.to_complex_double()};
    throw TypeError(fmt::format("tensor(): expected numbers or nested lists of numbers, got {}",
                                python_type_name(v)));
  }
};

ScalarType infer_dtype(const std::vector<Number>& values) {
  auto kind = Number::Kind::Bool;
  for (const Number& n : values) kind = std::max(kind, n.kind);
  if (values.empty()) return kFloat;
  switch (kind) {
    case Number::Kind::Bool:
      return kBool;
    case Number::Kind::Int:
      return kLong;
    case Number::Kind::Float:
      return kFloat;
    case Number::Kind::Complex:
      return kComplexFloat;
  }
  return kFloat;
}

template <class T>
void store_as(void* dst, const Number& n) {
  T value;
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    using R = typename T::value_type;
    value = n.kind == Number::Kind::Complex || n.kind == Number::Kind::Float
                ? T(static_cast<R>(n.z.real()), static_cast<R>(n.z.imag()))
                : T(static_cast<R>(n.i), 0);
  } else {
    OPD_CHECK_T(TypeError, n.kind != Number::Kind::Complex,
                "tensor(): can't convert complex to a real dtype");
    if (n.kind == Number::Kind::Float) {
      if constexpr (std::is_same_v<T, bool>) {
        value = n.z.real() != 0;
      } else {
        value = static_cast<T>(n.z.real());
      }
    } else {
      value = static_cast<T>(n.i);
    }
  }
  std::memcpy(dst, &value, sizeof(T));
}

void store(ScalarType t, void* dst, const Number& n) {
  switch (t) {
    case ScalarType::Bool:
      return store_as<bool>(dst, n);
    case ScalarType::UInt8:
      return store_as<uint8_t>(dst, n);
    case ScalarType::Int8:
      return store_as<int8_t>(dst, n);
    case ScalarType::Int16:
      return store_as<int16_t>(dst, n);
    case ScalarType::Int32:
      return store_as<int32_t>(dst, n);
    case ScalarType::Int64:
      return store_as<int64_t>(dst, n);
    case ScalarType::Float16:
      return store_as<Half>(dst, n);
    case ScalarType::BFloat16:
      return store_as<BFloat16>(dst, n);
    case ScalarType::Float32:
      return store_as<float>(dst, n);
    case ScalarType::Float64:
      return store_as<double>(dst, n);
    case ScalarType::ComplexFloat:
      return store_as<std::complex<float>>(dst, n);
    case ScalarType::ComplexDouble:
      return store_as<std::complex<double>>(dst, n);
    case ScalarType::Undefined:
      break;
  }
  throw TypeError("tensor(): undefined dtype");
}

void free_buffer(void* data, void*) { ::operator delete(data); }

template <class T>
double load_real(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return static_cast<double>(static_cast<float>(v));
}

}  // namespace

Tensor wrapped_number(const Scalar& s) {
  // Laid out by the binder itself, as a literal: the binder makes these while binding (a number
  // for a Tensor argument, Note [Numbers as tensors] in binding.cpp), where no operator is called.
  Tensor t = make_tensor_literal(IValue(s), s.type(), Device(DeviceType::CPU));
  t.unsafe_get_impl()->set_wrapped_number(true);
  return t;
}

Tensor make_tensor_literal(const IValue& data, std::optional<ScalarType> dtype,
                           std::optional<Device> device) {
  LiteralReader reader;
  reader.read(data);
  ScalarType t = dtype.value_or(infer_dtype(reader.values));
  Device d = device.value_or(Device(DeviceType::CPU));
  if (d.type == DeviceType::Meta) {
    return call_operator("aten::empty.memory_format", {IValue(reader.sizes)},
                         {{"dtype", IValue(t)}, {"device", IValue(d)}})
        .to_tensor();
  }
  size_t item = element_size(t);
  size_t nbytes = reader.values.size() * item;
  void* buffer = ::operator new(std::max<size_t>(nbytes, 1));
  for (size_t i = 0; i < reader.values.size(); ++i) {
    try {
      store(t, static_cast<char*>(buffer) + i * item, reader.values[i]);
    } catch (...) {
      ::operator delete(buffer);
      throw;
    }
  }
  Tensor cpu;
  try {
    cpu = from_blob(buffer, reader.sizes, contiguous_strides(reader.sizes), t,
                    Device(DeviceType::CPU), &free_buffer, nullptr);
  } catch (...) {
    ::operator delete(buffer);
    throw;
  }
  if (d.type == DeviceType::CPU) return cpu;
  return call_operator("aten::_to_copy", {IValue(cpu)}, {{"device", IValue(d)}}).to_tensor();
}

int64_t HostValues::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

HostValues read_values(const Tensor& tensor) {
  Tensor t = tensor;
  if (!t.is_cpu()) {
    t = call_operator("aten::_to_copy", {IValue(t)}, {{"device", IValue(Device(DeviceType::CPU))}})
            .to_tensor();
  }
  ScalarType dtype = t.dtype();
  HostValues out;
  out.sizes.assign(t.sizes().begin(), t.sizes().end());
  if (dtype == kBool) {
    out.kind = HostValues::Kind::Bool;
  } else if (is_integral(dtype, false)) {
    out.kind = HostValues::Kind::Int;
  } else if (is_complex(dtype)) {
    out.kind = HostValues::Kind::Complex;
  } else {
    out.kind = HostValues::Kind::Float;
  }
  const int64_t n = out.numel();
  if (n == 0) return out;
  const auto* base = static_cast<const char*>(t.data_ptr());
  const int64_t item = static_cast<int64_t>(element_size(dtype));
  const int64_t dims = t.dim();
  std::vector<int64_t> index(static_cast<size_t>(dims), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t offset = 0;
    for (int64_t d = 0; d < dims; ++d) offset += index[d] * t.strides()[d];
    const char* p = base + offset * item;
    switch (dtype) {
      case ScalarType::Bool:
        out.ints.push_back(*reinterpret_cast<const uint8_t*>(p) != 0);
        break;
      case ScalarType::UInt8:
        out.ints.push_back(*reinterpret_cast<const uint8_t*>(p));
        break;
      case ScalarType::Int8:
        out.ints.push_back(*reinterpret_cast<const int8_t*>(p));
        break;
      case ScalarType::Int16:
        out.ints.push_back(*reinterpret_cast<const int16_t*>(p));
        break;
      case ScalarType::Int32:
        out.ints.push_back(*reinterpret_cast<const int32_t*>(p));
        break;
      case ScalarType::Int64:
        out.ints.push_back(*reinterpret_cast<const int64_t*>(p));
        break;
      case ScalarType::Float16:
        out.reals.push_back(load_real<Half>(p));
        break;
      case ScalarType::BFloat16:
        out.reals.push_back(load_real<BFloat16>(p));
        break;
      case ScalarType::Float32:
        out.reals.push_back(*reinterpret_cast<const float*>(p));
        break;
      case ScalarType::Float64:
        out.reals.push_back(*reinterpret_cast<const double*>(p));
        break;
      case ScalarType::ComplexFloat: {
        const auto* z = reinterpret_cast<const std::complex<float>*>(p);
        out.reals.push_back(z->real());
        out.imags.push_back(z->imag());
        break;
      }
      case ScalarType::ComplexDouble: {
        const auto* z = reinterpret_cast<const std::complex<double>*>(p);
        out.reals.push_back(z->real());
        out.imags.push_back(z->imag());
        break;
      }
      case ScalarType::Undefined:
        throw TypeError("opd eval: a tensor of undefined dtype");
    }
    for (int64_t d = dims - 1; d >= 0; --d) {
      if (++index[d] < t.sizes()[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

}  // namespace opd::bind
