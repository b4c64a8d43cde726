#pragma once

// kthvalue.values: PyTorch 1.13's checks and its handling of the `values` and `indices`
// outputs (kthvalue_out_impl_cpu and _reduction_with_indices_allocate_or_resize_output), shared
// by CPU and Meta so that both raise and resize alike.
//
// Note [kthvalue's outputs]
// PyTorch resizes the outputs to the kept-dimension shape (dim of size 1) and squeezes dim away
// afterwards when !keepdim. An output given with one dimension fewer than self (the squeezed
// shape) first gets a size-1 dimension inserted at dim, so its resize warning names that shape:
// out=(zeros(1), ...) for a [2, 4] self over dim 1 warns "had shape [1, 1], which does not match
// the required output shape [2, 1]".

#include <cstdint>

#include "opd/tensor.h"

namespace opd::common {

// Checks (IndexError "kthvalue(): Expected reduction dim 1 to have non-zero size." for an empty
// self; Error "kthvalue(): selected number k out of range for dimension 1"; "output values must
// be of same type as input"; "output indices must be of scalar type Long"; TypeError
// "\"kthvalue_cpu\" not implemented for 'Half'" for Half, Bool and complex) and resizes values
// and indices to the kept-dimension shape. Returns dim, wrapped.
int64_t kthvalue_prepare(const Tensor& self, int64_t k, int64_t dim, const Tensor& values,
                         const Tensor& indices, bool keepdim);

// Removes dim from values and indices when !keepdim (and self is not 0-dim).
void kthvalue_finish(const Tensor& self, int64_t dim, const Tensor& values, const Tensor& indices,
                     bool keepdim);

}  // namespace opd::common
