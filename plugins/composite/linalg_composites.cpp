// matmul and linear, over dot, mv, mm, bmm and addmm, with PyTorch's rules (_matmul_impl):
//   1-D @ 1-D  dot product            2-D @ 1-D  matrix-vector        1-D @ 2-D  vector-matrix
//   2-D @ 2-D  mm                     N-D @ 1-D/2-D (and the mirror): the batch folded into mm
//   otherwise  the batch dimensions broadcast, flattened, and bmm
// Every step is an operator (unsqueeze, view, expand, reshape, mm, bmm), so autograd sees them.

#include <functional>
#include <numeric>
#include <vector>

#include "common/broadcast.h"
#include "opd/native/CompositeImplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

int64_t product(IntArrayRef sizes) {
  return std::accumulate(sizes.begin(), sizes.end(), int64_t{1}, std::multiplies<>());
}

// The last two dimensions swapped (PyTorch's mT).
Tensor matrix_transpose(const Tensor& t) { return t.transpose(-2, -1); }

// PyTorch's should_fold: `a` has 3+ dimensions and the other operand 1 or 2, so a's batch can
// be folded into the rows of one mm. Not for a [b, n, k] whose last two dimensions are
// transposed in memory: folding them would copy, bmm reads them as they are.
bool should_fold(const Tensor& a, int64_t other_dim) {
  if (a.dim() < 3 || (other_dim != 1 && other_dim != 2)) return false;
  const IntArrayRef sizes = a.sizes(), strides = a.strides();
  const bool transposed_batch = a.dim() == 3 && other_dim == 2 && strides.back() != 1 &&
                                strides.front() == sizes[1] * sizes[2];
  return !transposed_batch;
}

// `big` (3+ dims) @ `small` (1 or 2 dims) as one mm, or its mirror `small @ big` when
// `mirrored`: then big^T @ small^T is computed and transposed back.
Tensor folded_matmul(const Tensor& tensor1, const Tensor& tensor2) {
  const bool mirrored = tensor2.dim() > tensor1.dim();
  const Tensor t1 = mirrored ? matrix_transpose(tensor2) : tensor1;
  const Tensor t2 = !mirrored ? tensor2 : (tensor1.dim() == 2 ? tensor1.t() : tensor1);
  const IntArrayRef sizes1 = t1.sizes();
  std::vector<int64_t> output_shape(sizes1.begin(), sizes1.end() - 1);
  // Not view(-1, k): with k == 0 the -1 would be ambiguous.
  const Tensor t1_folded = t1.reshape({product(output_shape), sizes1.back()});
  if (t2.dim() == 2) {
    output_shape.push_back(t2.size(1));
    const Tensor output = opd::mm(t1_folded, t2).view(output_shape);
    return mirrored ? matrix_transpose(output).contiguous() : output;
  }
  return opd::mv(t1_folded, t2).view(output_shape);
}

Tensor batched_matmul(const Tensor& tensor1, const Tensor& tensor2) {
  const int64_t dim1 = tensor1.dim(), dim2 = tensor2.dim();
  const IntArrayRef sizes1 = tensor1.sizes(), sizes2 = tensor2.sizes();
  const int64_t n = dim1 > 1 ? sizes1[dim1 - 2] : 1;
  const int64_t m1 = sizes1.back();
  const int64_t m2 = dim2 > 1 ? sizes2[dim2 - 2] : sizes2.front();
  const int64_t p = dim2 > 1 ? sizes2.back() : 1;
  const IntArrayRef batch1 = sizes1.first(std::max<int64_t>(dim1 - 2, 0));
  const IntArrayRef batch2 = sizes2.first(std::max<int64_t>(dim2 - 2, 0));

  std::vector<int64_t> output_shape = common::infer_size(batch1, batch2);
  const int64_t batch = product(output_shape);

  std::vector<int64_t> expand1 = output_shape;
  expand1.insert(expand1.end(), {n, m1});
  const Tensor lhs = tensor1.expand(expand1).reshape({batch, n, m1});

  // A vector on the right stays a vector through the broadcast, then becomes [batch, m2, 1].
  const bool vector_rhs = dim2 == 1;
  std::vector<int64_t> expand2 = output_shape;
  if (vector_rhs) {
    expand2.push_back(m2);
  } else {
    expand2.insert(expand2.end(), {m2, p});
  }
  const Tensor rhs = vector_rhs ? tensor2.expand(expand2).reshape({batch, m2}).unsqueeze(2)
                                : tensor2.expand(expand2).reshape({batch, m2, p});

  if (dim1 > 1) output_shape.push_back(n);
  if (dim2 > 1) output_shape.push_back(p);
  Tensor output = opd::bmm(lhs, rhs);
  if (vector_rhs) output = output.squeeze(-1);
  return output.view(output_shape);
}

}  // namespace

Tensor matmul(const Tensor& self, const Tensor& other) {
  const int64_t dim1 = self.dim(), dim2 = other.dim();
  OPD_CHECK(dim1 != 0 && dim2 != 0,
            "both arguments to matmul need to be at least 1D, but they are {}D and {}D", dim1,
            dim2);
  if (dim1 == 1 && dim2 == 1) return opd::dot(self, other);
  if (dim1 == 2 && dim2 == 1) return opd::mv(self, other);
  if (dim1 == 1 && dim2 == 2) return opd::mm(self.unsqueeze(0), other).squeeze(0);
  if (dim1 == 2 && dim2 == 2) return opd::mm(self, other);
  if (should_fold(self, dim2) || should_fold(other, dim1)) return folded_matmul(self, other);
  return batched_matmul(self, other);
}

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  const bool has_bias = bias.has_value() && bias->defined();
  // The fused addmm, for a matrix and for a contiguous [b, n, k] read as [b * n, k].
  if (has_bias && input.dim() == 2) return opd::addmm(*bias, input, weight.t());
  if (has_bias && input.dim() == 3 && input.is_contiguous()) {
    const IntArrayRef sizes = input.sizes();
    const Tensor output =
        opd::addmm(*bias, input.view({sizes[0] * sizes[1], sizes[2]}), weight.t());
    return output.view({sizes[0], sizes[1], output.size(1)});
  }
  Tensor output = opd::matmul(input, weight.t());
  if (has_bias) output = opd::add(output, *bias);
  return output;
}

}  // namespace opd::native
