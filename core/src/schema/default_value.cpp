// DefaultValue: the values of schema defaults and their canonical text.

#include <array>
#include <cmath>
#include <cstdio>

#include "opd/function_schema.h"
#include "opd/quoting.h"

namespace opd {

namespace {

bool same_float(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// PyTorch's IValue double printing: integral values below 1e10 as "1.", others with 17
// significant digits ("%.17g").
std::string format_float(double d) {
  int c = std::fpclassify(d);
  if ((c == FP_NORMAL || c == FP_ZERO) && std::abs(d) < 1e10) {
    auto i = static_cast<int64_t>(d);
    if (static_cast<double>(i) == d) {
      return (i == 0 && std::signbit(d)) ? std::string("-0.") : std::to_string(i) + ".";
    }
  }
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.17g", d);
  std::string s = buf.data();
  // See Note [Printing deviations from PyTorch] (function_schema.cpp): keep a float literal.
  if (s.find_first_of(".en") == std::string::npos) s += '.';
  return s;
}

}  // namespace

DefaultValue DefaultValue::from_bool(bool value) {
  DefaultValue v;
  v.kind_ = Kind::Bool;
  v.bool_ = value;
  return v;
}

DefaultValue DefaultValue::from_int(int64_t value) {
  DefaultValue v;
  v.kind_ = Kind::Int;
  v.int_ = value;
  return v;
}

DefaultValue DefaultValue::from_float(double value) {
  DefaultValue v;
  v.kind_ = Kind::Float;
  v.number_ = value;
  return v;
}

DefaultValue DefaultValue::from_complex(std::complex<double> value) {
  DefaultValue v;
  v.kind_ = Kind::Complex;
  v.number_ = value;
  return v;
}

DefaultValue DefaultValue::from_string(std::string value) {
  DefaultValue v;
  v.kind_ = Kind::String;
  v.string_ = std::move(value);
  return v;
}

DefaultValue DefaultValue::identifier(std::string name) {
  OPD_CHECK(!name.empty(), "DefaultValue::identifier: the name must not be empty");
  DefaultValue v;
  v.kind_ = Kind::Identifier;
  v.string_ = std::move(name);
  return v;
}

DefaultValue DefaultValue::list(std::vector<DefaultValue> elements) {
  for (const auto& e : elements) {
    OPD_CHECK(e.kind_ != Kind::None && e.kind_ != Kind::List,
              "DefaultValue::list: elements must be scalars, not {}", e.to_string());
  }
  DefaultValue v;
  v.kind_ = Kind::List;
  v.list_ = std::move(elements);
  return v;
}

bool DefaultValue::as_bool() const {
  OPD_CHECK(kind_ == Kind::Bool, "DefaultValue::as_bool: the value is {}", to_string());
  return bool_;
}

int64_t DefaultValue::as_int() const {
  OPD_CHECK(kind_ == Kind::Int, "DefaultValue::as_int: the value is {}", to_string());
  return int_;
}

double DefaultValue::as_float() const {
  OPD_CHECK(kind_ == Kind::Float, "DefaultValue::as_float: the value is {}", to_string());
  return number_.real();
}

std::complex<double> DefaultValue::as_complex() const {
  OPD_CHECK(kind_ == Kind::Complex, "DefaultValue::as_complex: the value is {}", to_string());
  return number_;
}

const std::string& DefaultValue::as_string() const {
  OPD_CHECK(kind_ == Kind::String || kind_ == Kind::Identifier,
            "DefaultValue::as_string: the value is {}", to_string());
  return string_;
}

const std::vector<DefaultValue>& DefaultValue::as_list() const {
  OPD_CHECK(kind_ == Kind::List, "DefaultValue::as_list: the value is {}", to_string());
  return list_;
}

std::string DefaultValue::to_string() const {
  switch (kind_) {
    case Kind::None:
      return "None";
    case Kind::Bool:
      return bool_ ? "True" : "False";
    case Kind::Int:
      return std::to_string(int_);
    case Kind::Float:
      return format_float(number_.real());
    case Kind::Complex:
      // PyTorch's printComplex: both parts as doubles, the sign of the imaginary part between.
      return format_float(number_.real()) + (number_.imag() >= 0 ? "+" : "-") +
             format_float(std::abs(number_.imag())) + "j";
    case Kind::String:
      return quote(string_, QuoteStyle::kSchema);
    case Kind::Identifier:
      return string_;
    case Kind::List: {
      std::string out = "[";
      for (std::size_t i = 0; i < list_.size(); ++i) {
        if (i > 0) out += ", ";
        out += list_[i].to_string();
      }
      return out + "]";
    }
  }
  return {};
}

bool operator==(const DefaultValue& a, const DefaultValue& b) {
  if (a.kind_ != b.kind_) return false;
  using Kind = DefaultValue::Kind;
  switch (a.kind_) {
    case Kind::None:
      return true;
    case Kind::Bool:
      return a.bool_ == b.bool_;
    case Kind::Int:
      return a.int_ == b.int_;
    case Kind::Float:
    case Kind::Complex:
      return same_float(a.number_.real(), b.number_.real()) &&
             same_float(a.number_.imag(), b.number_.imag());
    case Kind::String:
    case Kind::Identifier:
      return a.string_ == b.string_;
    case Kind::List:
      return a.list_ == b.list_;
  }
  return false;
}

}  // namespace opd
