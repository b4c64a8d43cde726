#pragma once

// Reductions (sum, mean, amax, amin, argmax, max.dim): the metadata rules every backend shares
// (which dims, what shape, what dtype, which errors) and the geometry a strided kernel walks.
//
// Note [Reduction geometry]
// A reduction over the dims in a mask splits the input into kept dims (one output element per
// index over them) and reduced dims (the elements combined into one output). Both lists keep the
// input's dim order, drop size-1 dims and merge neighbours whose strides let them be walked as one
// (stride[i] == stride[i+1] * size[i+1]). The output is contiguous over the kept sizes, so output
// number `o` (row-major over the kept dims) is element `o` of the result, keepdim or not; and the
// elements of one output, visited in row-major order over the reduced dims, are numbered 0, 1, ...
// as PyTorch numbers them for argmax (the flat index of the reduced sub-tensor).

#include <bitset>
#include <complex>
#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "opd/half.h"
#include "opd/tensor.h"

namespace opd::common {

// The dims of a tensor a reduction combines; PyTorch's DimBitset (tensors have at most 64 dims).
using DimMask = std::bitset<64>;

// PyTorch's make_dim_mask: the dims in `dims`, wrapped against `ndim` (a 0-dim tensor accepts 0
// and -1). No list, or an empty one, means every dim. Throws IndexError "Dimension out of range
// (expected to be in range of [-2, 1], but got 2)", Error "dim 0 appears multiple times in the
// list of dims" (the wrapped dim), Error when ndim > 64.
DimMask make_dim_mask(OptionalIntArrayRef dims, int64_t ndim);

// The sizes of the result of reducing `sizes` over `mask`: reduced dims dropped, or kept as 1
// when keepdim.
std::vector<int64_t> reduced_sizes(IntArrayRef sizes, const DimMask& mask, bool keepdim);

// What a reduction produces: its dims, its sizes (contiguous strides) and its dtype.
struct ReductionMeta {
  DimMask mask;
  std::vector<int64_t> sizes;
  ScalarType dtype = ScalarType::Undefined;
};

// sum / sum.dim_IntList. dtype: `dtype` when given, else Long for integral and Bool inputs, else
// the input's. Throws as make_dim_mask.
ReductionMeta sum_meta(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                       std::optional<ScalarType> dtype);

// mean / mean.dim. The dtype is sum's and must be floating or complex, else Error
// "mean(): could not infer output dtype. Input dtype must be either a floating point or complex
// dtype. Got: Long" ("Optional dtype ... Got: <dtype>" when `dtype` was given).
ReductionMeta mean_meta(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                        std::optional<ScalarType> dtype);

// amax / amin (`op` is "amax" or "amin"): the input's dtype. An empty input needs named dims of
// non-zero size: Error "amax(): Expected reduction dim to be specified for input.numel() == 0.
// Specify the reduction dim with the 'dim' argument.", IndexError "amax(): Expected reduction dim
// 1 to have non-zero size.". Complex inputs: Error "\"max_values_cpu\" not implemented for
// 'ComplexFloat'" (min_values_cpu for amin), PyTorch's kernel names.
ReductionMeta amax_meta(std::string_view op, const Tensor& self, IntArrayRef dim, bool keepdim);

// max() and min() over every element (`op` is "max" or "min"): a 0-dim tensor of the input's
// dtype. Error "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the
// reduction dim with the 'dim' argument."; complex: "\"max_all\" not implemented for ...".
ReductionMeta max_all_meta(std::string_view op, const Tensor& self);

// argmax / argmin (`op`): Long indices over `dim` (wrapped), or over the flattened input when
// none. IndexError "argmax(): Expected reduction dim to be specified for input.numel() == 0." or
// "argmax(): Expected reduction dim 0 to have non-zero size."; Error "\"argmax_cpu\" not
// implemented for 'Bool'" for Bool and complex.
ReductionMeta argmax_meta(std::string_view op, const Tensor& self, std::optional<int64_t> dim,
                          bool keepdim);
ReductionMeta argmax_meta(const Tensor& self, std::optional<int64_t> dim, bool keepdim);

// max.dim / min.dim (`op` is "max" or "min"): values in the input's dtype and Long indices, both
// of `sizes`. IndexError "max(): Expected reduction dim 0 to have non-zero size." (or, for a 0-dim
// input, "max(): Expected reduction dim -1 or 0 for scalar but got 2"); Error "max(): does not
// support complex input".
ReductionMeta max_dim_meta(std::string_view op, const Tensor& self, int64_t dim, bool keepdim);
ReductionMeta max_dim_meta(const Tensor& self, int64_t dim, bool keepdim);

// prod / prod.dim_int: sum's dtypes (integers and Bool give Long); Half and BFloat16 are refused
// as PyTorch 1.13's CPU kernel refuses them ("\"prod_cpu\" not implemented for 'Half'").
ReductionMeta prod_meta(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                        std::optional<ScalarType> dtype);

// nansum: sum's; Error "nansum does not support complex inputs".
ReductionMeta nansum_meta(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                          std::optional<ScalarType> dtype);

// count_nonzero.dim_IntList: Long counts over `dim` (every dim when empty), dims dropped.
ReductionMeta count_nonzero_meta(const Tensor& self, IntArrayRef dim);

// all / any over `dim`, or every dim when none: Bool, or UInt8 for a UInt8 input (PyTorch 1.13).
ReductionMeta all_any_meta(const Tensor& self, std::optional<int64_t> dim, bool keepdim);

// var / std / var_mean / std_mean (.correction, `op` their name): the input's dtype, the real
// one for complex. Error "std and var only support floating point and complex dtypes" for other
// inputs ("var_mean only support ..." and "std_mean only support ..." for those two).
ReductionMeta var_meta(std::string_view op, const Tensor& self, OptionalIntArrayRef dim,
                       bool keepdim);

// linalg_vector_norm: PyTorch's checks (a floating or complex input, `dtype` floating, real for
// a real input, not narrowing; no inf or negative order over an empty input without a named dim
// of non-zero size) and the real dtype of `dtype` or of the input.
ReductionMeta vector_norm_meta(const Tensor& self, const Scalar& ord, OptionalIntArrayRef dim,
                               bool keepdim, std::optional<ScalarType> dtype);

// sum(self, dtype) and mean(self, dtype), the reductions over every dim, on a backend: the meta
// function of the structured sum.IntList_out or mean.out (opd::meta::sum_IntList, opd::meta::mean),
// then the backend's impl of it, over no dims.
template <class Meta, class Impl>
Tensor reduce_all(Meta meta, Impl impl, const Tensor& self, std::optional<ScalarType> dtype) {
  Tensor out = meta(Tensor(), self, std::nullopt, false, dtype);
  impl(self, std::nullopt, false, dtype, out);
  return out;
}

// The geometry of one reduction; see Note [Reduction geometry]. Strides count elements.
struct ReductionPlan {
  int64_t num_outputs = 1;    // product of the kept sizes (0 when one is 0)
  int64_t reduced_numel = 1;  // elements per output (0 when a reduced size is 0)
  std::vector<int64_t> kept_sizes, kept_strides;
  std::vector<int64_t> reduced_sizes, reduced_strides;
};

// REQUIRES: sizes.size() == strides.size() <= 64.
ReductionPlan make_reduction_plan(IntArrayRef sizes, IntArrayRef strides, const DimMask& mask);

// The offset, in elements from the input's first element, of the first element of output
// `index`. REQUIRES: 0 <= index < plan.num_outputs.
int64_t input_offset(const ReductionPlan& plan, int64_t index);

// Calls row(offset, n, stride, first) for each innermost run of the elements of the output whose
// first element is at `base`: elements offset + k * stride for k in [0, n), numbered first + k.
// Runs come in the elements' order. Nothing is called when plan.reduced_numel == 0.
template <class F>
void for_each_reduced_row(const ReductionPlan& plan, int64_t base, F&& row) {
  if (plan.reduced_numel == 0) return;
  const size_t nd = plan.reduced_sizes.size();
  if (nd == 0) {
    row(base, int64_t{1}, int64_t{0}, int64_t{0});
    return;
  }
  const int64_t n = plan.reduced_sizes[nd - 1];
  const int64_t stride = plan.reduced_strides[nd - 1];
  if (nd == 1) {
    row(base, n, stride, int64_t{0});
    return;
  }
  // An odometer over the outer reduced dims.
  int64_t counter[64] = {};
  int64_t offset = base;
  for (int64_t first = 0; first < plan.reduced_numel; first += n) {
    row(offset, n, stride, first);
    for (size_t d = nd - 1; d-- > 0;) {
      offset += plan.reduced_strides[d];
      if (++counter[d] < plan.reduced_sizes[d]) break;
      offset -= plan.reduced_strides[d] * plan.reduced_sizes[d];
      counter[d] = 0;
    }
  }
}

// The type a kernel accumulates T in: double for floating types (Half and BFloat16 included),
// int64_t for integers and bool, std::complex<double> for complex types.
template <class T>
using acc_type_t = std::conditional_t<
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, double,
    std::conditional_t<std::is_integral_v<T>, int64_t, std::complex<double>>>;

namespace detail {
// pairwise_sum with the stride a compile-time 1 when kUnit, so that the loads vectorise.
template <bool kUnit, class Acc, class T, class Load>
Acc pairwise_sum_impl(const T* p, int64_t n, int64_t stride_arg, Load& load) {
  constexpr int64_t kBlock = 128;
  const int64_t stride = kUnit ? 1 : stride_arg;
  if (n <= kBlock) {
    // Eight independent partial sums: the compiler keeps them in vector registers.
    Acc s[8];
    for (Acc& x : s) x = Acc(0);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int j = 0; j < 8; ++j) s[j] += load(p[(i + j) * stride]);
    }
    for (; i < n; ++i) s[0] += load(p[i * stride]);
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  }
  // Split on a block boundary so that each half but the last holds whole blocks.
  const int64_t half = ((n / kBlock + 1) / 2) * kBlock;
  return pairwise_sum_impl<kUnit, Acc>(p, half, stride, load) +
         pairwise_sum_impl<kUnit, Acc>(p + half * stride, n - half, stride, load);
}
}  // namespace detail

// The sum of n values at p[0], p[stride], ... converted by `load`, accumulated in Acc pairwise
// (blocks of 128 summed in eight interleaved partial sums, blocks combined as a balanced tree),
// so that the rounding error grows with log(n) rather than n.
template <class Acc, class T, class Load>
Acc pairwise_sum(const T* p, int64_t n, int64_t stride, Load&& load) {
  return stride == 1 ? detail::pairwise_sum_impl<true, Acc>(p, n, 1, load)
                     : detail::pairwise_sum_impl<false, Acc>(p, n, stride, load);
}

}  // namespace opd::common
