#pragma once

// Conversion between unboxed C++ kernel signatures and the boxed Stack calling convention, and
// the schema a C++ signature implies. Used by KernelFunction; kernel authors do not need it.

#include <array>
#include <complex>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <utility>
#include <vector>

#include "opd/device.h"
#include "opd/dispatch_key_set.h"
#include "opd/export.h"
#include "opd/ivalue.h"
#include "opd/layout.h"
#include "opd/scalar.h"
#include "opd/scalar_type.h"
#include "opd/tensor.h"

namespace opd {

class OperatorHandle;
class OperatorKernel;
using BoxedKernelFn = void (*)(OperatorKernel*, const OperatorHandle&, DispatchKeySet, Stack*);

// A kernel's C++ signature, Ret(Args...) without a leading DispatchKeySet. Two kernels of one
// operator must agree on it; typed<Sig>() checks it.
class OPD_API CppSignature {
 public:
  template <class Sig>
  static CppSignature make() {
    return CppSignature(typeid(Sig));
  }
  std::string name() const;  // demangled
  bool operator==(const CppSignature& o) const { return type_ == o.type_; }

 private:
  explicit CppSignature(std::type_index t) : type_(t) {}
  std::type_index type_;
};

namespace detail {

// ---- Callable introspection ----------------------------------------------------------------

template <class Sig>
struct StripKeys {
  using type = Sig;
  static constexpr bool takes_keys = false;
};
template <class Ret, class... Args>
struct StripKeys<Ret(DispatchKeySet, Args...)> {
  using type = Ret(Args...);
  static constexpr bool takes_keys = true;
};

template <class T>
struct FunctionSignature;
template <class Ret, class... Args>
struct FunctionSignature<Ret (*)(Args...)> {
  using type = Ret(Args...);
};
template <class Ret, class... Args>
struct FunctionSignature<Ret(Args...)> {
  using type = Ret(Args...);
};
template <class C, class Ret, class... Args>
struct FunctionSignature<Ret (C::*)(Args...)> {
  using type = Ret(Args...);
};
template <class C, class Ret, class... Args>
struct FunctionSignature<Ret (C::*)(Args...) const> {
  using type = Ret(Args...);
};

template <class F, class = void>
struct RawSignature {
  using type = typename FunctionSignature<std::decay_t<F>>::type;
};
template <class F>
struct RawSignature<F, std::void_t<decltype(&std::decay_t<F>::operator())>> {
  using type = typename FunctionSignature<decltype(&std::decay_t<F>::operator())>::type;
};

// Signature: the kernel's C++ signature without the optional leading DispatchKeySet.
template <class F>
struct CallableTraits {
  using Raw = typename RawSignature<F>::type;
  using Signature = typename StripKeys<Raw>::type;
  static constexpr bool takes_dispatch_key_set = StripKeys<Raw>::takes_keys;
};

// ---- Per-type boxing -----------------------------------------------------------------------

template <class T>
inline constexpr bool kAlwaysFalse = false;

// Traits<D> for a decayed parameter or return type D:
//   schema_type(): the schema type string ("Tensor", "int[]", "Tensor?")
//   get(IValue&):  a value or reference that binds to a parameter of type D / const D&
//   box(const D&): the IValue
template <class D, class = void>
struct Traits {
  static_assert(kAlwaysFalse<D>, "opdispatch cannot box this C++ type in a kernel signature");
};

#define OPD_BOXING_TRAITS(CppType, SchemaType, Getter)          \
  template <>                                                   \
  struct Traits<CppType> {                                      \
    static std::string schema_type() { return SchemaType; }     \
    static decltype(auto) get(IValue& v) { return v.Getter(); } \
    static IValue box(const CppType& x) { return IValue(x); }   \
  };
OPD_BOXING_TRAITS(Tensor, "Tensor", to_tensor)
OPD_BOXING_TRAITS(int64_t, "int", to_int)
OPD_BOXING_TRAITS(double, "float", to_double)
OPD_BOXING_TRAITS(bool, "bool", to_bool)
OPD_BOXING_TRAITS(std::complex<double>, "complex", to_complex_double)
OPD_BOXING_TRAITS(std::string, "str", to_string_ref)
OPD_BOXING_TRAITS(std::string_view, "str", to_string_ref)
OPD_BOXING_TRAITS(Scalar, "Scalar", to_scalar)
OPD_BOXING_TRAITS(ScalarType, "ScalarType", to_scalar_type)
OPD_BOXING_TRAITS(Layout, "Layout", to_layout)
OPD_BOXING_TRAITS(MemoryFormat, "MemoryFormat", to_memory_format)
OPD_BOXING_TRAITS(Device, "Device", to_device)
OPD_BOXING_TRAITS(Generator, "Generator", to_generator)
OPD_BOXING_TRAITS(std::vector<int64_t>, "int[]", to_int_list)
OPD_BOXING_TRAITS(IntArrayRef, "int[]", to_int_list)
OPD_BOXING_TRAITS(std::span<const int64_t>, "int[]", to_int_list)
OPD_BOXING_TRAITS(std::vector<double>, "float[]", to_double_list)
OPD_BOXING_TRAITS(std::span<const double>, "float[]", to_double_list)
OPD_BOXING_TRAITS(std::vector<bool>, "bool[]", to_bool_list)
OPD_BOXING_TRAITS(std::vector<Tensor>, "Tensor[]", to_tensor_list)
OPD_BOXING_TRAITS(std::span<const Tensor>, "Tensor[]", to_tensor_list)
OPD_BOXING_TRAITS(TensorList, "Tensor[]", to_tensor_list)
OPD_BOXING_TRAITS(std::vector<std::optional<Tensor>>, "Tensor?[]", to_optional_tensor_list)
#undef OPD_BOXING_TRAITS

template <class T>
struct Traits<std::optional<T>> {
  static std::string schema_type() { return Traits<T>::schema_type() + "?"; }
  static std::optional<T> get(IValue& v) {
    if (v.is_none()) return std::nullopt;
    return T(Traits<T>::get(v));
  }
  static IValue box(const std::optional<T>& x) { return x ? Traits<T>::box(*x) : IValue(); }
};

// bool[N] (output_mask): boxed as a bool[] of N elements.
template <size_t N>
struct Traits<std::array<bool, N>> {
  static std::string schema_type() { return "bool[" + std::to_string(N) + "]"; }
  static std::array<bool, N> get(IValue& v) { return v.to<std::array<bool, N>>(); }
  static IValue box(const std::array<bool, N>& x) {
    return IValue(std::vector<bool>(x.begin(), x.end()));
  }
};

template <>
struct Traits<OptionalIntArrayRef> {
  static std::string schema_type() { return "int[]?"; }
  static OptionalIntArrayRef get(IValue& v) {
    if (v.is_none()) return std::nullopt;
    return IntArrayRef(v.to_int_list());
  }
  static IValue box(const OptionalIntArrayRef& x) { return x ? IValue(*x) : IValue(); }
};

template <class P>
using TraitsOf = Traits<std::remove_cvref_t<P>>;

// What a parameter of type P binds to when the call comes from a stack: a reference into the
// stack element for const references and views, a copy for mutable references (in-place and out
// kernels mutate the tensor, not the handle), a value otherwise.
template <class P>
struct Holder {
  using type = std::conditional_t<
      std::is_lvalue_reference_v<P> && !std::is_const_v<std::remove_reference_t<P>>,
      std::remove_cvref_t<P>, decltype(TraitsOf<P>::get(std::declval<IValue&>()))>;
};

// ---- Results ---------------------------------------------------------------------------------

// One result as an IValue. A Tensor the kernel returned by value is moved in (no reference
// count traffic); anything else is boxed from a reference, as a Tensor& result must be: it is
// an argument.
template <class E, class V>
IValue box_result(V&& v) {
  if constexpr (std::is_same_v<E, Tensor>) {
    return IValue(std::move(v));
  } else {
    return TraitsOf<E>::box(v);
  }
}

// A kernel's result as IValues: one per tuple element, or one. `r` is the kernel's Ret.
template <class Ret, class R>
auto box_results(R&& r) {
  using D = std::remove_cvref_t<Ret>;
  if constexpr (requires { std::tuple_size<D>::value; }) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return std::array<IValue, sizeof...(I)>{
          box_result<std::tuple_element_t<I, D>>(std::get<I>(r))...};
    }
    (std::make_index_sequence<std::tuple_size_v<D>>{});
  } else if constexpr (std::is_reference_v<Ret>) {
    return std::array<IValue, 1>{TraitsOf<Ret>::box(r)};
  } else {
    return std::array<IValue, 1>{box_result<Ret>(r)};
  }
}

