#pragma once

#include <optional>
#include <string>
#include <vector>

#include "native_function.h"

namespace opd::gen {

// One `input: formula` line of a derivatives.yaml entry.
struct DerivativeFormula {
  std::string input;    // a differentiable argument of the schema ("self", "tensors")
  std::string formula;  // a C++ expression (see manifests/derivatives.yaml)
  int line = 0;
};

// One entry of a derivatives.yaml (PyTorch's format).
struct DerivativeInfo {
  const NativeFunction* function = nullptr;  // the operator of native_functions.yaml it names
  int line = 0;                              // 1-based line of `name:`
  std::vector<DerivativeFormula> formulas;   // in file order
  // `output_differentiability`, one flag per return; empty means every Tensor return.
  std::vector<bool> output_differentiability;
  // The backward node's class name, PyTorch's style: "AddBackward0", "NllLossBackward0".
  std::string node_name;
};

// Reads `path`, matching each `name:` to an operator of `fs` by name and overload; its schema
// must print as that operator's does. Errors are opd::Error "<path>:<line>: <what>" (unknown
// operator, schema mismatch, a key that is not a tensor argument, a duplicate entry).
std::vector<DerivativeInfo> load_derivatives(const std::string& path,
                                             const std::vector<NativeFunction>& fs);

}  // namespace opd::gen

namespace opd::gen {

struct EmitOptions;
// src/autograd_nodes.{h,cpp} and src/autograd_kernels.cpp under o.out_dir: a backward node per
// entry of `ds` with formulas and an Autograd kernel per operator of `fs` (except composite
// implicit ones and factories), registered by register_autograd_kernels(Library&).
// `derivatives_path` names the file in errors.
void emit_autograd(const std::vector<NativeFunction>& fs, const std::vector<DerivativeInfo>& ds,
                   const EmitOptions& o, const std::string& derivatives_path);
// src/autograd.cpp for a vendor's namespace: one opd::autograd::Function per entry of `ds`
// (forward calls the operator, backward runs the formulas) and OPD_LIBRARY_IMPL(<ns>, Autograd,
// m) registering each as its operator's Autograd kernel. Without derivatives, a file with no
// kernels. Errors name `derivatives_path` and the entry's line.
void emit_vendor_autograd(const std::vector<NativeFunction>& fs,
                          const std::vector<DerivativeInfo>& ds, const EmitOptions& o,
                          const std::string& derivatives_path);

}  // namespace opd::gen
