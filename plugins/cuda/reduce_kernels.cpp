// CUDA impls of the structured reductions (sum, mean, amax, amin, argmax) and the kernels of sum
// and mean over every dim and max.dim. Their metadata (dims, shapes, dtypes, errors) comes from
// common/reduction.h, as the CPU's and Meta's does; this file
// lays the input out as the device code takes it (kernels/reduce_args.h) and launches it.
// Accumulation follows PyTorch's CUDA kernels (float for Float, Half and BFloat16, double for
// Double, int64 for integers and Bool); the CPU accumulates floats in double, so float results
// agree to rounding, not bit for bit. Complex inputs are summed (sum, mean) in their own precision
// and refused by the others (TypeError, kernel_dtype), as on the CPU.

#include <optional>
#include <tuple>
#include <vector>

#include "common/reduction.h"
#include "cuda/allocator.h"
#include "cuda/cuda_check.h"
#include "cuda/device_guard.h"
#include "cuda/geometry.h"
#include "cuda/kernels/reduce_args.h"
#include "opd/error.h"
#include "opd/native/CUDA.h"
#include "opd/native/meta_functions.h"

namespace opd::native {

namespace {

using common::DimMask;
using common::ReductionMeta;
using cuda::DeviceGuard;
namespace kern = cuda::kern;

// The input of a reduction as kernels/reduce_args.h takes it: contiguous [outer, size, inner].
struct Rows {
  Tensor data;  // undefined when size == 0
  int64_t outer = 1, size = 1, inner = 1;
};

// `self` laid out for a reduction over `mask`, converted to `dtype` when given. When the reduced
// dims (ignoring dims of size 1) are neighbours, the contiguous input already is [outer, size,
// inner] and nothing is copied; otherwise the reduced dims are moved last, in order, and copied:
// [kept..., reduced...] as [outer, size, 1]. Either way r, the position along `size`, is the
// row-major index over the reduced dims that argmax reports, and output o * inner + j is element
// o * inner + j of the contiguous result.
Rows as_rows(const Tensor& self, const DimMask& mask, std::optional<ScalarType> dtype) {
  Rows rows;
  std::vector<int64_t> kept, reduced;
  // 0: before the reduced dims, 1: among them, 2: after them; a reduced dim in 2 breaks the block.
  int state = 0;
  bool block = true;
  for (int64_t d = 0; d < self.dim(); ++d) {
    const int64_t n = self.size(d);
    (mask.test(d) ? reduced : kept).push_back(d);
    if (n == 1) continue;
    if (mask.test(d)) {
      rows.size *= n;
      if (state == 2) block = false;
      state = 1;
    } else {
      if (state == 1) state = 2;
      (state == 0 ? rows.outer : rows.inner) *= n;
    }
  }
  if (rows.size == 0) {
    rows.outer *= rows.inner;
    rows.inner = 1;
    return rows;
  }
  Tensor view = self;
  if (!block) {
    std::vector<int64_t> perm = kept;
    perm.insert(perm.end(), reduced.begin(), reduced.end());
    view = self.permute(perm);
    rows.outer *= rows.inner;
    rows.inner = 1;
  }
  rows.data = dtype ? view.to(*dtype, false, false, MemoryFormat::Contiguous) : view.contiguous();
  return rows;
}

// Runs `op` over `rows` on device `index`, writing `out` (null for argmax, whose values go
// nowhere) and `indices` (ArgMax only).
void launch(kern::ReduceOp op, const Rows& rows, ScalarType in_dtype, void* out,
            ScalarType out_dtype, int64_t* indices, int index, const char* name) {
  kern::ReduceArgs a;
  a.op = op;
  const bool sums = op == kern::ReduceOp::Sum || op == kern::ReduceOp::Mean;
  a.in_dtype = cuda::kernel_dtype(in_dtype, name, /*with_complex=*/sums);
  a.out_dtype = cuda::kernel_dtype(out_dtype, name, /*with_complex=*/sums);
  a.in = rows.data.defined() ? rows.data.data_ptr() : nullptr;
  a.outer = rows.outer;
  a.size = rows.size;
  a.inner = rows.inner;
  a.out = out;
  a.indices = indices;
  Tensor workspace;
  if (const int64_t bytes = kern::reduce_workspace_bytes(a); bytes > 0) {
    workspace = cuda::empty_cuda({bytes}, kByte, index);
    a.workspace = workspace.data_ptr();
  }
  cuda::check_launch(kern::launch_reduce(a, cuda::current_stream(index)), name);
}

// sum and mean (kMean) into `out` (contiguous, of the result's dtype; the meta function made it).
// An input of another dtype is converted first, as on CPU, except integers widening to Long,
// which the accumulator does by itself.
template <bool kMean>
void sum_into(const char* op, const Tensor& self, OptionalIntArrayRef dim, const Tensor& out) {
  const ScalarType dtype = out.scalar_type();
  cuda::kernel_dtype(self.scalar_type(), op, /*with_complex=*/true);
  cuda::kernel_dtype(dtype, op, /*with_complex=*/true);
  if (out.numel() == 0) return;
  const bool widens = is_integral(self.scalar_type(), /*include_bool=*/true) && dtype == kLong;
  const bool convert = self.scalar_type() != dtype && !widens;
  DeviceGuard guard(self.device());
  const Rows rows = as_rows(self, common::make_dim_mask(dim, self.dim()),
                            convert ? std::optional<ScalarType>(dtype) : std::nullopt);
  launch(kMean ? kern::ReduceOp::Mean : kern::ReduceOp::Sum, rows,
         convert ? dtype : self.scalar_type(), out.data_ptr(), dtype, nullptr, guard.index(), op);
}

void minmax_into(const char* op, bool is_max, const Tensor& self, IntArrayRef dim,
                 const Tensor& out) {
  cuda::kernel_dtype(self.scalar_type(), op);
  if (out.numel() == 0) return;
  DeviceGuard guard(self.device());
  launch(is_max ? kern::ReduceOp::Max : kern::ReduceOp::Min,
         as_rows(self, common::make_dim_mask(dim, self.dim()), std::nullopt), self.scalar_type(),
         out.data_ptr(), out.scalar_type(), nullptr, guard.index(), op);
}

}  // namespace

void sum_out(const Tensor& self, OptionalIntArrayRef dim, bool, std::optional<ScalarType>,
             const Tensor& out) {
  sum_into<false>("sum", self, dim, out);
}

void mean_out(const Tensor& self, OptionalIntArrayRef dim, bool, std::optional<ScalarType>,
              const Tensor& out) {
  sum_into<true>("mean", self, dim, out);
}

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  return common::reduce_all(meta::sum_IntList, sum_out, self, dtype);
}

Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) {
  return common::reduce_all(meta::mean, mean_out, self, dtype);
}