// Takes a result off the stack: a Tensor is moved out, anything else copied.
template <class T>
std::remove_cvref_t<T> pop_owned(IValue& v) {
  if constexpr (std::is_same_v<std::remove_cvref_t<T>, Tensor>) {
    if (v.is_tensor()) return std::move(v).to_tensor();
  }
  return std::remove_cvref_t<T>(TraitsOf<T>::get(v));
}

// The k-th Tensor& argument, counting from the first (from_end=false) or the last.
template <class... Args>
Tensor& nth_mutable_tensor(size_t k, bool from_end, Args&... args) {
  Tensor* found[sizeof...(Args) + 1] = {};
  size_t n = 0;
  auto visit = [&](auto& a) {
    if constexpr (std::is_same_v<std::remove_reference_t<decltype(a)>, Tensor>) found[n++] = &a;
  };
  (visit(args), ...);
  return *found[from_end ? n - 1 - k : k];
}

template <class T>
inline constexpr bool kIsMutableTensorRef = std::is_same_v<T, Tensor&>;

// Types that refer to memory they do not own.
template <class T>
inline constexpr bool kIsView = false;
template <>
inline constexpr bool kIsView<std::string_view> = true;
template <class T>
inline constexpr bool kIsView<std::span<T>> = true;

[[noreturn]] OPD_API void throw_view_result_from_boxed_kernel(const OperatorHandle& op);

