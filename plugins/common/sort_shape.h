#pragma once

// cumsum/cumprod, sort and topk: the checks, result shapes and dtypes every backend shares, so
// Meta raises what the CPU raises. The structured cumsum.out / cumprod.out meta functions
// (opd::meta::cumsum, cumprod) are defined in sort_shape.cpp.

#include <cstdint>
#include <optional>
#include <vector>

#include "opd/tensor.h"

namespace opd::common {

// The dtype of cumsum/cumprod: `dtype` when given, else out's when there is an `out`, else
// self's, with integral and Bool inputs promoted to Long (PyTorch's cumsum_cumprod_meta).
ScalarType scan_dtype(const Tensor& self, const Tensor& out, std::optional<ScalarType> dtype);

// sort: TypeError "\"sort\" not implemented for 'ComplexFloat'" (every other dtype sorts).
void sort_check(const Tensor& self);

// topk: the sizes of values and indices (self's with `dim`, wrapped, of k), after PyTorch's
// checks: Error "selected index k out of range" for k outside [0, size], and no Half, Bool or
// complex input (TypeError "\"topk_cpu\" not implemented for 'Half'").
std::vector<int64_t> topk_sizes(const Tensor& self, int64_t k, int64_t dim);

// cummax/cummin (`op` names the kernel: "cummax_cpu"): wraps dim; TypeError "\"cummax_cpu\" not
// implemented for 'Half'" for Half and complex inputs. The results have self's sizes.
int64_t cummaxmin_check(const char* op, const Tensor& self, int64_t dim);

}  // namespace opd::common
