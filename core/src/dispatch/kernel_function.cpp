#include "opd/kernel_function.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "opd/dispatcher.h"
#include "opd/error.h"

namespace opd {
namespace {

// Normally never called (its key is masked out); see Note [Fallthrough] for the one race in
// which a call reaches it, and why passing the call below its key is the right answer.
void fallthrough_kernel(OperatorKernel*, const OperatorHandle& op, DispatchKeySet ks,
                        Stack* stack) {
  op.redispatch_boxed(ks & keys_below(ks.highest_priority_key()), stack);
}

struct AutogradFallbackFunctor final : OperatorKernel {
  explicit AutogradFallbackFunctor(BoxedKernelFn f) : fn(f) {}
  BoxedKernelFn fn;
};

}  // namespace

namespace detail {
void autograd_fallback_entry(OperatorKernel* functor, const OperatorHandle& op, DispatchKeySet ks,
                             Stack* stack) {
  static_cast<AutogradFallbackFunctor*>(functor)->fn(nullptr, op, ks, stack);
}

void throw_view_result_from_boxed_kernel(const OperatorHandle& op) {
  throw Error(fmt::format(
      "{}: called unboxed with a result type that refers to memory it does not own "
      "(std::string_view or a span), but the kernel is boxed: its result lives on a stack that "
      "is gone when the call returns; call it boxed or return an owning type",
      op.operator_name().to_string()));
}
}  // namespace detail

KernelFunction KernelFunction::make_fallthrough() {
  return KernelFunction(nullptr, &fallthrough_kernel, nullptr);
}

KernelFunction KernelFunction::make_from_boxed_function(BoxedKernelFn fn) {
  OPD_CHECK(fn != nullptr, "make_from_boxed_function: the function is null");
  return KernelFunction(nullptr, fn, nullptr);
}

KernelFunction KernelFunction::make_autograd_fallback(BoxedKernelFn fn) {
  OPD_CHECK(fn != nullptr, "make_autograd_fallback: the function is null");
  return KernelFunction(std::make_shared<AutogradFallbackFunctor>(fn),
                        &detail::autograd_fallback_entry, nullptr);
}

bool KernelFunction::is_fallthrough() const { return boxed_ == &fallthrough_kernel; }

std::string KernelFunction::dump_state() const {
  std::string out;
  if (is_fallthrough()) out += "fallthrough ";
  if (boxed_) out += "boxed ";
  if (unboxed_) out += "unboxed ";
  return out;
}

std::string CppSignature::name() const {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(type_.name(), nullptr, nullptr, &status), &std::free);
  return status == 0 && demangled ? demangled.get() : type_.name();
}

}  // namespace opd
