// Structured kernels: one meta function and one impl per backend give an operator's out=,
// functional and in-place variants.

#pragma once

#include <string>
#include <vector>

#include "native_function.h"

namespace opd::gen {

// Note [Structured kernels]
// As PyTorch's `structured: True` / `structured_delegate:`. The out= operator is marked
// `structured: True`; its functional and in-place variants say `structured_delegate: add.out`.
// A meta function, shared by every backend and written once in plugins/common, checks the
// arguments and makes the output, allocating it when `out` is undefined (the functional
// variant), checking it otherwise (in-place: `out` is self; out=: the out argument); each of the
// out= operator's `dispatch:` entries names an impl, which computes. Two kinds, by PyTorch's
// `structured_inherits:` (what the meta function is):
//  - TensorIteratorBase, the default here (add, sub, mul, div): the meta function builds an
//    iterator, the impl computes into its output (every argument but `out` is passed):
//      common::TensorIterator opd::meta::add(const Tensor& out, const Tensor& self, ...);
//      void add_out(const common::TensorIterator& iter, const Tensor& self, ...);
//  - MetaBase (reductions, softmax): the meta function returns the tensor the impl writes, which
//    is contiguous: the output itself, or a new tensor (PyTorch's proxy output, for an `out` of
//    other strides) that the generated kernel copies into it afterwards; the impl takes every
//    argument, the output last, as PyTorch's TORCH_IMPL_FUNC:
//      Tensor opd::meta::sum_IntList(const Tensor& out, const Tensor& self, ...);
//      void sum_out(const Tensor& self, ..., const Tensor& out);
// opd-gen writes, for every backend of the out= operator and for Meta, the kernels of the group:
// meta, then impl (not on Meta, which has none), then the result (a new tensor, or the written
// one with its version bumped). A variant with a `dispatch:` entry of its own for a key keeps it
// there (the CPU's same-shape fast path for add). The meta functions are plugins/common's, so
// structured kernels are aten's only (a vendor's plugin sees plugin_api).
struct StructuredGroup {
  const NativeFunction* out;                     // `structured: True`
  std::vector<const NativeFunction*> delegates;  // `structured_delegate:` naming it
  std::string meta_name;  // opd::meta::<meta_name>: "add", "pow_Tensor_Scalar"
  bool iterator = true;   // TensorIteratorBase (else MetaBase)
};

// The groups of `fs`, checked: the structured operator has one out argument and returns it,
// names backends only (Meta is generated), and is aten's; only it says `structured_inherits:`;
// each delegate names a structured
// operator of the file and takes its arguments but `out`, and is functional (one new Tensor)
// or in-place (writes and returns its first argument). Errors are opd::Error
// "<path>:<line>: <what>".
std::vector<StructuredGroup> structured_groups(const std::vector<NativeFunction>& fs,
                                               const std::string& path);

// Whether `f` is the in-place variant of its group (else functional or out=).
bool is_in_place(const NativeFunction& f);

}  // namespace opd::gen
