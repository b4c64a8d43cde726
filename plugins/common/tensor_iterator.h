#pragma once

// TensorIterator: the metadata work every elementwise kernel shares, and the strided walk its
// loop runs in. A small cousin of PyTorch's at::TensorIterator: one output, any number of inputs.
//
// Note [TensorIterator]
// build() does, in PyTorch's order: the memory-overlap checks of the output; the broadcast shape
// of the inputs; the check that a given output has that shape (or may be resized to it); the
// device check; the dtype the inputs are computed in (promoted, or given) and the dtype the loop
// writes; the output itself: a new tensor laid out as the inputs are (Note [Output layout]), the
// caller's out= tensor (resized when empty, then laid out as a new one), or `self` for an in-place
// operator. Inputs of another dtype are converted to the
// compute dtype, and when the output's dtype differs from what the loop writes, the loop writes
// a temporary that cast_outputs() copies into the output. A Meta kernel stops after build(): on
// the Meta device nothing is converted or allocated beyond the output. Kernels that compute then
// run a loop over the result (see common/loops.h).
//
// The loop geometry: dimensions are ordered fastest first (by the output's strides, then the
// inputs'), and neighbours that every operand can walk as one are merged, so that contiguous
// operands become one dimension of numel() elements. A loop body sees one run of the innermost
// dimension at a time: loop(char** data, const int64_t* strides, int64_t n), where data[k] is
// the address of operand k's first element of the run (k = 0: the output) and strides[k] its
// stride in bytes (0 for a broadcast operand).

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/small_vector.h"
#include "opd/device.h"
#include "opd/scalar_type.h"
#include "opd/tensor.h"

namespace opd::common {

class TensorIterator;

// Note [Output layout]
// A new output takes the memory layout of the inputs, as PyTorch's TensorIterator gives it
// (`neg(x.t())` has strides (1, 3) for a 3 x 4 `x`; channels-last inputs give a channels-last
// result). PyTorch's rule, in its order:
//  1. Inputs of one shape (a 0-dim input and a sized one are not): all contiguous, a contiguous
//     output; all channels-last (4 dims), a channels-last one; all dense and non-overlapping with
//     the same strides, those strides (PyTorch's fast_set_up).
//  2. Otherwise the dimensions are sorted fastest first, starting from the reversed order, by an
//     insertion sort whose comparison asks the inputs in turn: an input broadcast along either
//     dimension (stride 0, or size 1 where the result is larger) has no say; a smaller stride goes
//     first; equal strides put the dimension of smaller size first, or else ask the next input.
//     When nobody decides, the comparison is ambiguous and the sort looks further left (PyTorch's
//     reorder_dimensions). A size-1 dimension of the result keeps its input stride and takes part.
//     The output is dense in that order (size-0 and size-1 dimensions multiply as they are,
//     PyTorch's compatible_stride), and simply contiguous when the order is the reversed one.
// An input converted to the compute dtype counts with the strides PyTorch's to() gives its copy:
// its own when it is dense and non-overlapping, else infer_dense_strides (an expanded input so
// becomes a full, contiguous one). The layout is decided the same way on every device, Meta
// included. A given out= tensor keeps its strides unless it is resized.

// The strides, in elements, of a dense tensor of `sizes` that keeps the order of the dimensions
// `strides` have, PyTorch's infer_dense_strides: what empty_like and to() with preserve_format
// give a tensor that is not dense and non-overlapping. Dimensions of stride 0 keep their place.
DimVector infer_dense_strides(IntArrayRef sizes, IntArrayRef strides);

// Elements per chunk when a loop is split across threads; loops this small or smaller run on
// the calling thread.
inline constexpr int64_t kGrainSize = 32768;

// Splits [begin, end) into chunks of at least `grain_size` elements and runs fn on each, possibly
// concurrently (opd::cpu::parallel_for has this type). Null: run serially.
using RangeSplitter = void (*)(int64_t begin, int64_t end, int64_t grain_size,
                               const std::function<void(int64_t, int64_t)>& fn);

// How to build a TensorIterator; PyTorch's TensorIteratorConfig. `name` starts error messages
// that PyTorch words with the operator's name (the out= resize rule).
//
// The operands are borrowed, as PyTorch's TensorIterator borrows them: every tensor given to
// add_output and add_input, and the name, must outlive build(), and the tensors also the
// iterator it returns (a kernel's arguments do). Only what the iterator makes (a new output, a
// converted input, a temporary) does it own, so that building one costs no reference counting.
class TensorIteratorConfig {
 public:
  explicit TensorIteratorConfig(std::string_view name) : name_(name) {}

  // The output: undefined for a new tensor; the same tensor as an input (is_same) for an
  // in-place operator, whose shape must then be the broadcast shape; otherwise an out= tensor.
  TensorIteratorConfig& add_output(const Tensor& out);
  // Inputs, in the order the loop body takes them.
  TensorIteratorConfig& add_input(const Tensor& in);
  // An input the iterator keeps alive: one the caller made for it (where's converted values).
  TensorIteratorConfig& add_owned_input(Tensor in);

