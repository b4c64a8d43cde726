#include "common/reduction.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <string>

#include "common/output.h"
#include "common/type_dispatch.h"
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
  if (is_complex(t)) throw_not_implemented_for(op, t);
}

// Scalar as c10 prints it in messages: 2 for 2.0, inf, -1.5.
std::string scalar_text(const Scalar& s) {
  const double v = s.to<double>();
  if (std::isfinite(v) && v == std::floor(v) && std::abs(v) < 1e15)
    return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
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
  check_not_complex_for(op == "amax" ? "max_values_cpu" : "min_values_cpu", self.scalar_type());
  DimMask mask = make_dim_mask(dim, self.dim());
  return make_meta(self, mask, keepdim, self.scalar_type());
}

ReductionMeta max_all_meta(std::string_view op, const Tensor& self) {
  OPD_CHECK(self.numel() != 0,
            "{}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
            "reduction dim with the 'dim' argument.",
            op);
  check_not_complex_for(op == "max" ? "max_all" : "min_all", self.scalar_type());
  return make_meta(self, make_dim_mask(std::nullopt, self.dim()), false, self.scalar_type());
}

ReductionMeta argmax_meta(std::string_view op, const Tensor& self, std::optional<int64_t> dim,
                          bool keepdim) {
  const std::string name = fmt::format("{}()", op);
  DimMask mask;
  if (dim) {
    const int64_t d = maybe_wrap_dim(*dim, self.dim());
    check_nonzero_size(name.c_str(), self, d);
    mask = make_dim_mask(IntArrayRef(&d, 1), self.dim());
  } else {
    OPD_CHECK_T(IndexError, self.numel() != 0,
                "{}: Expected reduction dim to be specified for input.numel() == 0.", name);
    mask = make_dim_mask(std::nullopt, self.dim());
  }
  const ScalarType t = self.scalar_type();
  if (t == kBool || is_complex(t)) throw_not_implemented_for(fmt::format("{}_cpu", op), t);
  // Without a dim, keepdim keeps every dim as 1 (PyTorch's resize_reduction over all dims).
  return make_meta(self, mask, keepdim, kLong);
}

ReductionMeta argmax_meta(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return argmax_meta("argmax", self, dim, keepdim);
}

ReductionMeta max_dim_meta(std::string_view op, const Tensor& self, int64_t dim, bool keepdim) {
  const std::string name = fmt::format("{}()", op);
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  if (self.numel() == 0) check_nonzero_size(name.c_str(), self, d);
  OPD_CHECK(!is_complex(self.scalar_type()), "{}: does not support complex input", name);
  DimMask mask = make_dim_mask(IntArrayRef(&d, 1), self.dim());
  return make_meta(self, mask, keepdim, self.scalar_type());
}

ReductionMeta max_dim_meta(const Tensor& self, int64_t dim, bool keepdim) {
  return max_dim_meta("max", self, dim, keepdim);
}

ReductionMeta prod_meta(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                        std::optional<ScalarType> dtype) {
  ReductionMeta m = sum_meta(self, dim, keepdim, dtype);
  if (m.dtype == kHalf || m.dtype == kBFloat16) throw_not_implemented_for("prod_cpu", m.dtype);
  return m;
}

ReductionMeta nansum_meta(const Tensor& self, OptionalIntArrayRef dim, bool keepdim,
                          std::optional<ScalarType> dtype) {
  OPD_CHECK(!is_complex(self.scalar_type()), "nansum does not support complex inputs");
  ReductionMeta m = sum_meta(self, dim, keepdim, dtype);
  // An integer input's nansum is its sum; a floating input reduces in the result's dtype, of
  // which PyTorch's CPU kernel has floating loops only (a NaN has no integer value). Meta
  // refuses it too, as the Meta kernels here refuse what the CPU's do.
  if (!is_integral(self.scalar_type(), /*include_bool=*/true) &&
      is_integral(m.dtype, /*include_bool=*/true)) {
    throw_not_implemented_for("nansum_cpu", m.dtype);
  }
  return m;
}

ReductionMeta count_nonzero_meta(const Tensor& self, IntArrayRef dim) {
  return make_meta(self, make_dim_mask(dim, self.dim()), false, kLong);
}

