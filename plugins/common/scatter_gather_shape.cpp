// The shared checks of gather, scatter*, index_select and index_add (scatter_gather_shape.h),
// and the meta functions of their structured out= operators.

#include "common/scatter_gather_shape.h"

#include <fmt/format.h>

#include "common/broadcast.h"
#include "common/output.h"
#include "common/type_dispatch.h"
#include "opd/error.h"
#include "opd/native/meta_functions.h"
#include "opd/warning.h"

namespace opd::common {

namespace {

int64_t ensure_nonempty_dim(int64_t dim) { return dim == 0 ? 1 : dim; }

}  // namespace

void scatter_gather_dtype_check(std::string_view method, const Tensor& self, const Tensor& index,
                                const Tensor* src) {
  OPD_CHECK(index.scalar_type() == kLong, "{}(): Expected dtype int64 for index", method);
  if (src != nullptr) {
    OPD_CHECK(self.scalar_type() == src->scalar_type(),
              "{}(): Expected self.dtype to be equal to src.dtype", method);
  }
}

void gather_shape_check(const Tensor& self, int64_t dim, const Tensor& index) {
  const int64_t nd = ensure_nonempty_dim(self.dim());
  OPD_CHECK(nd == ensure_nonempty_dim(index.dim()),
            "Index tensor must have the same number of dimensions as input tensor");
  for (int64_t i = 0; i < nd; ++i) {
    if (i == dim) continue;
    OPD_CHECK(size_or_one(index, i) <= size_or_one(self, i),
              "Size does not match at dimension {} expected index {} to be smaller than self {} "
              "apart from dimension {}",
              i, shape_str(index.sizes()), shape_str(self.sizes()), dim);
  }
}

void scatter_shape_check(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src) {
  if (index.numel() == 0) return;
  const int64_t nd = ensure_nonempty_dim(self.dim());
  OPD_CHECK(nd == ensure_nonempty_dim(index.dim()),
            "Index tensor must have the same number of dimensions as self tensor");
  bool wrong = false;
  for (int64_t d = 0; d < nd && !wrong; ++d) {
    const int64_t n = size_or_one(index, d);
    if (d != dim && n > size_or_one(self, d)) wrong = true;
    if (src != nullptr && d < ensure_nonempty_dim(src->dim()) && n > size_or_one(*src, d)) {
      wrong = true;
    }
  }
  if (src != nullptr) {
    OPD_CHECK(ensure_nonempty_dim(src->dim()) == nd,
              "Index tensor must have the same number of dimensions as src tensor");
    OPD_CHECK(!wrong,
              "Expected index {} to be smaller than self {} apart from dimension {} and to be "
              "smaller size than src {}",
              shape_str(index.sizes()), shape_str(self.sizes()), dim, shape_str(src->sizes()));
  } else {
    OPD_CHECK(!wrong, "Expected index {} to be smaller than self {} apart from dimension {}",
              shape_str(index.sizes()), shape_str(self.sizes()), dim);
  }
}

ScatterReduce scatter_reduce_of(std::string_view reduce) {
  if (reduce == "add") return ScatterReduce::kSum;
  if (reduce == "multiply") return ScatterReduce::kProd;
  OPD_CHECK(false, "reduce argument must be either add or multiply.");
  return ScatterReduce::kNone;
}

ScatterReduce scatter_reduce_two_of(std::string_view reduce) {
  if (reduce == "sum") return ScatterReduce::kSum;
  if (reduce == "prod") return ScatterReduce::kProd;
  if (reduce == "mean") return ScatterReduce::kMean;
  if (reduce == "amax") return ScatterReduce::kMax;
  if (reduce == "amin") return ScatterReduce::kMin;
  OPD_CHECK(false, "reduce argument must be either sum, prod, mean, amax or amin.");
  return ScatterReduce::kNone;
}

std::vector<int64_t> index_select_sizes(const Tensor& self, int64_t dim, const Tensor& index) {
  dim = maybe_wrap_dim(dim, self.dim());
  const int64_t numel = index.numel();
  OPD_CHECK_T(IndexError, index.dim() <= 1, "index_select(): Index is supposed to be a vector");
  OPD_CHECK(!(self.dim() == 0 && numel != 1),
            "index_select(): Index to scalar can have only 1 value, got {} value(s)", numel);
  OPD_CHECK(index.scalar_type() == kLong || index.scalar_type() == kInt,
            "index_select(): Expected dtype int32 or int64 for index");
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  if (self.dim() > 0) sizes[dim] = numel;
  return sizes;
}

void index_add_check(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  OPD_CHECK_T(IndexError, index.dim() <= 1,
              "index_add_(): Index is supposed to be a vector, but got dim: {} with type: {} and "
              "size: {}",
              index.dim(), index.scalar_type(), shape_str(index.sizes()));
  OPD_CHECK(index.scalar_type() == kLong || index.scalar_type() == kInt,
            "index_add_(): Expected dtype int32/int64 for index but got: {}", index.scalar_type());
  OPD_CHECK(self.scalar_type() == source.scalar_type(),
            "index_add_(): self ({}) and source ({}) must have the same scalar type",
            self.scalar_type(), source.scalar_type());
  OPD_CHECK(dim == 0 || dim < source.dim(),
            "index_add_(): Indexing dim {} is out of bounds of the source tensor with dim {}", dim,
            source.dim());
  const int64_t n = source.dim() == 0 ? 1 : source.size(dim);
  OPD_CHECK(index.numel() == n,
            "index_add_(): Number of indices ({}) should be equal to source.size(dim): ({}), for "
            "dim: {}",
            index.numel(), n, dim);
  if (self.dim() == 0 || source.dim() == 0) return;
  // Each slice of source along dim is added to one of self's: it broadcasts to that shape.
  std::vector<int64_t> a(self.sizes().begin(), self.sizes().end());
  std::vector<int64_t> b(source.sizes().begin(), source.sizes().end());
  a.erase(a.begin() + dim);
  b.erase(b.begin() + std::min<int64_t>(dim, static_cast<int64_t>(b.size()) - 1));
  const std::vector<int64_t> shape = infer_size(a, b);
  OPD_CHECK(shape == a, "output with shape {} doesn't match the broadcast shape {}", shape_str(a),
            shape_str(shape));
}

void index_fill_check(const Tensor& index) {
  OPD_CHECK_T(IndexError, index.scalar_type() == kLong,
              "index_fill_(): Expected dtype int64 for index.");
  OPD_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
}

void masked_fill_check(const Tensor& self, const Tensor& mask, const Tensor* value) {
  const ScalarType m = mask.scalar_type();
  OPD_CHECK(m == kBool || m == ScalarType::UInt8,
            "masked_fill_ only supports boolean masks, but got mask with dtype {}", m);
  if (value != nullptr) {
    OPD_CHECK(value->dim() == 0,
              "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} "
              "dimension(s).",
              value->dim());
  }
  const std::vector<int64_t> shape = infer_size(self.sizes(), mask.sizes());
  OPD_CHECK(IntArrayRef(shape).equals(self.sizes()),
            "output with shape {} doesn't match the broadcast shape {}", shape_str(self.sizes()),
            shape_str(shape));
  warn_on_expanded_fill("masked_fill_", self);
}

void warn_on_expanded_fill(std::string_view op, const Tensor& self) {
  if (!has_internal_overlap(self)) return;
  opd::warn(fmt::format(
      "Use of {} on expanded tensors is deprecated. Please clone() the tensor before performing "
      "this operation. This also applies to advanced indexing e.g. tensor[mask] = scalar",
      op));
}

}  // namespace opd::common

