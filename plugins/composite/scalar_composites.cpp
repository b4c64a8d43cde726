// The `.Scalar` overloads of the binary and comparison operators: the number becomes a tensor
// and the `.Tensor` overload runs, as in PyTorch. Also true_divide, div's alias.

#include "common/type_promotion.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"
#include "wrapped_number.h"

namespace opd::native {

Tensor add_Scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return opd::add(self, wrapped_scalar_tensor(other), alpha);
}

Tensor& add__Scalar(Tensor& self, const Scalar& other, const Scalar& alpha) {
  self.add_(wrapped_scalar_tensor(other), alpha);
  return self;
}

Tensor sub_Scalar(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return opd::sub(self, wrapped_scalar_tensor(other), alpha);
}

Tensor& sub__Scalar(Tensor& self, const Scalar& other, const Scalar& alpha) {
  self.sub_(wrapped_scalar_tensor(other), alpha);
  return self;
}

Tensor mul_Scalar(const Tensor& self, const Scalar& other) {
  return opd::mul(self, wrapped_scalar_tensor(other));
}

Tensor& mul__Scalar(Tensor& self, const Scalar& other) {
  self.mul_(wrapped_scalar_tensor(other));
  return self;
}

Tensor pow_Scalar(const Scalar& self, const Tensor& exponent) {
  return opd::pow(wrapped_scalar_tensor(self), exponent);
}

Tensor div_Scalar(const Tensor& self, const Scalar& other) {
  return opd::div(self, wrapped_scalar_tensor(other));
}

Tensor& div__Scalar(Tensor& self, const Scalar& other) {
  self.div_(wrapped_scalar_tensor(other));
  return self;
}

Tensor eq_Scalar(const Tensor& self, const Scalar& other) {
  return opd::eq(self, wrapped_scalar_tensor(other));
}

Tensor ne_Scalar(const Tensor& self, const Scalar& other) {
  return opd::ne(self, wrapped_scalar_tensor(other));
}

Tensor lt_Scalar(const Tensor& self, const Scalar& other) {
  return opd::lt(self, wrapped_scalar_tensor(other));
}

Tensor le_Scalar(const Tensor& self, const Scalar& other) {
  return opd::le(self, wrapped_scalar_tensor(other));
}

Tensor gt_Scalar(const Tensor& self, const Scalar& other) {
  return opd::gt(self, wrapped_scalar_tensor(other));
}

Tensor ge_Scalar(const Tensor& self, const Scalar& other) {
  return opd::ge(self, wrapped_scalar_tensor(other));
}

// The Scalar overloads of the binary operators of Operators I: the .Tensor overload with the
// number wrapped (Note [Wrapped numbers]); `Scalar self` forms wrap self.
#define OPD_SCALAR_OVERLOADS(op)                                                  \
  Tensor op##_Scalar(const Tensor& self, const Scalar& other) {                   \
    return opd::op(self, wrapped_scalar_tensor(other));                           \
  }                                                                               \
  Tensor& op##__Scalar(Tensor& self, const Scalar& other) {                       \
    self.op##_(wrapped_scalar_tensor(other));                                     \
    return self;                                                                  \
  }                                                                               \
  Tensor& op##_Scalar_out(const Tensor& self, const Scalar& other, Tensor& out) { \
    opd::op##_out(out, self, wrapped_scalar_tensor(other));                       \
    return out;                                                                   \
  }
OPD_SCALAR_OVERLOADS(remainder)
OPD_SCALAR_OVERLOADS(fmod)
OPD_SCALAR_OVERLOADS(bitwise_and)
OPD_SCALAR_OVERLOADS(bitwise_or)
OPD_SCALAR_OVERLOADS(bitwise_xor)
OPD_SCALAR_OVERLOADS(copysign)
#undef OPD_SCALAR_OVERLOADS

Tensor remainder_Scalar_Tensor(const Scalar& self, const Tensor& other) {
  return opd::remainder(wrapped_scalar_tensor(self), other);
}
Tensor bitwise_and_Scalar_Tensor(const Scalar& self, const Tensor& other) {
  return opd::bitwise_and(wrapped_scalar_tensor(self), other);
}
Tensor bitwise_or_Scalar_Tensor(const Scalar& self, const Tensor& other) {
  return opd::bitwise_or(wrapped_scalar_tensor(self), other);
}
Tensor bitwise_xor_Scalar_Tensor(const Scalar& self, const Tensor& other) {
  return opd::bitwise_xor(wrapped_scalar_tensor(self), other);
}

