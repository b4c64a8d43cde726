#include "opd/bind/print.h"

#include <fmt/format.h>

#include <cmath>

#include "opd/bind/tensor_values.h"
#include "opd/layout.h"

namespace opd::bind {
namespace {

std::string join_reprs(const std::vector<IValue>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + repr(items[i]);
  return out;
}

template <class T>
std::vector<IValue> boxed_items(const std::vector<T>& xs) {
  std::vector<IValue> out;
  for (const auto& x : xs) out.emplace_back(x);
  return out;
}

std::optional<std::vector<IValue>> items_of(const IValue& v) {
  if (v.is_generic_list()) return v.to_generic_list();
  if (v.is_tensor_list()) return boxed_items(v.to_tensor_list());
  if (v.is_optional_tensor_list()) return boxed_items(v.to_optional_tensor_list());
  return std::nullopt;
}

nlohmann::ordered_json float_json(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  return d;
}

nlohmann::ordered_json tensor_json(const Tensor& t) {
  if (!t.defined()) return nullptr;
  nlohmann::ordered_json out = {
      {"dtype", python_name(t.dtype())},
      {"shape", std::vector<int64_t>(t.sizes().begin(), t.sizes().end())},
      {"strides", std::vector<int64_t>(t.strides().begin(), t.strides().end())},
      {"device", t.device().str()}};
  if (t.is_meta()) {
    out["data"] = nullptr;
    return out;
  }
  HostValues h = read_values(t);
  nlohmann::ordered_json data = nlohmann::ordered_json::array();
  for (int64_t i = 0; i < h.numel(); ++i) {
    switch (h.kind) {
      case HostValues::Kind::Bool:
        data.push_back(h.ints[i] != 0);
        break;
      case HostValues::Kind::Int:
        data.push_back(h.ints[i]);
        break;
      case HostValues::Kind::Float:
        data.push_back(float_json(h.reals[i]));
        break;
      case HostValues::Kind::Complex:
        data.push_back({float_json(h.reals[i]), float_json(h.imags[i])});
        break;
    }
  }
  out["data"] = std::move(data);
  return out;
}

}  // namespace

std::string repr(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::Tensor:
      return tensor_repr(v.to_tensor());
    case IValue::Tag::ScalarType:
      return fmt::format("torch.{}", python_name(v.to_scalar_type()));
    case IValue::Tag::Layout:
      return fmt::format("torch.{}", python_name(v.to_layout()));
    case IValue::Tag::MemoryFormat:
      return fmt::format("torch.{}", python_name(v.to_memory_format()));
    case IValue::Tag::Device: {
      Device d = v.to_device();
      if (!d.has_index()) return fmt::format("device(type='{}')", device_type_name(d.type));
      return fmt::format("device(type='{}', index={})", device_type_name(d.type), d.index);
    }
    case IValue::Tag::Tuple: {
      const auto& items = v.to_tuple();
      return "(" + join_reprs(items) + (items.size() == 1 ? ",)" : ")");
    }
    default:
      break;
  }
  if (auto items = items_of(v)) return "[" + join_reprs(*items) + "]";
  return v.repr();  // numbers, bools, None, str, int[], float[], bool[]
}

std::string repr(const Value& v) {
  if (v.struct_name.empty() || !v.value.is_tuple()) return repr(v.value);
  const auto& items = v.value.to_tuple();
  std::string out = fmt::format("torch.return_types.{}(", v.struct_name);
  for (size_t i = 0; i < items.size(); ++i) {
    out += fmt::format("{}\n{}={}", i ? "," : "", v.field_names[i], repr(items[i]));
  }
  return out + ")";
}

nlohmann::ordered_json to_json(const IValue& v) {
  switch (v.tag()) {
    case IValue::Tag::None:
      return nullptr;
    case IValue::Tag::Tensor:
      return tensor_json(v.to_tensor());
    case IValue::Tag::Int:
      return v.to_int();
    case IValue::Tag::Double:
      return float_json(v.to_double());
    case IValue::Tag::Bool:
      return v.to_bool();
    case IValue::Tag::ComplexDouble:
      return {float_json(v.to_complex_double().real()), float_json(v.to_complex_double().imag())};
    case IValue::Tag::String:
      return v.to_string_ref();
    case IValue::Tag::ScalarType:
      return python_name(v.to_scalar_type());
    case IValue::Tag::Layout:
      return python_name(v.to_layout());
    case IValue::Tag::MemoryFormat:
      return python_name(v.to_memory_format());
    case IValue::Tag::Device:
      return v.to_device().str();
    case IValue::Tag::IntList:
      return v.to_int_list();
    case IValue::Tag::BoolList:
      return std::vector<bool>(v.to_bool_list());
    case IValue::Tag::DoubleList: {
      nlohmann::ordered_json out = nlohmann::ordered_json::array();
      for (double d : v.to_double_list()) out.push_back(float_json(d));
      return out;
    }
    case IValue::Tag::Tuple: {
      nlohmann::ordered_json out = nlohmann::ordered_json::array();
      for (const IValue& x : v.to_tuple()) out.push_back(to_json(x));
      return out;
    }
    default:
      break;
  }
  if (auto items = items_of(v)) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const IValue& x : *items) out.push_back(to_json(x));
    return out;
  }
  return v.repr();  // Storage and anything else without a JSON form
}

nlohmann::ordered_json to_json(const Value& v) {
  if (v.struct_name.empty() || !v.value.is_tuple()) return to_json(v.value);
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  const auto& items = v.value.to_tuple();
  for (size_t i = 0; i < items.size(); ++i) out[v.field_names[i]] = to_json(items[i]);
  return out;
}

}  // namespace opd::bind