  // Compute in torch.result_type of the inputs, converting the others. Turns off
  // check_all_same_dtype.
  TensorIteratorConfig& promote_inputs_to_common_dtype(bool v);
  // After promotion, compute integral and bool inputs in the default dtype (Float): true division
  // and the floating unary functions.
  TensorIteratorConfig& promote_integer_inputs_to_float(bool v);
  // Compute in `dtype`, converting every input to it: the caller did the promotion (where, clamp,
  // pow with a Scalar exponent).
  TensorIteratorConfig& compute_dtype(ScalarType dtype);
  // The dtype the loop writes and a new output gets (Bool for comparisons); the compute dtype
  // when not declared.
  TensorIteratorConfig& output_dtype(ScalarType dtype);
  // An output of another dtype than the loop writes gets a temporary, cast into it afterwards.
  // Turns off check_all_same_dtype.
  TensorIteratorConfig& cast_common_dtype_to_outputs(bool v);
  // Refuse an output the compute dtype cannot be cast to (see can_cast): "result type Float
  // can't be cast to the desired output type Long".
  TensorIteratorConfig& enforce_safe_casting_to_output(bool v);
  // Every input and a given output must have one dtype: "Found dtype Long but expected Float".
  // On by default.
  TensorIteratorConfig& check_all_same_dtype(bool v);
  // All operands on one device (check_same_device). On by default.
  TensorIteratorConfig& check_all_same_device(bool v);
  // check_no_internal_overlap on the output, check_no_partial_overlap against each input. On by
  // default; off for idempotent writes (fill_).
  TensorIteratorConfig& check_mem_overlap(bool v);
  // An out= tensor of another shape may be resized (when empty). On by default; when off, the
  // output's shape takes part in broadcasting and must be the result's (copy_, fill_).
  TensorIteratorConfig& resize_outputs(bool v);

  // Does the metadata work; see Note [TensorIterator]. Throws the errors named above, and those
  // of infer_size, check_same_device, resize_output and the overlap checks.
  TensorIterator build() const;

 private:
  friend class TensorIterator;
  std::string_view name_;
  const Tensor* output_ = nullptr;        // null: a new output
  SmallVector<const Tensor*, 4> inputs_;  // null: input i is owned_inputs_[i]
  SmallVector<Tensor, 4> owned_inputs_;   // undefined where inputs_ is not null
  std::optional<ScalarType> compute_dtype_;
  std::optional<ScalarType> output_dtype_;
  bool promote_inputs_ = false;
  bool promote_integer_inputs_to_float_ = false;
  bool cast_common_dtype_to_outputs_ = false;
  bool enforce_safe_casting_ = false;
  bool check_all_same_dtype_ = true;
  bool check_all_same_device_ = true;
  bool check_mem_overlap_ = true;
  bool resize_outputs_ = true;
};

class TensorIterator {
 public:
  // Most operands a loop may take (output included), and most dimensions after merging.
  static constexpr int kMaxOperands = 8;
  static constexpr int kMaxDims = 64;

  // PyTorch's standard configurations. `out` as in TensorIteratorConfig::add_output.
  // Binary arithmetic: promote, cast to the output, refuse unsafe casts (add, mul, maximum).
  static TensorIterator binary_op(std::string_view name, const Tensor& out, const Tensor& a,
                                  const Tensor& b);
  // binary_op computing integral inputs in Float (true division).
  static TensorIterator binary_float_op(std::string_view name, const Tensor& out, const Tensor& a,
                                        const Tensor& b);
  // Comparisons: promote the inputs, write Bool (cast into an out= tensor of another dtype).
  static TensorIterator comparison_op(std::string_view name, const Tensor& out, const Tensor& a,
                                      const Tensor& b);
  // Unary, same dtype in and out (neg, abs, relu).
  static TensorIterator unary_op(std::string_view name, const Tensor& out, const Tensor& a);
  // Unary computing integral inputs in Float (exp, sin, sigmoid).
  static TensorIterator unary_float_op(std::string_view name, const Tensor& out, const Tensor& a);
  // No inputs: writes every element of `out` (fill_), which keeps its shape and dtype.
  static TensorIterator nullary_op(std::string_view name, const Tensor& out);

  const std::string& name() const { return name_; }
  // The broadcast shape, in the tensors' dimension order.
  IntArrayRef shape() const { return IntArrayRef(shape_.data(), shape_.size()); }
  int64_t numel() const { return numel_; }
  int ntensors() const { return ntensors_; }
  int ninputs() const { return ntensors() - 1; }
  // What the operator returns: the new tensor, the out= tensor or self.
  const Tensor& output() const& { return given_output_ != nullptr ? *given_output_ : owned_[0]; }
  // The same, taken from an iterator that is done: `return std::move(iter).output();`.
  Tensor output() && { return given_output_ != nullptr ? *given_output_ : std::move(owned_[0]); }
  // Operand k as the loop sees it: 0 is what the loop writes (the output or its temporary),
  // 1.. are the inputs, converted to the compute dtype (not on Meta).
  const Tensor& tensor(int k) const { return borrowed_[k] != nullptr ? *borrowed_[k] : owned_[k]; }
  const Tensor& input(int i) const { return tensor(i + 1); }
  ScalarType dtype(int k = 0) const { return tensor(k).scalar_type(); }
  ScalarType input_dtype(int i = 0) const { return dtype(i + 1); }
  // The dtype the inputs are computed in.
  ScalarType common_dtype() const { return common_dtype_; }
  Device device() const { return device_; }