void amax_out(const Tensor& self, IntArrayRef dim, bool, const Tensor& out) {
  minmax_into("amax", true, self, dim, out);
}

void amin_out(const Tensor& self, IntArrayRef dim, bool, const Tensor& out) {
  minmax_into("amin", false, self, dim, out);
}

void argmax_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  cuda::kernel_dtype(self.scalar_type(), "argmax");
  if (out.numel() == 0) return;
  DeviceGuard guard(self.device());
  launch(kern::ReduceOp::ArgMax,
         as_rows(self, common::argmax_meta(self, dim, keepdim).mask, std::nullopt),
         self.scalar_type(), nullptr, self.scalar_type(), out.data_ptr<int64_t>(), guard.index(),
         "argmax");
}

std::tuple<Tensor, Tensor> max_dim(const Tensor& self, int64_t dim, bool keepdim) {
  const ReductionMeta m = common::max_dim_meta(self, dim, keepdim);
  cuda::kernel_dtype(self.scalar_type(), "max");
  DeviceGuard guard(self.device());
  Tensor values = cuda::empty_cuda(m.sizes, m.dtype, guard.index());
  Tensor indices = cuda::empty_cuda(m.sizes, kLong, guard.index());
  if (values.numel() == 0) return {values, indices};
  launch(kern::ReduceOp::ArgMax, as_rows(self, m.mask, std::nullopt), self.scalar_type(),
         values.data_ptr(), m.dtype, indices.data_ptr<int64_t>(), guard.index(), "max");
  return {values, indices};
}

}  // namespace opd::native
