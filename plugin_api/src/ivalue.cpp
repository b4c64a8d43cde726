#include "opd/ivalue.h"

#include <fmt/format.h>

#include <string>

#include "opd/quoting.h"

namespace opd {

IValue::IValue(const Scalar& s) noexcept : IValue() {
  if (s.is_boolean()) {
    tag_ = Tag::Bool;
    payload_.u.as_bool = s.to_bool();
  } else if (s.is_integral(false)) {
    tag_ = Tag::Int;
    payload_.u.as_int = s.to_int64();
  } else if (s.is_floating_point()) {
    tag_ = Tag::Double;
    payload_.u.as_double = s.to_double();
  } else {
    std::complex<double> z = s.to_complex_double();
    tag_ = Tag::ComplexDouble;
    payload_.u.as_complex = {z.real(), z.imag()};
  }
}

const char* IValue::tag_name(Tag t) noexcept {
  switch (t) {
    case Tag::None:
      return "None";
    case Tag::Int:
      return "int";
    case Tag::Double:
      return "float";
    case Tag::Bool:
      return "bool";
    case Tag::ComplexDouble:
      return "complex";
    case Tag::ScalarType:
      return "ScalarType";
    case Tag::Layout:
      return "Layout";
    case Tag::MemoryFormat:
      return "MemoryFormat";
    case Tag::Device:
      return "Device";
    case Tag::Tensor:
      return "Tensor";
    case Tag::Storage:
      return "Storage";
    case Tag::String:
      return "str";
    case Tag::IntList:
      return "int[]";
    case Tag::DoubleList:
      return "float[]";
    case Tag::BoolList:
      return "bool[]";
    case Tag::TensorList:
      return "Tensor[]";
    case Tag::OptionalTensorList:
      return "Tensor?[]";
    case Tag::GenericList:
      return "List";
    case Tag::Tuple:
      return "Tuple";
    case Tag::Capsule:
      return "Capsule";
  }
  return "unknown";
}

void IValue::throw_wrong_tag(const char* expected, Tag found) {
  throw TypeError(fmt::format("Expected {} but got {}", expected, tag_name(found)));
}

void IValue::throw_wrong_capsule_kind(std::string_view expected, std::string_view found) {
  throw TypeError(
      fmt::format("Expected a Capsule of kind '{}' but got one of kind '{}'", expected, found));
}

void IValue::throw_int_overflow(uint64_t v) {
  throw ValueError(fmt::format("IValue: the integer {} does not fit in int64", v));
}

// The only place heap blocks are freed, so that the code doing it stays loaded (see the note on
// detail::IValueHeap).
void IValue::free_heap(Tag t, detail::IValueHeap* h) noexcept {
  auto free_as = [h]<class T>(std::type_identity<T>) {
    delete static_cast<detail::IValueHeapOf<T>*>(h);
  };
  switch (t) {
    case Tag::String:
      return free_as(std::type_identity<std::string>());
    case Tag::IntList:
      return free_as(std::type_identity<std::vector<int64_t>>());
    case Tag::DoubleList:
      return free_as(std::type_identity<std::vector<double>>());
    case Tag::BoolList:
      return free_as(std::type_identity<std::vector<bool>>());
    case Tag::TensorList:
      return free_as(std::type_identity<std::vector<Tensor>>());
    case Tag::OptionalTensorList:
      return free_as(std::type_identity<std::vector<std::optional<Tensor>>>());
    case Tag::GenericList:
    case Tag::Tuple:
      return free_as(std::type_identity<std::vector<IValue>>());
    case Tag::Capsule:
      return free_as(std::type_identity<detail::CapsuleValue>());
    default:
      OPD_INTERNAL_ASSERT(false, "free_heap on a {} IValue", tag_name(t));
  }
}

Scalar IValue::to_scalar() const {
  switch (tag_) {
    case Tag::Int:
      return Scalar(payload_.u.as_int);
    case Tag::Double:
      return Scalar(payload_.u.as_double);
    case Tag::Bool:
      return Scalar(payload_.u.as_bool);
    case Tag::ComplexDouble:
      return Scalar(std::complex<double>(payload_.u.as_complex.re, payload_.u.as_complex.im));
    default:
      throw_wrong_tag("Scalar", tag_);
  }
}

namespace {

template <class Range, class Fn>
std::string repr_list(const Range& items, Fn&& repr_one) {
  std::string out = "[";
  bool first = true;
  for (const auto& x : items) {
    if (!first) out += ", ";
    first = false;
    out += repr_one(x);
  }
  return out + "]";
}

}  // namespace

std::string IValue::repr() const {
  switch (tag_) {
    case Tag::None:
      return "None";
    case Tag::Int:
    case Tag::Double:
    case Tag::Bool:
    case Tag::ComplexDouble:
      return to_scalar().str();
    case Tag::ScalarType:
      return python_name(payload_.u.as_scalar_type);
    case Tag::Layout:
      return python_name(payload_.u.as_layout);
    case Tag::MemoryFormat:
      return python_name(payload_.u.as_memory_format);
    case Tag::Device:
      return payload_.u.as_device.str();
    case Tag::Tensor:
      return payload_.as_tensor.str();
    case Tag::Storage: {
      const Storage& s = payload_.as_storage;
      if (!s.defined()) return "Storage(undefined)";
      return fmt::format("Storage(nbytes={}, device={})", s.nbytes(), s.device().str());
    }
    case Tag::String:
      return quote(to_string_ref(), QuoteStyle::kPython);
    case Tag::IntList:
      return repr_list(to_int_list(), [](int64_t x) { return std::to_string(x); });
    case Tag::DoubleList:
      return repr_list(to_double_list(), [](double x) { return Scalar(x).str(); });
    case Tag::BoolList:
      return repr_list(to_bool_list(), [](bool x) { return std::string(x ? "True" : "False"); });
    case Tag::TensorList:
      return repr_list(to_tensor_list(), [](const Tensor& t) { return t.str(); });
    case Tag::OptionalTensorList:
      return repr_list(to_optional_tensor_list(), [](const std::optional<Tensor>& t) {
        return t ? t->str() : std::string("None");
      });
    case Tag::GenericList:
      return repr_list(to_generic_list(), [](const IValue& x) { return x.repr(); });
    case Tag::Tuple: {
      const std::vector<IValue>& items = to_tuple();
      std::string out = "(";
      for (size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += ", ";
        out += items[i].repr();
      }
      return out + (items.size() == 1 ? ",)" : ")");
    }
    case Tag::Capsule:
      return fmt::format("<Capsule of kind '{}'>", capsule_kind());
  }
  return "?";
}

bool IValue::operator==(const IValue& o) const {
  if (tag_ != o.tag_) return false;
  if (is_heap() && payload_.u.as_heap == o.payload_.u.as_heap) return true;
  auto same_tensors = [](const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[i].is_same(b[i])) return false;
    }
    return true;
  };
  switch (tag_) {
    case Tag::None:
      return true;
    case Tag::Int:
      return payload_.u.as_int == o.payload_.u.as_int;
    case Tag::Double:
      return payload_.u.as_double == o.payload_.u.as_double;
    case Tag::Bool:
      return payload_.u.as_bool == o.payload_.u.as_bool;
    case Tag::ComplexDouble:
      return payload_.u.as_complex.re == o.payload_.u.as_complex.re &&
             payload_.u.as_complex.im == o.payload_.u.as_complex.im;
    case Tag::ScalarType:
      return payload_.u.as_scalar_type == o.payload_.u.as_scalar_type;
    case Tag::Layout:
      return payload_.u.as_layout == o.payload_.u.as_layout;
    case Tag::MemoryFormat:
      return payload_.u.as_memory_format == o.payload_.u.as_memory_format;
    case Tag::Device:
      return payload_.u.as_device == o.payload_.u.as_device;
    case Tag::Tensor:
      return payload_.as_tensor.is_same(o.payload_.as_tensor);
    case Tag::Storage:
      return payload_.as_storage.is_same(o.payload_.as_storage);
    case Tag::String:
      return to_string_ref() == o.to_string_ref();
    case Tag::IntList:
      return to_int_list() == o.to_int_list();
    case Tag::DoubleList:
      return to_double_list() == o.to_double_list();
    case Tag::BoolList:
      return to_bool_list() == o.to_bool_list();
    case Tag::TensorList:
      return same_tensors(to_tensor_list(), o.to_tensor_list());
    case Tag::OptionalTensorList: {
      const auto& a = to_optional_tensor_list();
      const auto& b = o.to_optional_tensor_list();
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].has_value() != b[i].has_value()) return false;
        if (a[i] && !a[i]->is_same(*b[i])) return false;
      }
      return true;
    }
    case Tag::GenericList:
      return to_generic_list() == o.to_generic_list();
    case Tag::Tuple:
      return to_tuple() == o.to_tuple();
    case Tag::Capsule: {
      const auto& a = heap<detail::CapsuleValue>(Tag::Capsule);
      const auto& b = o.heap<detail::CapsuleValue>(Tag::Capsule);
      return a.kind == b.kind && a.object == b.object;
    }
  }
  return false;
}

}  // namespace opd
