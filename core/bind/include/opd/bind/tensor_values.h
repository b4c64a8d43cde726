#pragma once

// Tensors that no operator makes, for `opd eval` and the Python package: tensor literals
// (`tensor([[1, 2], [3, 4]])`), wrapped numbers, and reading a tensor's values back to print them.

#include <cstdint>
#include <optional>
#include <vector>

#include "opd/device.h"
#include "opd/ivalue.h"
#include "opd/scalar.h"
#include "opd/scalar_type.h"
#include "opd/tensor.h"

namespace opd::bind {

// torch.tensor(data, dtype=, device=): `data` is a number, a bool or a nested list of them.
// Without a dtype it is inferred as PyTorch does (bool if all are bools, int64 if all are
// integers or bools, complex64 if any is complex, else float32). The values are laid out on the
// CPU by the binder itself; another device receives them through aten::_to_copy, and a meta
// tensor is made with aten::empty (it holds no values). Throws ValueError for a ragged list
// ("expected sequence of length 2 at dim 1 (got 3)") or a value that is not a number.
Tensor make_tensor_literal(const IValue& data, std::optional<ScalarType> dtype,
                           std::optional<Device> device);

// A tensor's values in row-major order, read on the CPU (other devices are copied there with
// aten::_to_copy first). Integers and bools in `ints`, real parts in `reals`, imaginary parts
// in `imags`: which ones are filled depends on kind.
struct HostValues {
  enum class Kind { Bool, Int, Float, Complex };
  Kind kind;
  std::vector<int64_t> sizes;
  std::vector<int64_t> ints;
  std::vector<double> reals;
  std::vector<double> imags;

  int64_t numel() const;
};

// REQUIRES: t is defined and not on the meta device.
HostValues read_values(const Tensor& t);

// A number as a 0-dim CPU tensor that is weaker than any tensor in type promotion (PyTorch's
// wrapped number): what a Python number becomes as the left operand of 2 - x, 2 / x, 2 ** x.
// Shared by opd eval's operators and the Python package's reflected dunders.
Tensor wrapped_number(const Scalar& s);

}  // namespace opd::bind
