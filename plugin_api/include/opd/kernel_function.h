#pragma once

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "opd/boxing.h"
#include "opd/dispatch_key_set.h"
#include "opd/export.h"
#include "opd/ivalue.h"

namespace opd {

class OperatorHandle;

// A function known at compile time, as a kernel: `m.impl("add.Tensor", OPD_FN(add_Tensor))`.
// The dispatcher then calls one wrapper into which the function is inlined (or tail-called),
// instead of a wrapper that calls a stored function pointer: one indirect call per dispatch
// instead of two (PyTorch's TORCH_FN). Generated registrations use it.
template <auto F>
struct CompileTimeFunction {
  static_assert(std::is_pointer_v<decltype(F)> &&
                    std::is_function_v<std::remove_pointer_t<decltype(F)>>,
                "OPD_FN takes a function");
  static constexpr auto kFunction = F;
};
#define OPD_FN(f) (::opd::CompileTimeFunction<&(f)>())

namespace detail {
template <class T>
inline constexpr bool kIsCompileTimeFunction = false;
template <auto F>
inline constexpr bool kIsCompileTimeFunction<CompileTimeFunction<F>> = true;
}  // namespace detail

// Base of kernel functors. A stateful kernel derives from it (or is wrapped in a subclass) so
// that the dispatcher can own and destroy it.
class OperatorKernel {
 public:
  virtual ~OperatorKernel() = default;
};

// The boxed calling convention: arguments on the stack, results pushed back in their place.
using BoxedKernelFn = void (*)(OperatorKernel* functor, const OperatorHandle& op,
                               DispatchKeySet keys, Stack* stack);

namespace detail {
// The boxed entry of every make_autograd_fallback kernel (it calls the function it was made
// from): its address is how the dispatcher knows one.
OPD_API void autograd_fallback_entry(OperatorKernel* functor, const OperatorHandle& op,
                                     DispatchKeySet keys, Stack* stack);
}  // namespace detail

// A kernel, callable both boxed and unboxed. A kernel written unboxed (function pointer, lambda,
// functor) gets a generated boxing wrapper; one written boxed is called unboxed by boxing the
// arguments. A default-constructed KernelFunction is invalid. Copying shares the functor.
// Thread-safety: immutable after construction.
class OPD_API KernelFunction {
 public:
  KernelFunction() = default;

  // A kernel that is never run: its key is masked out of the operator's key set, so dispatch
  // slides to the next key (see Note [Fallthrough] in operator_entry.cpp).
  static KernelFunction make_fallthrough();
  // `fn(op, keys, stack)`.
  static KernelFunction make_from_boxed_function(BoxedKernelFn fn);
  // A functor with `void operator()(const OperatorHandle&, DispatchKeySet, Stack*)`.
  template <class F>
  static KernelFunction make_from_boxed_functor(std::unique_ptr<F> f);
  // Any callable with an unboxed signature, optionally taking DispatchKeySet first (for kernels
  // that redispatch): a function pointer, a lambda, or a functor with state.
  template <class F>
  static KernelFunction make_from_unboxed_callable(F f);
  // A function known at compile time (OPD_FN): no functor, one indirect call per dispatch.
  template <auto F>
  static KernelFunction make_from_unboxed_function();

  // A backend fallback for the Autograd keys (the autograd plugin's, Note [Autograd fallback] in
  // plugins/autograd/fallback.cpp) with nothing to do when no tensor argument has autograd state
  // and the operator writes no argument: the dispatcher then passes such a call to the key
  // below without calling `fn` (Note [Autograd fallback fast path] in operator_entry.h).
  static KernelFunction make_autograd_fallback(BoxedKernelFn fn);

  bool is_valid() const { return boxed_ != nullptr; }
  bool is_fallthrough() const;
  bool is_autograd_fallback() const { return boxed_ == &detail::autograd_fallback_entry; }
  bool has_unboxed() const { return unboxed_ != nullptr; }

  void call_boxed(const OperatorHandle& op, DispatchKeySet keys, Stack* stack) const {
    boxed_(functor_.get(), op, keys, stack);
  }

  // Unboxed call. REQUIRES: Ret(Args...) is the kernel's C++ signature when it has an unboxed
  // entry (the dispatcher checks this in typed()); a boxed-only kernel is called through a stack.
  template <class Ret, class... Args>
  Ret call(const OperatorHandle& op, DispatchKeySet keys, Args... args) const {
    if (unboxed_) [[likely]] {
      using Fn = Ret(OperatorKernel*, DispatchKeySet, Args...);
      return reinterpret_cast<Fn*>(unboxed_)(functor_.get(), keys, std::forward<Args>(args)...);
    }
    return detail::call_boxed_from_unboxed<Ret, Args...>(boxed_, functor_.get(), op, keys,
                                                         std::forward<Args>(args)...);
  }

