#include "common/reduction.h"

#include <fmt/format.h>

#include <string>

#include "common/output.h"
#include "common/type_promotion.h"
#include "opd/native/meta_functions.h"

namespace opd::common {

DimMask make_dim_mask(OptionalIntArrayRef dims, int64_t ndim) {
  OPD_CHECK(ndim <= 64, "only tensors with up to 64 dims are supported");
  DimMask mask;
  if (!dims || dims->empty()) {
    for (int64_t d = 0; d < ndim; ++d) mask.set(d);
    return mask;
  }
  for (int64_t dim : *dims) {
    const int64_t d = maybe_wrap_dim(dim, ndim);
    OPD_CHECK(!mask.test(d), "dim {} appears multiple times in the list of dims", d);
    mask.set(d);
  }
  return mask;
}

std::vector<int64_t> reduced_sizes(IntArrayRef sizes, const DimMask& mask, bool keepdim) {
  std::vector<int64_t> out;
  out.reserve(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!mask.test(d))
      out.push_back(sizes[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

namespace {

ReductionMeta make_meta(const Tensor& self, const DimMask& mask, bool keepdim, ScalarType dtype) {
  return {mask, reduced_sizes(self.sizes(), mask, keepdim), dtype};
}

// PyTorch's get_dtype_from_self(self, dtype, promote_integers=true).
ScalarType sum_dtype(ScalarType self, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(self, /*include_bool=*/true) ? kLong : self;
}

// PyTorch's zero_numel_check_dims for one dim (as given, before wrapping), for an empty input.
void check_nonzero_size(const char* op, const Tensor& self, int64_t dim) {
  if (self.dim() == 0) {
    OPD_CHECK_T(IndexError, dim == 0 || dim == -1,
                "{}: Expected reduction dim -1 or 0 for scalar but got {}", op, dim);
  } else {
    OPD_CHECK_T(IndexError, self.size(dim) != 0,
                "{}: Expected reduction dim {} to have non-zero size.", op, dim);
  }
}

void check_not_complex_for(std::string_view op, ScalarType t) {
  OPD_CHECK_T(TypeError, !is_complex(t), "\"{}\" not implemented for '{}'", op, t);
}

}  // namespace

ReductionMeta sum_meta(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                       std::optional<ScalarType> dtype) {
  DimMask mask = make_dim_mask(dim, self.dim());
  return make_meta(self, mask, keepdim, sum_dtype(self.scalar_type(), dtype));
}

ReductionMeta mean_meta(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                        std::optional<ScalarType> dtype) {
  const ScalarType out = sum_dtype(self.scalar_type(), dtype);
  OPD_CHECK(is_floating_point(out) || is_complex(out),
            "mean(): could not infer output dtype. {} dtype must be either a floating point or "
            "complex dtype. Got: {}",
            dtype ? "Optional" : "Input", dtype ? *dtype : self.scalar_type());
  DimMask mask = make_dim_mask(dim, self.dim());
  return make_meta(self, mask, keepdim, out);
}

ReductionMeta amax_meta(std::string_view op, const Tensor& self, IntArrayRef dim, bool keepdim) {
  const std::string name = fmt::format("{}()", op);
  if (self.numel() == 0) {
    OPD_CHECK(!dim.empty(),
              "{}: Expected reduction dim to be specified for input.numel() == 0. Specify the "
              "reduction dim with the 'dim' argument.",
              name);
    for (int64_t d : dim) check_nonzero_size(name.c_str(), self, d);
  }
  check_not_complex_for(op, self.scalar_type());
  DimMask mask = make_dim_mask(dim, self.dim());
  return make_meta(self, mask, keepdim, self.scalar_type());
}

ReductionMeta argmax_meta(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  DimMask mask;
  if (dim) {
    const int64_t d = maybe_wrap_dim(*dim, self.dim());
    check_nonzero_size("argmax()", self, d);
    mask = make_dim_mask(IntArrayRef(&d, 1), self.dim());
  } else {
    OPD_CHECK_T(IndexError, self.numel() != 0,
                "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
    mask = make_dim_mask(std::nullopt, self.dim());
  }
  const ScalarType t = self.scalar_type();
  OPD_CHECK_T(TypeError, t != kBool && !is_complex(t), "\"argmax\" not implemented for '{}'", t);
  // Without a dim, keepdim keeps every dim as 1 (PyTorch's resize_reduction over all dims).
  return make_meta(self, mask, keepdim, kLong);
}

ReductionMeta max_dim_meta(const Tensor& self, int64_t dim, bool keepdim) {
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  if (self.numel() == 0) check_nonzero_size("max()", self, d);
  OPD_CHECK(!is_complex(self.scalar_type()), "max(): does not support complex input");
  DimMask mask = make_dim_mask(IntArrayRef(&d, 1), self.dim());
  return make_meta(self, mask, keepdim, self.scalar_type());
}

ReductionPlan make_reduction_plan(IntArrayRef sizes, IntArrayRef strides, const DimMask& mask) {
  OPD_INTERNAL_ASSERT(sizes.size() == strides.size() && sizes.size() <= 64);
  ReductionPlan plan;
  // Appends one dim to a list, merging it into the previous one when they walk as one.
  auto push = [](std::vector<int64_t>& sz, std::vector<int64_t>& st, int64_t size, int64_t stride) {
    if (!sz.empty() && st.back() == stride * size) {
      sz.back() *= size;
      st.back() = stride;
    } else {
      sz.push_back(size);
      st.push_back(stride);
    }
  };
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (mask.test(d)) {
      plan.reduced_numel *= sizes[d];
      if (sizes[d] != 1) push(plan.reduced_sizes, plan.reduced_strides, sizes[d], strides[d]);
    } else {
      plan.num_outputs *= sizes[d];
      if (sizes[d] != 1) push(plan.kept_sizes, plan.kept_strides, sizes[d], strides[d]);
    }
  }
  return plan;
}

int64_t input_offset(const ReductionPlan& plan, int64_t index) {
  int64_t offset = 0;
  for (size_t d = plan.kept_sizes.size(); d-- > 0;) {
    const int64_t size = plan.kept_sizes[d];
    offset += (index % size) * plan.kept_strides[d];
    index /= size;
  }
  return offset;
}

}  // namespace opd::common

// The structured reductions' meta functions (opd/native/meta_functions.h): PyTorch's, whose
// out= takes its dtype from `out` when no dtype is given.
namespace opd {

namespace {

Tensor output_of(std::string_view op, const Tensor& out, const Tensor& self,
                 const common::ReductionMeta& m) {
  return common::structured_output(op, out, m.sizes, m.dtype, self.device());
}

}  // namespace

Tensor meta::sum_IntList(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim,
                         bool keepdim, std::optional<ScalarType> dtype) {
  if (!dtype && out.defined()) dtype = out.scalar_type();
  return output_of("sum", out, self, common::sum_meta(self, dim, keepdim, dtype));
}

Tensor meta::mean(const Tensor& out, const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                  std::optional<ScalarType> dtype) {
  common::ReductionMeta m = common::mean_meta(self, dim, keepdim, dtype);
  if (!dtype && out.defined()) {
    // As PyTorch 1.13's mean.out, which is sum.out then div_: any floating or complex `out`
    // takes the mean (a complex one into a real `out` drops the imaginary part), and the
    // refusal names Float whatever the input's type.
    const ScalarType o = out.scalar_type();
    OPD_CHECK(is_floating_point(o) || is_complex(o),
              "result type Float can't be cast to the desired output type {}", o);
    m.dtype = o;
  }
  return output_of("mean", out, self, m);
}

namespace {

Tensor amax_amin(std::string_view op, const Tensor& out, const Tensor& self, IntArrayRef dim,
                 bool keepdim) {
  OPD_CHECK(!out.defined() || out.scalar_type() == self.scalar_type(),
            "Expected the dtype for input and out to match, but got {} for input's dtype and {} "
            "for out's dtype.",
            self.scalar_type(), out.scalar_type());
  return output_of(op, out, self, common::amax_meta(op, self, dim, keepdim));
}

}  // namespace

Tensor meta::amax(const Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim) {
  return amax_amin("amax", out, self, dim, keepdim);
}

Tensor meta::amin(const Tensor& out, const Tensor& self, IntArrayRef dim, bool keepdim) {
  return amax_amin("amin", out, self, dim, keepdim);
}

Tensor meta::argmax(const Tensor& out, const Tensor& self, std::optional<int64_t> dim,
                    bool keepdim) {
  return output_of("argmax", out, self, common::argmax_meta(self, dim, keepdim));
}

}  // namespace opd
