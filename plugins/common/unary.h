#pragma once

// The unary operators' metadata: the meta functions of their structured groups
// (opd::meta::exp, floor, clamp_min... declared in the generated opd/native/meta_functions.h and
// defined in unary.cpp) check the arguments, the dtype against the set the CPU kernel dispatches
// on (Note [Dtype checks in the metadata step], naming the kernel as PyTorch 1.13's CPU kernel
// does: "\"floor_vml_cpu\" not implemented for 'Half'"), and build the iterator the impls run.
//
// Three iterator shapes, as PyTorch's:
//  - floating (exp, log1p, erf...): integral and bool inputs compute in Float; an out= tensor of
//    another dtype receives the cast result, one that cannot hold it is refused.
//  - same dtype (floor, sign, neg, bitwise_not, nan_to_num...): out= must have self's dtype.
//  - boolean (isposinf, isneginf, logical_not): the loop reads self's dtype and writes Bool.

#include <optional>

#include "common/tensor_iterator.h"
#include "opd/scalar.h"
#include "opd/tensor.h"

namespace opd::common {

// clamp.Tensor / clamp_min.Tensor / clamp_max.Tensor: inputs (self, min?, max?) promoted to
// their result type (the iterator's common dtype), cast into the output.
TensorIterator clamp_tensor_meta(const Tensor& out, const Tensor& self,
                                 const std::optional<Tensor>& min,
                                 const std::optional<Tensor>& max);

}  // namespace opd::common