ReductionMeta all_any_meta(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  DimMask mask;
  if (dim) {
    const int64_t d = maybe_wrap_dim(*dim, self.dim());
    mask = make_dim_mask(IntArrayRef(&d, 1), self.dim());
  } else {
    mask = make_dim_mask(std::nullopt, self.dim());
  }
  return make_meta(self, mask, keepdim, self.scalar_type() == kByte ? kByte : kBool);
}

namespace {

ScalarType real_type(ScalarType t) {
  if (t == kComplexFloat) return kFloat;
  if (t == kComplexDouble) return kDouble;
  return t;
}

}  // namespace

ReductionMeta var_meta(std::string_view op, const Tensor& self, OptionalIntArrayRef dim,
                       bool keepdim) {
  const ScalarType t = self.scalar_type();
  OPD_CHECK(is_floating_point(t) || is_complex(t),
            "{} only support floating point and complex dtypes",
            op == "var" || op == "std" ? "std and var" : op);
  return make_meta(self, make_dim_mask(dim, self.dim()), keepdim, real_type(t));
}

ReductionMeta vector_norm_meta(const Tensor& self, const Scalar& ord, OptionalIntArrayRef dim,
                               bool keepdim, std::optional<ScalarType> dtype) {
  const ScalarType t = self.scalar_type();
  OPD_CHECK(is_floating_point(t) || is_complex(t),
            "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}", t);
  const double p = ord.to<double>();
  if (self.numel() == 0 && (p < 0 || p == std::numeric_limits<double>::infinity())) {
    OPD_CHECK(dim && !dim->empty(),
              "linalg.vector_norm cannot compute the {} norm on an empty tensor because the "
              "operation does not have an identity",
              scalar_text(ord));
    for (int64_t d : *dim) {
      OPD_CHECK(self.size(d) != 0,
                "linalg.vector_norm cannot compute the {} norm on the dimension {}because this "
                "dimension is empty and the operation does not have an identity",
                scalar_text(ord), d);
    }
  }
  if (dtype) {
    OPD_CHECK(is_floating_point(*dtype) || is_complex(*dtype),
              "linalg.vector_norm: dtype should be floating point or complex, but got {}", *dtype);
    OPD_CHECK(is_complex(*dtype) == is_complex(t),
              "linalg.vector_norm: dtype should be {} for {} inputs, but got {}",
              is_complex(t) ? "complex" : "real", is_complex(t) ? "complex" : "real", *dtype);
    OPD_CHECK(promote_types(t, *dtype) == *dtype,
              "linalg.vector_norm: the dtype of the input ({}) should be convertible without "
              "narrowing to the specified dtype ({})",
              t, *dtype);
  }
  return make_meta(self, make_dim_mask(dim, self.dim()), keepdim, real_type(dtype.value_or(t)));
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
  return output_of("argmax", out, self, common::argmax_meta("argmax", self, dim, keepdim));
}

Tensor meta::argmin(const Tensor& out, const Tensor& self, std::optional<int64_t> dim,
                    bool keepdim) {
  return output_of("argmin", out, self, common::argmax_meta("argmin", self, dim, keepdim));
}

Tensor meta::prod_int(const Tensor& out, const Tensor& self, int64_t dim, bool keepdim,
                      std::optional<ScalarType> dtype) {
  if (!dtype && out.defined()) dtype = out.scalar_type();
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  return output_of("prod", out, self, common::prod_meta(self, IntArrayRef(&d, 1), keepdim, dtype));
}

Tensor meta::all(const Tensor& out, const Tensor& self, int64_t dim, bool keepdim) {
  return output_of("all", out, self, common::all_any_meta(self, dim, keepdim));
}

Tensor meta::any(const Tensor& out, const Tensor& self, int64_t dim, bool keepdim) {
  return output_of("any", out, self, common::all_any_meta(self, dim, keepdim));
}

Tensor meta::all_all(const Tensor& out, const Tensor& self) {
  return output_of("all", out, self, common::all_any_meta(self, std::nullopt, false));
}

Tensor meta::any_all(const Tensor& out, const Tensor& self) {
  return output_of("any", out, self, common::all_any_meta(self, std::nullopt, false));
}

Tensor meta::linalg_vector_norm(const Tensor& out, const Tensor& self, const Scalar& ord,
                                OptionalIntArrayRef dim, bool keepdim,
                                std::optional<ScalarType> dtype) {
  return output_of("linalg_vector_norm", out, self,
                   common::vector_norm_meta(self, ord, dim, keepdim, dtype));
}

}  // namespace opd
