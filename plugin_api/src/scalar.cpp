#include "opd/scalar.h"

#include <cmath>

namespace opd {

namespace detail {
// opd::Error, Python's RuntimeError, as c10::checked_convert's TORCH_CHECK (torch 1.13's
// `zeros(2, dtype=uint8).fill_(300)`).
void throw_scalar_overflow(const char* type_name) {
  throw Error(fmt::format("value cannot be converted to type {} without overflow", type_name));
}
}  // namespace detail

namespace {

// fmt's shortest round-trip form matches Python's repr (exponent from 1e16 and below 1e-4),
// except that Python keeps ".0" on integral values.
std::string repr_double(double d) {
  std::string s = fmt::format("{}", d);
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";  // 'n', 'i': nan, inf
  return s;
}

// Python's repr of a complex: "2j", "(1+2j)", "(1-0j)", "(-0+2j)". Parts print without ".0".
std::string repr_complex(double re, double im) {
  std::string imag = fmt::format("{}{}j", std::signbit(im) ? "-" : "+", std::fabs(im));
  if (re == 0 && !std::signbit(re)) return imag.substr(imag[0] == '+' ? 1 : 0);
  return fmt::format("({}{})", re, imag);
}

}  // namespace

std::string Scalar::str() const {
  switch (tag_) {
    case Tag::Bool:
      return v_.b ? "True" : "False";
    case Tag::Int:
      return fmt::format("{}", v_.i);
    case Tag::Double:
      return repr_double(v_.d);
    case Tag::ComplexDouble:
      return repr_complex(v_.z.re, v_.z.im);
  }
  return "?";
}

bool Scalar::operator==(const Scalar& o) const {
  if (tag_ != o.tag_) return false;
  switch (tag_) {
    case Tag::Bool:
      return v_.b == o.v_.b;
    case Tag::Int:
      return v_.i == o.v_.i;
    case Tag::Double:
      return v_.d == o.v_.d;
    case Tag::ComplexDouble:
      return v_.z.re == o.v_.z.re && v_.z.im == o.v_.z.im;
  }
  return false;
}

}  // namespace opd
