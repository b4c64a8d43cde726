#pragma once

// Typed loops over a TensorIterator for kernels that run on the host (PyTorch's cpu_kernel;
// the CPU plugin wraps host_kernel as opd::cpu::cpu_kernel, split across its thread pool).
//
//   host_kernel(iter, [alpha](float a, float b) -> float { return a + alpha * b; }, split);
//
// The lambda's parameter types are the inputs' element types and its return type the output's;
// they must be the iterator's dtypes (an internal assertion checks). Each innermost run takes one
// of three shapes: every operand contiguous, or a contiguous output with each input either
// contiguous or one value repeated (a broadcast scalar), both as plain indexed loops that the
// compiler vectorises at -O3; or any strides, through byte offsets.

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "common/tensor_iterator.h"
#include "common/type_dispatch.h"

namespace opd::common {

namespace detail {

// The return and parameter types of a lambda or function pointer.
template <class F>
struct function_traits : function_traits<decltype(&std::remove_reference_t<F>::operator())> {};
template <class C, class R, class... A>
struct function_traits<R (C::*)(A...) const> {
  using result_type = R;
  using args = std::tuple<std::decay_t<A>...>;
  static constexpr size_t arity = sizeof...(A);
};
template <class C, class R, class... A>
struct function_traits<R (C::*)(A...)> : function_traits<R (C::*)(A...) const> {};

template <class T>
struct Contiguous {
  const T* p;
  T operator[](int64_t i) const { return p[i]; }
};
template <class T>
struct Repeated {
  T v;
  T operator[](int64_t) const { return v; }
};

// out[i] = op(in[i]...) where each input is Contiguous or Repeated, chosen per input at run time.
template <size_t K, class Traits, class Out, class Op, class... Loaders>
inline void indexed_loop(Out* out, int64_t n, const Op& op, char** data, const int64_t* strides,
                         Loaders... in) {
  if constexpr (K == Traits::arity) {
    for (int64_t i = 0; i < n; ++i) out[i] = op(in[i]...);
  } else {
    using T = std::tuple_element_t<K, typename Traits::args>;
    const T* p = reinterpret_cast<const T*>(data[K + 1]);
    if (strides[K + 1] == 0) {
      indexed_loop<K + 1, Traits>(out, n, op, data, strides, in..., Repeated<T>{*p});
    } else {
      indexed_loop<K + 1, Traits>(out, n, op, data, strides, in..., Contiguous<T>{p});
    }
  }
}

template <class Traits, class Out, class Op, size_t... I>
inline void strided_loop(char** data, const int64_t* strides, int64_t n, const Op& op,
                         std::index_sequence<I...>) {
  using Args = typename Traits::args;
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<Out*>(data[0] + i * strides[0]) =
        op(*reinterpret_cast<const std::tuple_element_t<I, Args>*>(data[I + 1] +
                                                                   i * strides[I + 1])...);
  }
}

template <class Traits, size_t... I>
bool dense_or_repeated(const int64_t* strides, std::index_sequence<I...>) {
  using Args = typename Traits::args;
  return strides[0] == sizeof(typename Traits::result_type) &&
         ((strides[I + 1] == 0 ||
           strides[I + 1] == static_cast<int64_t>(sizeof(std::tuple_element_t<I, Args>))) &&
          ...);
}

template <class Traits, size_t... I>
bool dtypes_match(const TensorIterator& iter, std::index_sequence<I...>) {
  using Args = typename Traits::args;
  return iter.ninputs() == static_cast<int>(Traits::arity) &&
         iter.dtype(0) == scalar_type_of<typename Traits::result_type>() &&
         ((iter.dtype(I + 1) == scalar_type_of<std::tuple_element_t<I, Args>>()) && ...);
}

}  // namespace detail

// Runs out = op(inputs...) over every element of `iter`, split by `split` (null: serially),
// then cast_outputs(). REQUIRES: iter is not on Meta; op is safe to call concurrently.
template <class Op>
void host_kernel(const TensorIterator& iter, const Op& op, RangeSplitter split = nullptr) {
  using Traits = detail::function_traits<Op>;
  using Out = typename Traits::result_type;
  constexpr auto inputs = std::make_index_sequence<Traits::arity>{};
  // Without elements the inputs were not converted (see Note [TensorIterator]): nothing to do.
  if (iter.numel() == 0) return;
  OPD_INTERNAL_ASSERT(detail::dtypes_match<Traits>(iter, inputs),
                      "{}: loop types do not match the operands' dtypes", iter.name());
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        if (detail::dense_or_repeated<Traits>(strides, inputs)) {
          detail::indexed_loop<0, Traits>(reinterpret_cast<Out*>(data[0]), n, op, data, strides);
        } else {
          detail::strided_loop<Traits, Out>(data, strides, n, op, inputs);
        }
      },
      split);
  iter.cast_outputs();
}

}  // namespace opd::common
