#pragma once

// What the generated Autograd kernels (src/autograd_kernels.cpp) call around the redispatch.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "autograd/autograd_meta.h"
#include "opd/ops.h"

namespace opd::autograd {

inline bool any_requires_grad(const Tensor& t) { return requires_grad(t); }
inline bool any_requires_grad(const std::optional<Tensor>& t) { return t && requires_grad(*t); }
inline bool any_requires_grad(TensorList ts) {
  for (const Tensor& t : ts) {
    if (requires_grad(t)) return true;
  }
  return false;
}
// Whether any of the differentiable inputs requires grad.
template <class... Args>
bool compute_requires_grad(const Args&... args) {
  return (false || ... || any_requires_grad(args));
}

inline void append_edges(edge_list& out, const Tensor& t) { out.push_back(gradient_edge(t)); }
inline void append_edges(edge_list& out, const std::optional<Tensor>& t) {
  out.push_back(t ? gradient_edge(*t) : Edge{});
}
inline void append_edges(edge_list& out, TensorList ts) {
  for (const Tensor& t : ts) out.push_back(gradient_edge(t));
}
// One edge per differentiable input (per element of a Tensor[]), in order.
template <class... Args>
edge_list collect_next_edges(const Args&... args) {
  edge_list out;
  (append_edges(out, args), ...);
  return out;
}

// What a node keeps of a non-tensor argument: an owning copy.
inline std::vector<int64_t> owned(IntArrayRef v) { return v.vec(); }
inline std::optional<std::vector<int64_t>> owned(OptionalIntArrayRef v) {
  return v ? std::optional<std::vector<int64_t>>(v->vec()) : std::nullopt;
}
inline std::string owned(std::string_view v) { return std::string(v); }
template <class T>
T owned(const T& v) {
  return v;
}
std::vector<std::vector<int64_t>> args_sizes(TensorList ts);
// self's value before an in-place operator changes it, for a formula that reads it.
Tensor clone_for_saving(const Tensor& self);

// PyTorch's refusals of in-place operations on leaves that require grad (and their views).
void check_inplace(const Tensor& self, bool requires_grad);
// After an in-place operator recorded as `fn`: self becomes fn's output; a view's base gets a
// CopySlices node and the view an AsStridedBackward0 onto it.
void rebase_history(const Tensor& self, const std::shared_ptr<Node>& fn);
// After an in-place view operator (tag inplace_view: squeeze_, t_, as_strided_...) recorded as
// `fn`, which changed self's geometry and no data: self becomes fn's output, unless it is a
// view; a view stays one of its base, with its new geometry (an AsStridedBackward0 onto the
// base's history, which is unchanged), as PyTorch's.
void rebase_view_history(const Tensor& self, const std::shared_ptr<Node>& fn);
// Records that `view` (output of a view operator) shares `base`'s memory.
void mark_view(const Tensor& view, const Tensor& base);

// "derivative for aten::foo is not implemented"
[[noreturn]] void throw_not_implemented(const char* op);
// An out= overload called with an input that requires grad (PyTorch's message).
[[noreturn]] void throw_out_not_differentiable(const char* name);

}  // namespace opd::autograd