  // "fallthrough ", "boxed ", "boxed unboxed ": PyTorch's dumpState().
  std::string dump_state() const;
  // True when both refer to the same code and functor.
  bool same_as(const KernelFunction& o) const {
    return boxed_ == o.boxed_ && unboxed_ == o.unboxed_ && functor_ == o.functor_;
  }
  // The functor, for owners that must know what keeps it alive (plugin lifetime).
  const std::shared_ptr<OperatorKernel>& functor() const { return functor_; }

 private:
  KernelFunction(std::shared_ptr<OperatorKernel> functor, BoxedKernelFn boxed, void* unboxed)
      : functor_(std::move(functor)), boxed_(boxed), unboxed_(unboxed) {}

  std::shared_ptr<OperatorKernel> functor_;
  BoxedKernelFn boxed_ = nullptr;
  void* unboxed_ = nullptr;  // Ret(*)(OperatorKernel*, DispatchKeySet, Args...)
};

namespace detail {

template <class F>
struct BoxedFunctorAdapter {
  static void call(OperatorKernel* f, const OperatorHandle& op, DispatchKeySet ks, Stack* s) {
    (*static_cast<F*>(f))(op, ks, s);
  }
};

// Wraps any unboxed callable so the dispatcher can own it.
template <class F>
struct UnboxedFunctor final : OperatorKernel {
  explicit UnboxedFunctor(F f) : fn(std::move(f)) {}
  F fn;
};

template <class F, class Sig = typename CallableTraits<F>::Signature,
          bool TakesKeys = CallableTraits<F>::takes_dispatch_key_set>
struct UnboxedAdapter;

template <class F, class Ret, class... Args, bool TakesKeys>
struct UnboxedAdapter<F, Ret(Args...), TakesKeys> {
  static Ret unboxed(OperatorKernel* functor, DispatchKeySet ks, Args... args) {
    auto& f = static_cast<UnboxedFunctor<F>*>(functor)->fn;
    if constexpr (TakesKeys) {
      return f(ks, std::forward<Args>(args)...);
    } else {
      return f(std::forward<Args>(args)...);
    }
  }
  static void boxed(OperatorKernel* functor, const OperatorHandle& op, DispatchKeySet ks,
                    Stack* stack) {
    call_unboxed_from_boxed<Ret, Args...>(
        [&](Args... args) -> Ret { return unboxed(functor, ks, std::forward<Args>(args)...); }, op,
        stack);
  }
};

template <auto F, class Sig = typename CallableTraits<decltype(F)>::Signature,
          bool TakesKeys = CallableTraits<decltype(F)>::takes_dispatch_key_set>
struct FunctionAdapter;

template <auto F, class Ret, class... Args, bool TakesKeys>
struct FunctionAdapter<F, Ret(Args...), TakesKeys> {
  static Ret unboxed(OperatorKernel*, DispatchKeySet ks, Args... args) {
    if constexpr (TakesKeys) {
      return F(ks, std::forward<Args>(args)...);
    } else {
      return F(std::forward<Args>(args)...);
    }
  }
  static void boxed(OperatorKernel*, const OperatorHandle& op, DispatchKeySet ks, Stack* stack) {
    call_unboxed_from_boxed<Ret, Args...>(
        [&](Args... args) -> Ret { return unboxed(nullptr, ks, std::forward<Args>(args)...); }, op,
        stack);
  }
};

}  // namespace detail

template <auto F>
KernelFunction KernelFunction::make_from_unboxed_function() {
  using Adapter = detail::FunctionAdapter<F>;
  return KernelFunction(nullptr, &Adapter::boxed, reinterpret_cast<void*>(&Adapter::unboxed));
}

template <class F>
KernelFunction KernelFunction::make_from_boxed_functor(std::unique_ptr<F> f) {
  static_assert(std::is_base_of_v<OperatorKernel, F>, "boxed functors derive from OperatorKernel");
  return KernelFunction(std::shared_ptr<OperatorKernel>(std::move(f)),
                        &detail::BoxedFunctorAdapter<F>::call, nullptr);
}

template <class F>
KernelFunction KernelFunction::make_from_unboxed_callable(F f) {
  using Adapter = detail::UnboxedAdapter<F>;
  return KernelFunction(std::make_shared<detail::UnboxedFunctor<F>>(std::move(f)), &Adapter::boxed,
                        reinterpret_cast<void*>(&Adapter::unboxed));
}

}  // namespace opd
