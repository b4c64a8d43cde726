#pragma once

// Note [Operator handles for plugins]
// What a plugin holds of an operator it has no generated declaration for (another plugin's, or a
// vendor's): found by name, called boxed, and described. Every member is a call into
// libopd_core.so, so the operator table's layout and the reclaimer's bookkeeping stay the core's
// own and can change without breaking a plugin. A plugin calls the aten operators through the
// generated functions of opd/ops.h instead (opd::add, opd::redispatch::add_Tensor), which are
// just as much one exported call each.
//
// Host programs get the unboxed fast path on top of this class: typed<Sig>() and
// TypedOperatorHandle<Sig> are defined by opd/dispatcher.h, which plugins cannot include.

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "opd/boxing.h"
#include "opd/dispatch_key.h"
#include "opd/dispatch_key_set.h"
#include "opd/export.h"
#include "opd/ivalue.h"
#include "opd/operator_name.h"
#include "opd/tag.h"

namespace opd {

class FunctionSchema;  // opd/function_schema.h
class OperatorEntry;   // the core's record of an operator
template <class Sig>
class TypedOperatorHandle;  // opd/dispatcher.h

// A reference to an operator. Cheap to copy. Valid while the operator has at least one
// registration; using it after its last registration is gone is undefined, as in PyTorch.
class OPD_API OperatorHandle {
 public:
  explicit OperatorHandle(OperatorEntry* entry) : entry_(entry) {}

  const OperatorName& operator_name() const;
  bool has_schema() const;
  // Read through opd/function_schema.h (host side).
  const FunctionSchema& schema() const;
  // The schema as text, "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor".
  std::string schema_string() const;
  std::string debug() const;
  // What a boxed kernel needs of the schema to walk its stack: how many arguments and returns
  // it has, and whether it marks argument (return) i as written, Tensor(a!).
  // REQUIRES: has_schema(); i below the count.
  size_t num_arguments() const;
  size_t num_returns() const;
  bool argument_is_written(size_t i) const;
  bool return_is_written(size_t i) const;
  bool has_kernel_for_dispatch_key(DispatchKey k) const;
  // The tags its definition gave (Note [Operator tags]), as PyTorch's hasTag / getTags.
  bool has_tag(Tag tag) const;
  TagSet tags() const;
  std::string dump_state() const;
  std::string dump_computed_table() const;

  // A typed handle for unboxed calls (host programs: defined in opd/dispatcher.h). Throws Error
  // when Sig is not the operator's C++ signature (from its unboxed kernels, else from its
  // schema), naming both. Safe while other threads register: the check reads the kernels under
  // the registration mutex.
  template <class Sig>
  TypedOperatorHandle<Sig> typed() const;

  // Boxed call: the stack holds exactly the schema's arguments; they are replaced by the
  // results. Throws TypeError naming the operator and argument on a count or type mismatch.
  void call_boxed(Stack* stack) const;
  // Boxed call from inside a kernel, dispatching on `keys` (already computed by the caller,
  // usually the kernel's keys minus the one it serves).
  void redispatch_boxed(DispatchKeySet keys, Stack* stack) const;

  // A boxed call with C++ arguments and result: boxes `args`, calls call_boxed, and takes the
  // result off the stack as Ret (void, a value, or a std::tuple of values for several returns).
  // The arguments' types are checked against the schema as call_boxed checks them.
  template <class Ret, class... Args>
  Ret call_as(const Args&... args) const;

  OperatorEntry& entry() const { return *entry_; }
  bool operator==(const OperatorHandle& o) const { return entry_ == o.entry_; }

 protected:
  OperatorEntry* entry_;
};

// The operator `name` ("ns::op") with overload `overload`, if it has a schema.
OPD_API std::optional<OperatorHandle> find_operator(std::string_view name,
                                                    std::string_view overload = "");
// As find_operator; throws Error "Could not find schema for ns::op.overload" (with a hint when
// only implementations exist).
OPD_API OperatorHandle find_operator_or_throw(std::string_view name,
                                              std::string_view overload = "");

namespace detail {
// call_as returns values that own what they hold: a reference or a view (an ArrayRef such as
// IntArrayRef, std::string_view, a span) would point into the call's stack, gone when call_as
// returns.
template <class T>
inline constexpr bool kIsArrayRef = false;
template <class T>
inline constexpr bool kIsArrayRef<ArrayRef<T>> = true;
template <>
inline constexpr bool kIsArrayRef<OptionalIntArrayRef> = true;
template <class T>
inline constexpr bool kCallAsOwns =
    !std::is_reference_v<T> && !kIsView<std::remove_cv_t<T>> && !kIsArrayRef<std::remove_cv_t<T>>;
template <class T>
inline constexpr bool kCallAsResult = kCallAsOwns<T>;
template <class... Ts>
inline constexpr bool kCallAsResult<std::tuple<Ts...>> = (kCallAsOwns<Ts> && ...);
}  // namespace detail

template <class Ret, class... Args>
Ret OperatorHandle::call_as(const Args&... args) const {
  static_assert(detail::kCallAsResult<Ret>,
                "call_as<Ret>: Ret must own its value (no reference, IntArrayRef, string_view "
                "or span): the results are taken off a stack that is gone when call_as returns");
  Stack stack;
  stack.reserve(sizeof...(Args));
  (stack.push_back(detail::TraitsOf<Args>::box(args)), ...);
  call_boxed(&stack);
  if constexpr (std::is_void_v<Ret>) {
    return;
  } else if constexpr (requires { std::tuple_size<Ret>::value; }) {
    constexpr size_t k = std::tuple_size_v<Ret>;
    OPD_CHECK(stack.size() == k, "{}: {} results, expected {}", operator_name().to_string(),
              stack.size(), k);
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return Ret(detail::pop_owned<std::tuple_element_t<I, Ret>>(stack[I])...);
    }
    (std::make_index_sequence<k>{});
  } else {
    OPD_CHECK(stack.size() == 1, "{}: {} results, expected 1", operator_name().to_string(),
              stack.size());
    return detail::pop_owned<Ret>(stack[0]);
  }
}

}  // namespace opd