  // The merged loop dimensions, fastest first, and operand k's byte stride along each.
  IntArrayRef loop_shape() const { return IntArrayRef(loop_shape_.data(), loop_shape_.size()); }
  int64_t loop_stride(int k, int dim) const { return strides_[dim * ntensors() + k]; }
  // Whether every operand walks memory densely in the same order (one merged dimension).
  bool is_contiguous() const;

  // Runs loop over elements [begin, end) of the iteration order, one innermost run at a time;
  // see Note [TensorIterator]. REQUIRES: not on Meta (operands have memory).
  template <class Loop>
  void serial_for_each(Loop&& loop, int64_t begin, int64_t end) const;
  // Runs loop over every element, split by `split` when there are more than `grain_size`.
  template <class Loop>
  void for_each(Loop&& loop, RangeSplitter split = nullptr, int64_t grain_size = kGrainSize) const;
  // Copies the temporary the loop wrote into the output, when there is one (see
  // cast_common_dtype_to_outputs). Kernels call it after the loop; host_kernel does.
  void cast_outputs() const;

 private:
  friend class TensorIteratorConfig;
  TensorIterator() = default;
  void compute_loop_geometry();

  // Operand k is *borrowed_[k] (the caller's: an input, the out= tensor, self) or, when that is
  // null, owned_[k] (made here: the new output, a converted input, the temporary).
  void set_operand(int k, const Tensor& borrowed, Tensor owned);

  std::string name_;
  DimVector shape_;
  int64_t numel_ = 1;
  int ntensors_ = 0;
  const Tensor* borrowed_[kMaxOperands] = {};
  Tensor owned_[kMaxOperands];
  const Tensor* given_output_ = nullptr;  // the out= tensor or self; null: owned_[0] is the output
  ScalarType common_dtype_ = ScalarType::Undefined;
  Device device_{DeviceType::CPU};
  SmallVector<char*, 4> data_;        // operand k's first element; null on Meta
  DimVector loop_shape_;              // merged dims, fastest first
  SmallVector<int64_t, 24> strides_;  // [dim * ntensors() + k], bytes
};

template <class Loop>
void TensorIterator::serial_for_each(Loop&& loop, int64_t begin, int64_t end) const {
  if (begin >= end) return;
  const int nt = ntensors();
  const int nd = static_cast<int>(loop_shape_.size());
  char* ptrs[kMaxOperands];
  for (int k = 0; k < nt; ++k) ptrs[k] = data_[k];
  if (nd == 0) {
    const int64_t zeros[kMaxOperands] = {};
    loop(ptrs, zeros, int64_t{1});
    return;
  }
  // The multi-index of element `begin`, and the operands' addresses there.
  int64_t index[kMaxDims];
  int64_t rest = begin;
  for (int d = 0; d < nd; ++d) {
    if (rest == 0) {  // the common start, without divisions
      index[d] = 0;
      continue;
    }
    index[d] = rest % loop_shape_[d];
    rest /= loop_shape_[d];
    for (int k = 0; k < nt; ++k) ptrs[k] += index[d] * strides_[d * nt + k];
  }
  const int64_t* inner = strides_.data();
  const int64_t row = loop_shape_[0];
  for (int64_t pos = begin;;) {
    const int64_t n = std::min(row - index[0], end - pos);
    char* run[kMaxOperands];  // the loop may advance its copy
    std::copy_n(ptrs, nt, run);
    loop(run, inner, n);
    pos += n;
    if (pos >= end) return;
    // The run ended a row: back to its start, then one step along the outer dimensions.
    for (int k = 0; k < nt; ++k) ptrs[k] -= index[0] * inner[k];
    index[0] = 0;
    for (int d = 1; d < nd; ++d) {
      for (int k = 0; k < nt; ++k) ptrs[k] += strides_[d * nt + k];
      if (++index[d] < loop_shape_[d]) break;
      for (int k = 0; k < nt; ++k) ptrs[k] -= index[d] * strides_[d * nt + k];
      index[d] = 0;
    }
  }
}

template <class Loop>
void TensorIterator::for_each(Loop&& loop, RangeSplitter split, int64_t grain_size) const {
  if (split != nullptr && numel_ > grain_size) {
    split(0, numel_, grain_size, [&](int64_t b, int64_t e) { serial_for_each(loop, b, e); });
  } else {
    serial_for_each(loop, 0, numel_);
  }
}

}  // namespace opd::common