// The shifts' number overloads (PyTorch names them Tensor_Scalar and Scalar_Tensor).
#define OPD_SHIFT_OVERLOADS(op)                                                          \
  Tensor op##_Tensor_Scalar(const Tensor& self, const Scalar& other) {                   \
    return opd::op(self, wrapped_scalar_tensor(other));                                  \
  }                                                                                      \
  Tensor& op##__Tensor_Scalar(Tensor& self, const Scalar& other) {                       \
    self.op##_(wrapped_scalar_tensor(other));                                            \
    return self;                                                                         \
  }                                                                                      \
  Tensor& op##_Tensor_Scalar_out(const Tensor& self, const Scalar& other, Tensor& out) { \
    opd::op##_out(out, self, wrapped_scalar_tensor(other));                              \
    return out;                                                                          \
  }                                                                                      \
  Tensor op##_Scalar_Tensor(const Scalar& self, const Tensor& other) {                   \
    return opd::op(wrapped_scalar_tensor(self), other);                                  \
  }
OPD_SHIFT_OVERLOADS(bitwise_left_shift)
OPD_SHIFT_OVERLOADS(bitwise_right_shift)
#undef OPD_SHIFT_OVERLOADS

Tensor div_Scalar_mode(const Tensor& self, const Scalar& other,
                       std::optional<std::string_view> rounding_mode) {
  return opd::div(self, wrapped_scalar_tensor(other), rounding_mode);
}
Tensor& div__Scalar_mode(Tensor& self, const Scalar& other,
                         std::optional<std::string_view> rounding_mode) {
  self.div_(wrapped_scalar_tensor(other), rounding_mode);
  return self;
}

Tensor floor_divide_Scalar(const Tensor& self, const Scalar& other) {
  return opd::floor_divide(self, wrapped_scalar_tensor(other));
}
Tensor& floor_divide__Scalar(Tensor& self, const Scalar& other) {
  self.floor_divide_(wrapped_scalar_tensor(other));
  return self;
}

// true_divide is div (PyTorch's alias).
Tensor true_divide_Tensor(const Tensor& self, const Tensor& other) { return opd::div(self, other); }
Tensor& true_divide__Tensor(Tensor& self, const Tensor& other) {
  self.div_(other);
  return self;
}
Tensor& true_divide_out(const Tensor& self, const Tensor& other, Tensor& out) {
  opd::div_out(out, self, other);
  return out;
}
Tensor true_divide_Scalar(const Tensor& self, const Scalar& other) { return opd::div(self, other); }
Tensor& true_divide__Scalar(Tensor& self, const Scalar& other) {
  self.div_(other);
  return self;
}

// The comparisons' Scalar out= and in-place forms.
#define OPD_COMPARISON_SCALAR_OVERLOADS(op)                                       \
  Tensor& op##_Scalar_out(const Tensor& self, const Scalar& other, Tensor& out) { \
    opd::op##_out(out, self, wrapped_scalar_tensor(other));                       \
    return out;                                                                   \
  }                                                                               \
  Tensor& op##__Scalar(Tensor& self, const Scalar& other) {                       \
    self.op##_(wrapped_scalar_tensor(other));                                     \
    return self;                                                                  \
  }
OPD_COMPARISON_SCALAR_OVERLOADS(eq)
OPD_COMPARISON_SCALAR_OVERLOADS(ne)
OPD_COMPARISON_SCALAR_OVERLOADS(lt)
OPD_COMPARISON_SCALAR_OVERLOADS(le)
OPD_COMPARISON_SCALAR_OVERLOADS(gt)
OPD_COMPARISON_SCALAR_OVERLOADS(ge)
#undef OPD_COMPARISON_SCALAR_OVERLOADS

// where with a number: PyTorch makes it a tensor of result_type(tensor, number) on the tensor's
// device, with scalar_tensor, not a wrapped number: where.self's arguments are then tensors for
// every layer that sees the call (a TorchDispatchMode is handed wrapped numbers as Python
// numbers, which where.self does not take). where(c, 1.0, 0) is Float, where(c, x_int, 0.5)
// Float, as with the promotion of a wrapped number.
namespace {
Tensor where_number_tensor(const Tensor& tensor, const Scalar& number) {
  const ScalarType dtype = common::result_type(
      common::update_result_type_state(number, common::update_result_type_state(tensor, {})));
  return opd::scalar_tensor(number, dtype, std::nullopt, tensor.device(), std::nullopt);
}
}  // namespace
Tensor where_ScalarSelf(const Tensor& condition, const Scalar& self, const Tensor& other) {
  return opd::where(condition, where_number_tensor(other, self), other);
}
Tensor where_ScalarOther(const Tensor& condition, const Tensor& self, const Scalar& other) {
  return opd::where(condition, self, where_number_tensor(self, other));
}
// Two numbers: PyTorch makes both tensors of their promoted type on the condition's device.
Tensor where_Scalar(const Tensor& condition, const Scalar& self, const Scalar& other) {
  const ScalarType dtype = common::result_type(
      common::update_result_type_state(other, common::update_result_type_state(self, {})));
  const auto tensor = [&](const Scalar& s) {
    return opd::scalar_tensor(s, dtype, std::nullopt, condition.device(), std::nullopt);
  };
  return opd::where(condition, tensor(self), tensor(other));
}

}  // namespace opd::native