// The structured operators' meta functions (opd/native/meta_functions.h), PyTorch's: the output
// has self's sizes and dtype (gather: index's sizes).
namespace opd {

namespace {

using common::scatter_gather_dtype_check;
using common::scatter_shape_check;

// A given output (self for the in-place forms) must not overlap itself, as PyTorch's meta
// functions of scatter* and index_add check it: Meta raises what CPU raises.
Tensor like_self(std::string_view op, const Tensor& out, const Tensor& self) {
  Tensor result =
      common::structured_output(op, out, self.sizes(), self.scalar_type(), self.device());
  if (out.defined()) common::check_no_internal_overlap(out);
  return result;
}

Tensor scatter_meta(std::string_view op, const Tensor& out, const Tensor& self, int64_t dim,
                    const Tensor& index, const Tensor* src) {
  const int64_t wrapped = maybe_wrap_dim(dim, self.dim());
  scatter_gather_dtype_check(op, self, index, src);
  scatter_shape_check(self, wrapped, index, src);
  return like_self(op, out, self);
}

}  // namespace

Tensor meta::gather(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                    bool /*sparse_grad*/) {
  const int64_t wrapped = maybe_wrap_dim(dim, self.dim());
  Tensor result =
      common::structured_output("gather", out, index.sizes(), self.scalar_type(), self.device());
  scatter_gather_dtype_check("gather", self, index, nullptr);
  if (index.numel() != 0) common::gather_shape_check(self, wrapped, index);
  return result;
}

Tensor meta::scatter_src(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                         const Tensor& src) {
  return scatter_meta("scatter", out, self, dim, index, &src);
}

Tensor meta::scatter_value(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                           const Scalar& /*value*/) {
  return scatter_meta("scatter", out, self, dim, index, nullptr);
}

Tensor meta::scatter_reduce(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                            const Tensor& src, std::string_view reduce) {
  Tensor result = scatter_meta("scatter", out, self, dim, index, &src);
  common::scatter_reduce_of(reduce);
  return result;
}

Tensor meta::scatter_value_reduce(const Tensor& out, const Tensor& self, int64_t dim,
                                  const Tensor& index, const Scalar& /*value*/,
                                  std::string_view reduce) {
  Tensor result = scatter_meta("scatter", out, self, dim, index, nullptr);
  common::scatter_reduce_of(reduce);
  return result;
}

Tensor meta::scatter_add(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                         const Tensor& src) {
  return scatter_meta("scatter", out, self, dim, index, &src);
}

Tensor meta::scatter_reduce_two(const Tensor& out, const Tensor& self, int64_t dim,
                                const Tensor& index, const Tensor& src, std::string_view reduce,
                                bool /*include_self*/) {
  Tensor result = scatter_meta("scatter", out, self, dim, index, &src);
  const common::ScatterReduce r = common::scatter_reduce_two_of(reduce);
  const ScalarType t = self.scalar_type();
  if (is_complex(t) && r == common::ScatterReduce::kMax) {
    common::throw_not_implemented_for("scatter_gather_tensor_cpu_reduce_amax", t);
  }
  if (is_complex(t) && r == common::ScatterReduce::kMin) {
    common::throw_not_implemented_for("scatter_gather_tensor_cpu_reduce_amin", t);
  }
  return result;
}

Tensor meta::index_add(const Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                       const Tensor& source, const Scalar& /*alpha*/) {
  dim = maybe_wrap_dim(dim, self.dim());
  common::index_add_check(self, dim, index, source);
  return like_self("index_add", out, self);
}

}  // namespace opd
