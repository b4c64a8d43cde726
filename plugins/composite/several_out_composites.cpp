// The out= forms with several outputs of sort, topk, max.dim and min.dim (sort.values,
// sort.values_stable, topk.values, max.dim_max, min.dim_min), CompositeExplicitAutograd over the
// functional forms: the new values and indices are written into the given tensors as
// PyTorch's structured out= kernels write theirs. From Python they take a tuple,
// torch.sort(x, out=(v, i)) (Note [Several out= tensors] in python/src/ops.cpp).

#include <string_view>
#include <tuple>

#include "common/output.h"
#include "opd/native/CompositeExplicitAutograd.h"
#include "opd/ops.h"

namespace opd::native {

namespace {

// out = result, as a structured kernel's output: out must have the result's dtype and device
// ("Expected out tensor to have dtype float, but got int instead"), and is resized to its shape
// (with resize_output's warning when it had elements); the values are copied in.
void write_out(std::string_view op, const Tensor& result, Tensor& out) {
  common::structured_output(op, out, result.sizes(), result.scalar_type(), result.device());
  out.copy_(result);
}

std::tuple<Tensor&, Tensor&> write_outs(std::string_view op,
                                        const std::tuple<Tensor, Tensor>& result, Tensor& values,
                                        Tensor& indices) {
  write_out(op, std::get<0>(result), values);
  write_out(op, std::get<1>(result), indices);
  return {values, indices};
}

}  // namespace

std::tuple<Tensor&, Tensor&> sort_values(const Tensor& self, int64_t dim, bool descending,
                                         Tensor& values, Tensor& indices) {
  return write_outs("sort", opd::sort(self, dim, descending), values, indices);
}

std::tuple<Tensor&, Tensor&> sort_values_stable(const Tensor& self, std::optional<bool> stable,
                                                int64_t dim, bool descending, Tensor& values,
                                                Tensor& indices) {
  return write_outs("sort", opd::sort(self, stable, dim, descending), values, indices);
}

std::tuple<Tensor&, Tensor&> topk_values(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                         bool sorted, Tensor& values, Tensor& indices) {
  return write_outs("topk", opd::topk(self, k, dim, largest, sorted), values, indices);
}

std::tuple<Tensor&, Tensor&> max_dim_max(const Tensor& self, int64_t dim, bool keepdim, Tensor& max,
                                         Tensor& max_values) {
  return write_outs("max", opd::max(self, dim, keepdim), max, max_values);
}

std::tuple<Tensor&, Tensor&> min_dim_min(const Tensor& self, int64_t dim, bool keepdim, Tensor& min,
                                         Tensor& min_indices) {
  return write_outs("min", opd::min(self, dim, keepdim), min, min_indices);
}

}  // namespace opd::native