// ---- Calls across the two conventions --------------------------------------------------------

// Boxed caller, unboxed kernel: takes the last sizeof...(Args) stack elements as arguments,
// replaces them with the results.
template <class Ret, class... Args, class Fn>
void call_unboxed_from_boxed(Fn&& fn, const OperatorHandle& op, Stack* stack) {
  constexpr size_t n = sizeof...(Args);
  IValue* base = stack->data() + (stack->size() - n);
  // Outlives the call: a result may refer to a held argument (an in-place kernel returns its
  // Tensor& argument, which is held here as a copy of the handle).
  using Held = std::tuple<typename Holder<Args>::type...>;
  Held held = [&]<size_t... I>(std::index_sequence<I...>) {
    return Held(TraitsOf<Args>::get(base[I])...);
  }
  (std::index_sequence_for<Args...>{});
  auto call = [&]<size_t... I>(std::index_sequence<I...>)->decltype(auto) {
    return fn(static_cast<Args>(std::get<I>(held))...);
  };
  if constexpr (std::is_void_v<Ret>) {
    call(std::index_sequence_for<Args...>{});
    stack->resize(stack->size() - n);
  } else {
    // Box the results before the arguments they may refer to (a Tensor& argument, a
    // std::string_view or span into an argument) leave the stack.
    auto results = box_results<Ret>(call(std::index_sequence_for<Args...>{}));
    constexpr size_t k = std::tuple_size_v<decltype(results)>;
    if constexpr (k <= n) {
      // The results take the first argument slots; the stack only shrinks, so nothing is
      // reallocated and no push is made.
      for (size_t i = 0; i < k; ++i) base[i] = std::move(results[i]);
      stack->resize(stack->size() - (n - k));
    } else {
      stack->resize(stack->size() - n);
      for (IValue& v : results) stack->push_back(std::move(v));
    }
  }
}

