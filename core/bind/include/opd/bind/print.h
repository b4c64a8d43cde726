#pragma once

// How `opd eval` and the Python package show values: as PyTorch's repr (torch/_tensor_str.py with
// the default print options: precision 4, threshold 1000, edgeitems 3, linewidth 80), or as JSON.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "opd/ivalue.h"
#include "opd/tensor.h"

namespace opd::bind {

// A value with, for the results of operators with several named returns, the names PyTorch's
// torch.return_types struct sequence would print ("max", {"values", "indices"}).
struct Value {
  IValue value;
  std::string struct_name;
  std::vector<std::string> field_names;
  // How many lists and tuples nest in `value` ([[1]]: 2), as opd eval's evaluator counts them to
  // keep values built through variables (x = [x]; x = [x]; ...) within its kMaxNesting too.
  int nesting = 0;
};

// repr(tensor): "tensor([[2., 3., 4.],\n        [2., 3., 4.]])", "tensor([1, 2])",
// "tensor([ True, False])", "tensor([1., 2.], dtype=torch.float64)",
// "tensor(..., device='meta', size=(2, 3))". Float32 is the default dtype. `module` names the
// dtype ("opdispatch" for the Python package: dtype=opdispatch.float64).
std::string tensor_repr(const Tensor& t, std::string_view module = "torch");

// Python's repr of any value: tensors as above, numbers as Python prints them (2.0, True),
// None, strings quoted, lists and tuples of values, torch.float64, device(type='cpu'),
// and struct sequences as torch.return_types.max(\nvalues=...,\nindices=...).
std::string repr(const Value& v);
std::string repr(const IValue& v);

// Tensors as {"dtype": "float32", "shape": [...], "strides": [...], "device": "cpu",
// "data": [...]} with data flattened in row-major order (null for meta tensors; complex values
// as [re, im]; non-finite floats as the strings "nan", "inf", "-inf"); numbers, bools, None and
// strings as JSON values; lists and tuples as arrays; struct sequences as objects.
nlohmann::ordered_json to_json(const Value& v);
nlohmann::ordered_json to_json(const IValue& v);

}  // namespace opd::bind
