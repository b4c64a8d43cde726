#pragma once

// The three computations of a (non-transposed) convolution, on which the CPU kernels of
// convolution and convolution_backward are built: forward (src, weight -> dst), backward data
// (diff_dst, weight -> diff_src) and backward weights (src, diff_dst -> diff_weight). A
// transposed convolution is the backward data of the convolution it transposes, and its
// gradients the forward and the backward weights with src and dst exchanged (Note
// [Convolution on the CPU] in conv_kernels.cpp).
//
// Two implementations: oneDNN (conv_dnnl.cpp; float and bfloat16) and im2col + OpenBLAS gemm
// (conv_im2col.cpp; float and double, contiguous tensors).

#include <cstdint>
#include <vector>

#include "opd/tensor.h"

namespace opd::native::conv {

// The geometry of a non-transposed convolution: src (N, C, *) by weight (O, C / groups, *)
// into dst (N, O, *). pad_r may differ from pad_l (a transposed convolution's output_padding).
struct Geometry {
  std::vector<int64_t> src, weight, dst;  // full sizes
  std::vector<int64_t> stride, pad_l, pad_r, dilation;
  int64_t groups = 1;
};

// ---- im2col + gemm: contiguous float or double tensors; writes its whole output --------------
void im2col_forward(const Tensor& src, const Tensor& weight, const Tensor& dst, const Geometry& g);
void im2col_backward_data(const Tensor& diff_dst, const Tensor& weight, const Tensor& diff_src,
                          const Geometry& g);
void im2col_backward_weights(const Tensor& src, const Tensor& diff_dst, const Tensor& diff_weight,
                             const Geometry& g);

// ---- oneDNN: float or bfloat16, any strides; each returns false (having written nothing)
// where oneDNN has no implementation for the case -------------------------------------------
bool dnnl_supports(const Geometry& g);
bool dnnl_forward(const Tensor& src, const Tensor& weight, const Tensor* bias, const Tensor& dst,
                  const Geometry& g);
bool dnnl_backward_data(const Tensor& diff_dst, const Tensor& weight, const Tensor& diff_src,
                        const Geometry& g);
// diff_bias, when not null, receives the sum of diff_dst over all but its channel dimension.
bool dnnl_backward_weights(const Tensor& src, const Tensor& diff_dst, const Tensor& diff_weight,
                           const Tensor* diff_bias, const Geometry& g);

}  // namespace opd::native::conv
