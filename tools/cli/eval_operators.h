#pragma once

// Python's operators on opd eval's values, as torch.Tensor's dunders: `x + y`, `2 - x`,
// `x @ w`, `-x`, `x <= 0.5`. Each is a call of the aten operator PyTorch's binding calls, made
// through the dispatcher (bind_call): a Tensor operand binds the .Tensor overload, a number the
// .Scalar one. A number on the left of a non-commutative operator becomes a wrapped number
// (Note [Wrapped numbers]), so `2 - x` promotes as PyTorch's (int64 x stays int64).

#include <string_view>

#include "opd/ivalue.h"

namespace opd::cli::eval {

// `lhs op rhs` for op one of + - * / ** @ == != < <= > >=. Two numbers (int, float, bool) are
// computed as Python does (ints stay ints within int64, '/' is a float division). Throws
// TypeError for other operands without a tensor ("unsupported operand type(s) for +: 'int' and
// 'str'") and whatever the operator throws.
IValue apply_binary(std::string_view op, const IValue& lhs, const IValue& rhs);
// -v: aten::neg for a tensor, the number negated for a number.
IValue apply_negation(const IValue& v);

}  // namespace opd::cli::eval
