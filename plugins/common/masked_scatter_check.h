#pragma once

// masked_scatter_: the checks PyTorch 1.13's masked_scatter__cpu makes before it reads any data,
// shared by CPU and Meta so that both raise the same errors.

#include "opd/tensor.h"

namespace opd::common {

// Checks, in PyTorch's order: self is not expanded ("unsupported operation: more than one
// element of the written-to tensor refers to a single memory location..."); source has self's
// dtype ("masked_scatter: expected self and source to have same dtypes but gotFloat and
// Double", PyTorch's text, space missing); the mask is Bool or UInt8 (PyTorch 1.13 reads any
// other dtype's bytes as booleans; newer PyTorch refuses it with "masked_scatter_ only supports
// boolean masks, but got mask with dtype Float", as here) and expands to self's shape (expand's
// error otherwise). A UInt8 mask warns as PyTorch's ("masked_scatter_ received a mask with dtype
// torch.uint8, this behavior is now deprecated,please use a mask with dtype torch.bool
// instead."). Returns the mask expanded to self's sizes.
Tensor masked_scatter_mask(const Tensor& self, const Tensor& mask, const Tensor& source);

}  // namespace opd::common
