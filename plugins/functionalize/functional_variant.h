#pragma once
// The functional overload of a mutating operator (Note [Functional variants]).

#include <string>
#include <vector>

#include "opd/operator_handle.h"

namespace opd::functionalize {

// How a mutating operator maps onto its functional overload.
struct FunctionalVariant {
  std::string name;      // "aten::add"
  std::string overload;  // "Tensor"
  // Per argument of the mutating operator: whether it is passed on (an out= operator's outputs
  // are not).
  std::vector<bool> keep_argument;
  // The written arguments, in order: the functional overload's first results are their values.
  std::vector<size_t> written_arguments;
  // Arguments the functional overload takes after those passed on (zero_ as fill.Scalar's 0).
  std::vector<IValue> extra_arguments;
};

// The functional overload of `op`, an operator that writes an argument: for an in-place
// `ns::name_.overload`, `ns::name.overload`; for an out= operator, the overload of `ns::name`
// whose arguments are the out= operator's others (torchgen's FunctionSchema.signature());
// aten::zero_, without aten::zero, as aten::fill.Scalar(self, 0).
// Throws Error naming `op` when there is none, with PyTorch's text. Thread-safe.
const FunctionalVariant& functional_variant_of(const OperatorHandle& op);

}  // namespace opd::functionalize
