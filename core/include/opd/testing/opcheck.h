#pragma once

// opcheck from C++ (issue 33 §1): torch 2.4's torch.library.opcheck over a boxed call, the
// host-side twin of opdispatch.library.opcheck (python/opdispatch/_opcheck.py). Given an
// operator and the stack of one call (exactly the schema's arguments, as call_boxed takes them),
// it checks that the kernels honour the schema, the autograd registration and the Meta kernel:
//
//   OperatorHandle add = find_operator_or_throw("aten::add", "Tensor");
//   opd::testing::opcheck(add, {IValue(x), IValue(y), IValue(1)});     // throws OpCheckError
//
// Each sub-check runs on copies of the stack's tensors (the caller's are never touched), under
// the name and with the texts of the Python one (and so of torch):
//  - "test_schema": an argument not annotated written keeps its bytes, sizes, strides, storage
//    and version counter ("Argument x is not defined as mutable but was mutated"); a result not
//    annotated as an alias of an argument shares no memory with it, one annotated does, and none
//    is the argument object itself unless written; outputs alias each other only as annotated.
//    Beyond the Python check, which the binding hides it from: a result annotated written,
//    `Tensor(a!)` (in-place, out=), is the very argument object (same TensorImpl) it writes.
//    Runs below autograd, as torch's SchemaCheckMode, so that the kernel's own result is seen.
//  - "test_autograd_registration": with an input that requires grad, the operator has a kernel
//    at the inputs' Autograd key, at Autograd or at CompositeImplicitAutograd (the dispatcher's
//    has-kernel queries), not only the autograd fallback.
//  - "test_faketensor": the call on Meta copies of the inputs (same sizes, strides, storage
//    offsets and sharing) agrees with the real one: number of results, sizes, dtype, strides of
//    dimensions longer than one, storage offset, requires_grad, device (meta where the real
//    result is on the inputs' device), and whether a result is an input.
// test_aot_dispatch_static/dynamic are not offered: there is no ahead-of-time compiler here.
// Every check is skipped (a success) when an input is already a Meta tensor, as torch skips
// fake ones. See the Python docstring for where these differ from torch and why.
//
// The namespace is opd::testing, as the issue names it (torch's is torch.testing): code inside
// namespace opd that includes this header and means GoogleTest's `testing::` must write
// `::testing::`. opd/testing.h's helpers stay in opd::test.

#include <exception>
#include <string>
#include <vector>

#include "opd/error.h"
#include "opd/export.h"
#include "opd/ivalue.h"
#include "opd/operator_handle.h"

namespace opd::testing {

// What opcheck throws when a sub-check fails (with raise_exception): "opcheck(op, ...):
// test_schema failed with <the failure> (scroll up for stack trace)". Thrown with
// std::throw_with_nested, so std::rethrow_if_nested(e) gives the failure itself (Python's
// __cause__).
class OPD_API OpCheckError : public Error {
 public:
  using Error::Error;
  ~OpCheckError() override;
};

// test_faketensor: the Meta kernel's result differs from the real kernel's (torch's
// MetadataMismatchError, a RuntimeError).
class OPD_API MetadataMismatchError : public Error {
 public:
  using Error::Error;
  ~MetadataMismatchError() override;
};

struct OpCheckOptions {
  // The sub-checks to run, in this order (any of the three below), or {"ALL"} for all of them.
  // Another name is a ValueError with the Python one's text.
  std::vector<std::string> test_utils{"test_schema", "test_autograd_registration",
                                      "test_faketensor"};
  // Throw OpCheckError at the first failure; otherwise record every failure in the result.
  bool raise_exception = true;
};

// One sub-check's outcome: message "SUCCESS" and no error, or the failure's text and the
// exception itself (Python's result dict holds the exception).
struct OpCheckResult {
  std::string test_util;
  std::string message;
  std::exception_ptr error;
  bool ok() const { return error == nullptr; }
};

// Runs the sub-checks of `options` on one call of `op` with the arguments on `stack` (exactly
// the schema's arguments, defaults included, as call_boxed takes them) and returns one result
// per sub-check, in the order asked. Throws TypeError when the stack does not hold one value per
// argument, ValueError for an unknown sub-check, OpCheckError for a failure (raise_exception).
OPD_API std::vector<OpCheckResult> opcheck(const OperatorHandle& op, const Stack& stack,
                                           const OpCheckOptions& options = {});

}  // namespace opd::testing
