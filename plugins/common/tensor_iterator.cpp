#include "common/tensor_iterator.h"

#include <algorithm>
#include <array>
#include <span>

#include "common/broadcast.h"
#include "common/device_check.h"
#include "common/output.h"
#include "common/type_promotion.h"
#include "common/view_shape.h"
#include "opd/ops.h"

namespace opd::common {

TensorIteratorConfig& TensorIteratorConfig::add_output(const Tensor& out) {
  output_ = &out;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::add_input(const Tensor& in) {
  OPD_INTERNAL_ASSERT(in.defined(), "{}: undefined input", name_);
  OPD_INTERNAL_ASSERT(inputs_.size() + 1 < TensorIterator::kMaxOperands);
  inputs_.push_back(&in);
  owned_inputs_.emplace_back();
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::add_owned_input(Tensor in) {
  OPD_INTERNAL_ASSERT(in.defined(), "{}: undefined input", name_);
  OPD_INTERNAL_ASSERT(inputs_.size() + 1 < TensorIterator::kMaxOperands);
  inputs_.push_back(nullptr);
  owned_inputs_.push_back(std::move(in));
  return *this;
}

namespace {

const Tensor& undefined_tensor() {
  static const Tensor undefined;
  return undefined;
}

// The broadcast shape of `shapes` into `out`, without the heap; false on a mismatch (then
// infer_size gives the error).
bool broadcast_into(std::span<const IntArrayRef> shapes, DimVector& out) {
  size_t nd = 0;
  for (IntArrayRef s : shapes) nd = std::max(nd, s.size());
  out.assign(nd, 1);
  for (IntArrayRef s : shapes) {
    const size_t lead = nd - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[lead + i];
      if (o == s[i] || s[i] == 1) continue;
      if (o != 1) return false;
      o = s[i];
    }
  }
  return true;
}

// Sorts the dimensions `perm` (the reversed order to start with) fastest first by PyTorch's
// insertion sort with ambiguous comparisons: should_swap(a, b) > 0 moves a after b, < 0 stops the
// element, 0 (ambiguous) looks further left. Note [Output layout].
template <class Perm, class ShouldSwap>
void sort_dimensions(Perm& perm, const ShouldSwap& should_swap) {
  const int nd = static_cast<int>(perm.size());
  for (int i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  for (int i = 1; i < nd; ++i) {
    int moving = i;
    for (int left = i - 1; left >= 0; --left) {
      const int comparison = should_swap(perm[left], perm[moving]);
      if (comparison > 0) {
        std::swap(perm[left], perm[moving]);
        moving = left;
      } else if (comparison < 0) {
        break;
      }
    }
  }
}

// The strides of a new output of `shape` into `strides`, following the inputs (Note [Output
// layout]); false when it is simply contiguous. Inputs not of `convert_to` (Undefined: none is
// converted) count with the strides of their converted copy.
bool output_layout(IntArrayRef shape, std::span<const Tensor* const> inputs, ScalarType convert_to,
                   DimVector& strides) {
  const int nd = static_cast<int>(shape.size());
  const int ni = static_cast<int>(inputs.size());
  if (nd <= 1 || ni == 0) return false;
  IntArrayRef in_strides[TensorIterator::kMaxOperands];
  bool contiguous[TensorIterator::kMaxOperands];
  DimVector copies[TensorIterator::kMaxOperands];
  bool same_shape = true;
  for (int i = 0; i < ni; ++i) {
    const Tensor& in = *inputs[i];
    in_strides[i] = in.strides();
    contiguous[i] = in.is_contiguous();
    same_shape = same_shape && in.sizes().equals(shape);
    if (convert_to != ScalarType::Undefined && in.scalar_type() != convert_to && !contiguous[i] &&
        !opd::is_non_overlapping_and_dense(in.sizes(), in.strides())) {
      copies[i] = infer_dense_strides(in.sizes(), in.strides());
      in_strides[i] = IntArrayRef(copies[i].data(), copies[i].size());
      contiguous[i] = is_contiguous_in(in.sizes(), in_strides[i], MemoryFormat::Contiguous);
    }
  }

  // 1. Inputs of one shape.
  if (same_shape) {
    if (std::all_of(contiguous, contiguous + ni, [](bool c) { return c; })) return false;
    bool channels_last = nd == 4;
    for (int i = 0; i < ni && channels_last; ++i) {
      channels_last = is_contiguous_in(shape, in_strides[i], MemoryFormat::ChannelsLast);
    }
    if (channels_last) {  // N, C, H, W laid out as N, H, W, C
      strides.assign(4, 1);
      strides[3] = shape[1];
      strides[2] = strides[3] * shape[3];
      strides[0] = strides[2] * shape[2];
      return true;
    }
    const IntArrayRef last = in_strides[ni - 1];
    bool dense_alike = opd::is_non_overlapping_and_dense(shape, last);
    for (int i = 0; i < ni - 1 && dense_alike; ++i) dense_alike = in_strides[i].equals(last);
    if (dense_alike) {
      strides.assign(last.begin(), last.end());
      return true;
    }
  }

  // 2. Sort the dimensions by the inputs' strides over the result's dims: 0 where an input is
  // broadcast (missing, or of size 1 where the result is not).
  SmallVector<int64_t, 24> st(static_cast<size_t>(nd) * ni, 0);
  for (int i = 0; i < ni; ++i) {
    const IntArrayRef sizes = inputs[i]->sizes();
    const int offset = nd - static_cast<int>(sizes.size());
    for (int d = 0; d < static_cast<int>(sizes.size()); ++d) {
      if (sizes[d] != 1 || shape[offset + d] == 1) st[(offset + d) * ni + i] = in_strides[i][d];
    }
  }
  SmallVector<int, 6> perm(nd);
  sort_dimensions(perm, [&](int a, int b) {
    for (int i = 0; i < ni; ++i) {
      const int64_t sa = st[a * ni + i], sb = st[b * ni + i];
      if (sa == 0 || sb == 0) continue;
      if (sa != sb) return sa < sb ? -1 : 1;
      if (shape[a] > shape[b]) return 1;
    }
    return 0;
  });
  bool reversed = true;
  for (int j = 0; j < nd && reversed; ++j) reversed = perm[j] == nd - 1 - j;
  if (reversed) return false;
  strides.assign(nd, 0);
  int64_t next = 1;
  for (int d : perm) {
    strides[d] = next;
    next *= shape[d];
  }
  return true;
}

// A new tensor of `shape`: contiguous, or with `strides` when `strided`.
Tensor new_output(IntArrayRef shape, ScalarType dtype, Device device, bool strided,
                  const DimVector& strides) {
  Tensor t = empty_output(shape, dtype, device);
  if (strided) {
    t.unsafe_get_impl()->set_sizes_and_strides(shape, IntArrayRef(strides.data(), strides.size()),
                                               t.storage_offset());
  }
  return t;
}

}  // namespace

DimVector infer_dense_strides(IntArrayRef sizes, IntArrayRef strides) {
  const int nd = static_cast<int>(sizes.size());
  SmallVector<int, 6> perm(nd);
  sort_dimensions(perm, [&](int a, int b) {
    const int64_t sa = strides[a], sb = strides[b];
    if (sa == 0 || sb == 0) return 0;
    if (sa != sb) return sa < sb ? -1 : 1;
    return sizes[a] > sizes[b] ? 1 : 0;
  });
  DimVector out(nd);
  int64_t next = 1;
  for (int d : perm) {
    out[d] = next;
    if (sizes[d] > 1) next *= sizes[d];
  }
  return out;
}

TensorIteratorConfig& TensorIteratorConfig::promote_inputs_to_common_dtype(bool v) {
  promote_inputs_ = v;
  if (v) check_all_same_dtype_ = false;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::promote_integer_inputs_to_float(bool v) {
  promote_integer_inputs_to_float_ = v;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::compute_dtype(ScalarType dtype) {
  compute_dtype_ = dtype;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::output_dtype(ScalarType dtype) {
  output_dtype_ = dtype;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::cast_common_dtype_to_outputs(bool v) {
  cast_common_dtype_to_outputs_ = v;
  if (v) check_all_same_dtype_ = false;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::enforce_safe_casting_to_output(bool v) {
  enforce_safe_casting_ = v;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::check_all_same_dtype(bool v) {
  check_all_same_dtype_ = v;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::check_all_same_device(bool v) {
  check_all_same_device_ = v;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::check_mem_overlap(bool v) {
  check_mem_overlap_ = v;
  return *this;
}
TensorIteratorConfig& TensorIteratorConfig::resize_outputs(bool v) {
  resize_outputs_ = v;
  return *this;
}

TensorIterator TensorIteratorConfig::build() const {
  TensorIterator it;
  it.name_ = name_;
  const Tensor& out = output_ ? *output_ : undefined_tensor();
  OPD_INTERNAL_ASSERT(out.defined() || !inputs_.empty(), "{}: no operands", name_);
  const Tensor* input_ptrs[TensorIterator::kMaxOperands];
  for (size_t i = 0; i < inputs_.size(); ++i) {
    input_ptrs[i] = inputs_[i] != nullptr ? inputs_[i] : &owned_inputs_[i];
  }
  const std::span<const Tensor* const> inputs(input_ptrs, inputs_.size());
  bool read_write = false;
  for (const Tensor* in : inputs) read_write |= out.defined() && in->is_same(out);

  if (check_mem_overlap_ && out.defined()) {
    check_no_internal_overlap(out);
    for (const Tensor* in : inputs) check_no_partial_overlap(out, *in);
  }

  // The output takes part in broadcasting only when it cannot be resized; an in-place output
  // does as an input.
  SmallVector<IntArrayRef, 4> shapes;
  if (out.defined() && !resize_outputs_) shapes.push_back(out.sizes());
  for (const Tensor* in : inputs) shapes.push_back(in->sizes());
  const std::span<const IntArrayRef> shape_span(shapes.data(), shapes.size());
  if (!broadcast_into(shape_span, it.shape_)) {
    infer_size(shape_span);  // throws the mismatch
    OPD_INTERNAL_ASSERT(false, "{}: broadcast_into and infer_size disagree", name_);
  }
  bool will_resize = false;
  if (out.defined() && !out.sizes().equals(it.shape())) {
    OPD_CHECK(resize_outputs_ && !read_write,
              "output with shape {} doesn't match the broadcast shape {}", shape_str(out.sizes()),
              shape_str(it.shape()));
    will_resize = true;
  }

  if (check_all_same_device_) {
    const Tensor* operands[TensorIterator::kMaxOperands];
    operands[0] = output_;
    std::copy(inputs.begin(), inputs.end(), operands + 1);
    it.device_ = check_same_device("", std::span<const Tensor* const>(operands, inputs.size() + 1),
                                   /*num_outputs=*/1);
  } else {
    it.device_ = out.defined() ? out.device() : inputs[0]->device();
  }

  // Dtypes: what the inputs are computed in, and what the loop writes.
  const bool convert_inputs = promote_inputs_ || compute_dtype_.has_value();
  ScalarType common;
  if (compute_dtype_) {
    common = *compute_dtype_;
  } else if (promote_inputs_) {
    ResultTypeState state;
    for (const Tensor* in : inputs) state = update_result_type_state(*in, state);
    common = result_type(state);
  } else {
    common = inputs.empty() ? out.scalar_type() : inputs[0]->scalar_type();
  }
  if (check_all_same_dtype_) {
    const auto check = [&](const Tensor& t) {
      OPD_CHECK(t.scalar_type() == common, "Found dtype {} but expected {}", t.scalar_type(),
                common);
    };
    if (out.defined()) check(out);
    if (!convert_inputs) {
      for (const Tensor* in : inputs) check(*in);
    }
  }
  if (promote_integer_inputs_to_float_ && is_integral(common, /*include_bool=*/true)) {
    common = kDefaultDtype;
  }
  it.common_dtype_ = common;
  const ScalarType written = output_dtype_.value_or(common);
  bool needs_temporary = false;
  if (out.defined() && out.scalar_type() != written) {
    OPD_CHECK(!enforce_safe_casting_ || can_cast(common, out.scalar_type()),
              "result type {} can't be cast to the desired output type {}", common,
              out.scalar_type());
    needs_temporary = cast_common_dtype_to_outputs_;
  }

  // The output, and what the loop sees. Nothing is computed on Meta, or for no elements.
  int64_t numel = 1;
  for (int64_t s : it.shape_) numel *= s;
  it.numel_ = numel;
  const bool computes = !it.device_.is_meta() && numel > 0;
  it.ntensors_ = static_cast<int>(inputs.size()) + 1;
  // A new or resized output is laid out as the inputs are: Note [Output layout].
  DimVector layout;
  const bool strided =
      (!out.defined() || will_resize) &&
      output_layout(it.shape(), inputs, convert_inputs ? common : ScalarType::Undefined, layout);
  if (!out.defined()) {
    it.set_operand(0, undefined_tensor(),
                   new_output(it.shape(), written, it.device_, strided, layout));
  } else {
    it.given_output_ = &out;
    if (will_resize) {
      resize_output(name_, out, it.shape());
      if (strided) {
        out.unsafe_get_impl()->set_sizes_and_strides(
            it.shape(), IntArrayRef(layout.data(), layout.size()), out.storage_offset());
      }
    }
    if (needs_temporary && computes) {
      it.set_operand(0, undefined_tensor(),
                     new_output(it.shape(), written, it.device_, strided, layout));
    } else {
      it.set_operand(0, out, Tensor());
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& in = *inputs[i];
    const int k = static_cast<int>(i) + 1;
    if (convert_inputs && computes && in.scalar_type() != common) {
      it.set_operand(k, undefined_tensor(), converted(in, common));
    } else if (inputs_[i] == nullptr) {
      it.set_operand(k, undefined_tensor(), in);
    } else {
      it.set_operand(k, in, Tensor());
    }
  }
  it.compute_loop_geometry();
  return it;
}

void TensorIterator::set_operand(int k, const Tensor& borrowed, Tensor owned) {
  borrowed_[k] = borrowed.defined() ? &borrowed : nullptr;
  owned_[k] = std::move(owned);
}

void TensorIterator::compute_loop_geometry() {
  const int nt = ntensors();
  const int nd = static_cast<int>(shape_.size());
  data_.resize(nt);
  for (int k = 0; k < nt; ++k) data_[k] = static_cast<char*>(tensor(k).data_ptr());

  // Byte strides by the broadcast shape's dims: operands align at the last dim, and a dim an
  // operand is broadcast along (missing, or of size 1) gets stride 0.
  SmallVector<int64_t, 24> strides(static_cast<size_t>(nd) * nt, 0);
  for (int k = 0; k < nt; ++k) {
    const Tensor& t = tensor(k);
    const IntArrayRef sizes = t.sizes(), tstrides = t.strides();
    const int64_t item = static_cast<int64_t>(t.element_size());
    const int tdim = static_cast<int>(sizes.size());
    const int offset = nd - tdim;
    for (int d = 0; d < tdim; ++d) {
      if (sizes[d] != 1) strides[(d + offset) * nt + k] = tstrides[d] * item;
    }
  }

  // Fastest dims first: the original order reversed, then a stable insertion sort by the first
  // operand (output first) that tells two dims apart. An operand broadcast along either dim
  // cannot; equal strides put the smaller dim first.
  SmallVector<int, 6> perm(nd);
  for (int i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  const auto goes_after = [&](int a, int b) {
    for (int k = 0; k < nt; ++k) {
      const int64_t sa = strides[a * nt + k], sb = strides[b * nt + k];
      if (sa == 0 || sb == 0) continue;
      if (sa != sb) return sa > sb;
      if (shape_[a] != shape_[b]) return shape_[a] > shape_[b];
    }
    return false;
  };
  for (int i = 1; i < nd; ++i) {
    for (int j = i; j > 0 && goes_after(perm[j - 1], perm[j]); --j) std::swap(perm[j - 1], perm[j]);
  }

  // Merge each dim into the previous one when every operand steps over both as one.
  loop_shape_.clear();
  strides_.clear();
  for (int p : perm) {
    const int64_t size = shape_[p];
    if (size == 1) continue;
    if (!loop_shape_.empty()) {
      const size_t last = loop_shape_.size() - 1;
      bool mergeable = true;
      for (int k = 0; k < nt && mergeable; ++k) {
        mergeable = strides_[last * nt + k] * loop_shape_[last] == strides[p * nt + k];
      }
      if (mergeable) {
        loop_shape_[last] *= size;
        continue;
      }
    }
    loop_shape_.push_back(size);
    for (int k = 0; k < nt; ++k) strides_.push_back(strides[p * nt + k]);
  }
  OPD_CHECK(static_cast<int>(loop_shape_.size()) <= kMaxDims,
            "{}: tensors with more than {} non-mergeable dimensions are not supported", name_,
            kMaxDims);
}

bool TensorIterator::is_contiguous() const {
  if (loop_shape_.empty()) return true;
  if (loop_shape_.size() > 1) return false;
  for (int k = 0; k < ntensors(); ++k) {
    if (loop_stride(k, 0) != static_cast<int64_t>(tensor(k).element_size())) return false;
  }
  return true;
}

void TensorIterator::cast_outputs() const {
  if (!tensor(0).is_same(output())) output().copy_(tensor(0));
}

TensorIterator TensorIterator::binary_op(std::string_view name, const Tensor& out, const Tensor& a,
                                         const Tensor& b) {
  return TensorIteratorConfig(name)
      .add_output(out)
      .add_input(a)
      .add_input(b)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true)
      .build();
}

TensorIterator TensorIterator::binary_float_op(std::string_view name, const Tensor& out,
                                               const Tensor& a, const Tensor& b) {
  return TensorIteratorConfig(name)
      .add_output(out)
      .add_input(a)
      .add_input(b)
      .promote_inputs_to_common_dtype(true)
      .promote_integer_inputs_to_float(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true)
      .build();
}

TensorIterator TensorIterator::comparison_op(std::string_view name, const Tensor& out,
                                             const Tensor& a, const Tensor& b) {
  return TensorIteratorConfig(name)
      .add_output(out)
      .add_input(a)
      .add_input(b)
      .promote_inputs_to_common_dtype(true)
      .output_dtype(ScalarType::Bool)
      .cast_common_dtype_to_outputs(true)
      .build();
}

TensorIterator TensorIterator::unary_op(std::string_view name, const Tensor& out, const Tensor& a) {
  return TensorIteratorConfig(name).add_output(out).add_input(a).build();
}

TensorIterator TensorIterator::unary_float_op(std::string_view name, const Tensor& out,
                                              const Tensor& a) {
  return TensorIteratorConfig(name)
      .add_output(out)
      .add_input(a)
      .promote_inputs_to_common_dtype(true)
      .promote_integer_inputs_to_float(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true)
      .build();
}

TensorIterator TensorIterator::nullary_op(std::string_view name, const Tensor& out) {
  return TensorIteratorConfig(name)
      .add_output(out)
      .check_mem_overlap(false)
      .check_all_same_dtype(false)
      .resize_outputs(false)
      .build();
}

}  // namespace opd::common