// Unboxed caller, boxed-only kernel: boxes the arguments, runs the kernel, unboxes the results.
// A Tensor& result is the first Tensor& argument (in-place kernels return self); a tuple of
// Tensor& is the trailing Tensor& arguments (out= kernels return their outs).
template <class Ret, class... Args>
Ret call_boxed_from_unboxed(BoxedKernelFn boxed, OperatorKernel* functor, const OperatorHandle& op,
                            DispatchKeySet ks, Args... args) {
  Stack stack;
  stack.reserve(sizeof...(Args));
  (stack.push_back(TraitsOf<Args>::box(args)), ...);
  boxed(functor, op, ks, &stack);
  if constexpr (std::is_void_v<Ret>) {
    return;
  } else if constexpr (kIsMutableTensorRef<Ret>) {
    return nth_mutable_tensor(0, false, args...);
  } else if constexpr (requires { std::tuple_size<Ret>::value; }) {
    constexpr size_t k = std::tuple_size_v<Ret>;
    if constexpr (kIsMutableTensorRef<std::tuple_element_t<0, Ret>>) {
      return [&]<size_t... I>(std::index_sequence<I...>) {
        return Ret(nth_mutable_tensor(k - 1 - I, true, args...)...);
      }
      (std::make_index_sequence<k>{});
    } else {
      IValue* base = stack.data() + (stack.size() - k);
      return [&]<size_t... I>(std::index_sequence<I...>) {
        return Ret(pop_owned<std::tuple_element_t<I, Ret>>(base[I])...);
      }
      (std::make_index_sequence<k>{});
    }
  } else if constexpr (kIsView<std::remove_cvref_t<Ret>>) {
    // The result would point into the stack that is about to go away.
    throw_view_result_from_boxed_kernel(op);
  } else {
    return pop_owned<Ret>(stack.back());
  }
}

// ---- Schema inference ------------------------------------------------------------------------

// A boxable type's schema type string: one function per type, shared by every signature.
using SchemaTypeFn = std::string (*)();

enum class InferredReturns { kNone, kOne, kTuple };

// "(T0 _0, T1 _1) -> R _0" from the types' functions. Not a template: each signature
// instantiates only its two arrays of function pointers, where concatenating in the template
// cost a third of the text of every file that registers or calls kernels (generated ops.cpp,
// register_*.cpp, autograd_kernels.cpp) and as much of their compile time.
inline std::string join_inferred_schema(std::span<const SchemaTypeFn> args,
                                        std::span<const SchemaTypeFn> returns,
                                        InferredReturns kind) {
  auto append = [](std::string& out, std::span<const SchemaTypeFn> types) {
    for (size_t i = 0; i < types.size(); ++i) {
      if (i) out += ", ";
      out += types[i]();
      out += " _";
      out += std::to_string(i);
    }
  };
  std::string out = "(";
  append(out, args);
  out += ") -> ";
  switch (kind) {
    case InferredReturns::kNone:
      out += "()";
      break;
    case InferredReturns::kOne:
      append(out, returns);
      break;
    case InferredReturns::kTuple:
      out += "(";
      append(out, returns);
      out += ")";
      break;
  }
  return out;
}

template <class Ret>
struct InferReturns {
  static constexpr InferredReturns kKind = InferredReturns::kOne;
  static constexpr std::array<SchemaTypeFn, 1> kTypes = {&TraitsOf<Ret>::schema_type};
};
template <>
struct InferReturns<void> {
  static constexpr InferredReturns kKind = InferredReturns::kNone;
  static constexpr std::array<SchemaTypeFn, 0> kTypes = {};
};
// Every tuple-like result (what box_results boxes element by element): std::tuple, and
// std::array or std::pair were a kernel to return one.
template <class D, size_t... I>
constexpr std::array<SchemaTypeFn, sizeof...(I)> tuple_schema_types(std::index_sequence<I...>) {
  return {&TraitsOf<std::tuple_element_t<I, D>>::schema_type...};
}
template <class D>
requires requires { std::tuple_size<D>::value; }
struct InferReturns<D> {
  static constexpr InferredReturns kKind = InferredReturns::kTuple;
  static constexpr auto kTypes =
      tuple_schema_types<D>(std::make_index_sequence<std::tuple_size_v<D>>{});
};

template <class Sig>
struct InferSchema;
template <class Ret, class... Args>
struct InferSchema<Ret(Args...)> {
  static std::string str() {
    using R = InferReturns<std::conditional_t<std::is_void_v<Ret>, void, std::remove_cvref_t<Ret>>>;
    static constexpr std::array<SchemaTypeFn, sizeof...(Args)> kArgs = {
        &TraitsOf<Args>::schema_type...};
    return join_inferred_schema(kArgs, R::kTypes, R::kKind);
  }
};

}  // namespace detail

// The schema a C++ kernel signature implies, as text: "(Tensor _0, int _1) -> Tensor _0".
template <class Sig>
std::string infer_schema_string() {
  return detail::InferSchema<Sig>::str();
}

}  // namespace opd
