#pragma once

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <complex>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "opd/device.h"
#include "opd/error.h"
#include "opd/export.h"
#include "opd/generator.h"
#include "opd/layout.h"
#include "opd/scalar.h"
#include "opd/scalar_type.h"
#include "opd/storage.h"
#include "opd/tensor.h"

namespace opd {

class IValue;
// The boxed calling convention: arguments are pushed in schema order, a kernel pops them and
// pushes its results.
using Stack = std::vector<IValue>;

namespace detail {

// The shared, immutable heap part of an IValue holding a string or a list. Not polymorphic on
// purpose: the IValue's tag says what it holds and the code that frees it is in libopd_core.so
// (free_ivalue_heap), so a value a plugin made can outlive the plugin.
struct IValueHeap {
  std::atomic<size_t> refcount{1};
};
template <class T>
struct IValueHeapOf final : IValueHeap {
  explicit IValueHeapOf(T v) : value(std::move(v)) {}
  T value;
};

// What a Capsule holds: an object the schema language cannot describe (a custom autograd
// Function's backward, opd/autograd_function.h), shared, and the kind it was made as, checked
// whenever it is read, since the object's type is erased.
struct CapsuleValue {
  std::string kind;
  std::shared_ptr<void> object;
};

template <class T>
struct IValueTo;

template <class T>
concept NotChar = !std::same_as<std::remove_cv_t<T>, char>;

}  // namespace detail

// A value of any type a schema can give an argument or a result, tagged with its type.
//
// Representation: a tag and a 16-byte payload. Numbers, enums and devices are stored inline;
// a Tensor or Storage is stored as its handle; strings and lists live in a reference-counted,
// immutable heap block shared by copies, so copying any IValue is O(1). Moving never touches a
// reference count and leaves the source None.
//
// A Scalar has no tag of its own: it is stored as an int, float, bool or complex, as in PyTorch;
// is_scalar()/to_scalar() see it. An std::optional<T> is stored as None or as T.
//
// Accessors named to_xxx() throw TypeError "Expected Tensor but got int" on another tag. Those
// returning references (to_tensor(), to_string_ref(), the lists) point into the value, or into
// the heap block it shares: they stay valid while some IValue holding it lives, which lets a
// kernel take an IntArrayRef or std::span<const Tensor> straight from a Stack element.
//
// Thread-safety: as a std::string or a Tensor; the shared heap blocks are never written after
// construction, so copies of one IValue may be used from different threads.
class OPD_API IValue {
 public:
  // Trivial payloads first, then handles, then heap blocks (the helpers rely on the order).
  enum class Tag : uint8_t {
    None,
    Int,
    Double,
    Bool,
    ComplexDouble,
    ScalarType,
    Layout,
    MemoryFormat,
    Device,
    Tensor,
    Storage,
    String,
    IntList,
    DoubleList,
    BoolList,
    TensorList,
    OptionalTensorList,
    GenericList,  // std::vector<IValue>: lists of any other element type (str[], Scalar[], int?[])
    Tuple,        // std::vector<IValue>
    Capsule,      // detail::CapsuleValue (since ABI 3.1)
  };

  IValue() noexcept : tag_(Tag::None) {}
  IValue(std::nullopt_t) noexcept : IValue() {}
  IValue(Tensor t) noexcept : tag_(Tag::Tensor) { new (&payload_.as_tensor) Tensor(std::move(t)); }
  IValue(Storage s) noexcept : tag_(Tag::Storage) {
    new (&payload_.as_storage) Storage(std::move(s));
  }
  IValue(bool b) noexcept : tag_(Tag::Bool) { payload_.u.as_bool = b; }
  // Any integer type but bool. Throws ValueError for an unsigned value above INT64_MAX.
  template <detail::NonBoolIntegral T>
  IValue(T v) : tag_(Tag::Int) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t)) {
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) throw_int_overflow(v);
    }
    payload_.u.as_int = static_cast<int64_t>(v);
  }
  template <std::floating_point T>
  IValue(T d) noexcept : tag_(Tag::Double) {
    payload_.u.as_double = static_cast<double>(d);
  }
  template <std::floating_point T>
  IValue(std::complex<T> z) noexcept : tag_(Tag::ComplexDouble) {
    payload_.u.as_complex = {static_cast<double>(z.real()), static_cast<double>(z.imag())};
  }
  // Int, Double, Bool or ComplexDouble, after the Scalar's own type.
  IValue(const Scalar& s) noexcept;
  IValue(const char* s) : IValue(std::string(s)) {}
  IValue(std::string s) : tag_(Tag::String) { set_heap(std::move(s)); }
  IValue(std::string_view s) : IValue(std::string(s)) {}
  IValue(ScalarType t) noexcept : tag_(Tag::ScalarType) { payload_.u.as_scalar_type = t; }
  IValue(Layout l) noexcept : tag_(Tag::Layout) { payload_.u.as_layout = l; }
  IValue(MemoryFormat m) noexcept : tag_(Tag::MemoryFormat) { payload_.u.as_memory_format = m; }
  IValue(Device d) noexcept : tag_(Tag::Device) { payload_.u.as_device = d; }
  // A Capsule of kind "Generator" sharing the generator's state (Note [Generator objects]).
  IValue(const Generator& g) : IValue(make_capsule(kGeneratorKind, g.state())) {}
  IValue(std::vector<int64_t> v) : tag_(Tag::IntList) { set_heap(std::move(v)); }
  IValue(IntArrayRef v) : IValue(std::vector<int64_t>(v.begin(), v.end())) {}
  IValue(std::vector<double> v) : tag_(Tag::DoubleList) { set_heap(std::move(v)); }
  IValue(std::span<const double> v) : IValue(std::vector<double>(v.begin(), v.end())) {}
  IValue(std::vector<bool> v) : tag_(Tag::BoolList) { set_heap(std::move(v)); }
  IValue(std::vector<Tensor> v) : tag_(Tag::TensorList) { set_heap(std::move(v)); }
  IValue(std::span<const Tensor> v) : IValue(std::vector<Tensor>(v.begin(), v.end())) {}
  IValue(std::vector<std::optional<Tensor>> v) : tag_(Tag::OptionalTensorList) {
    set_heap(std::move(v));
  }
  // None, or the contained value.
  template <class T>
  IValue(std::optional<T> v) : IValue() {
    if (v.has_value()) *this = IValue(std::move(*v));
  }
  // Vectors of other element types: integers and floating types become int[] and float[];
  // anything else (std::string, Scalar, std::optional<int64_t>, IValue...) a GenericList.
  template <class T>
  IValue(const std::vector<T>& v) : IValue() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      *this = IValue(std::vector<int64_t>(v.begin(), v.end()));
    } else if constexpr (std::is_floating_point_v<T>) {
      *this = IValue(std::vector<double>(v.begin(), v.end()));
    } else {
      std::vector<IValue> items;
      items.reserve(v.size());
      for (const T& x : v) items.emplace_back(x);
      *this = make_generic_list(std::move(items));
    }
  }
  template <class... Ts>
  IValue(const std::tuple<Ts...>& t) : IValue() {
    *this = make_tuple(
        std::apply([](const auto&... x) { return std::vector<IValue>{IValue(x)...}; }, t));
  }
  // A pointer would otherwise become a bool; nullptr would become a null string.
  template <detail::NotChar T>
  IValue(T*) = delete;
  IValue(std::nullptr_t) = delete;

  static IValue make_generic_list(std::vector<IValue> items) {
    IValue v;
    v.tag_ = Tag::GenericList;
    v.set_heap(std::move(items));
    return v;
  }
  static IValue make_tuple(std::vector<IValue> items) {
    IValue v;
    v.tag_ = Tag::Tuple;
    v.set_heap(std::move(items));
    return v;
  }
  // A `Capsule` (PyTorch's name for the type): `object`, read back by to_capsule(kind). The
  // object's last reference may go in any thread and after its maker is unloaded: make it with
  // opd::allocate_plugin_shared from a plugin (opd/plugin_object.h).
  static IValue make_capsule(std::string kind, std::shared_ptr<void> object) {
    IValue v;
    v.tag_ = Tag::Capsule;
    v.set_heap(detail::CapsuleValue{std::move(kind), std::move(object)});
    return v;
  }

  IValue(const IValue& o) noexcept : tag_(o.tag_) { copy_payload_from(o); }
  IValue(IValue&& o) noexcept : tag_(o.tag_) { move_payload_from(o); }
  IValue& operator=(const IValue& o) noexcept {
    if (this != &o) *this = IValue(o);
    return *this;
  }
  IValue& operator=(IValue&& o) noexcept {
    if (this != &o) {
      destroy();
      tag_ = o.tag_;
      move_payload_from(o);
    }
    return *this;
  }
  ~IValue() { destroy(); }
  void swap(IValue& o) noexcept {
    IValue tmp(std::move(o));
    o = std::move(*this);
    *this = std::move(tmp);
  }

  Tag tag() const noexcept { return tag_; }
  // The type's name as schemas spell it: "Tensor", "int", "float", "bool", "complex", "str",
  // "ScalarType", "Layout", "MemoryFormat", "Device", "Storage", "int[]", "float[]", "bool[]",
  // "Tensor[]", "Tensor?[]", "List", "Tuple", "Capsule", "None".
  const char* tag_name() const noexcept { return tag_name(tag_); }
  static const char* tag_name(Tag t) noexcept;

  bool is_none() const noexcept { return tag_ == Tag::None; }
  bool is_tensor() const noexcept { return tag_ == Tag::Tensor; }
  bool is_storage() const noexcept { return tag_ == Tag::Storage; }
  bool is_int() const noexcept { return tag_ == Tag::Int; }
  bool is_double() const noexcept { return tag_ == Tag::Double; }
  bool is_bool() const noexcept { return tag_ == Tag::Bool; }
  bool is_complex_double() const noexcept { return tag_ == Tag::ComplexDouble; }
  // Int, Double, Bool or ComplexDouble: what a `Scalar` argument accepts.
  bool is_scalar() const noexcept { return tag_ >= Tag::Int && tag_ <= Tag::ComplexDouble; }
  bool is_string() const noexcept { return tag_ == Tag::String; }
  bool is_scalar_type() const noexcept { return tag_ == Tag::ScalarType; }
  bool is_layout() const noexcept { return tag_ == Tag::Layout; }
  bool is_memory_format() const noexcept { return tag_ == Tag::MemoryFormat; }
  bool is_device() const noexcept { return tag_ == Tag::Device; }
  bool is_int_list() const noexcept { return tag_ == Tag::IntList; }
  bool is_double_list() const noexcept { return tag_ == Tag::DoubleList; }
  bool is_bool_list() const noexcept { return tag_ == Tag::BoolList; }
  bool is_tensor_list() const noexcept { return tag_ == Tag::TensorList; }
  bool is_optional_tensor_list() const noexcept { return tag_ == Tag::OptionalTensorList; }
  bool is_generic_list() const noexcept { return tag_ == Tag::GenericList; }
  bool is_tuple() const noexcept { return tag_ == Tag::Tuple; }
  bool is_capsule() const noexcept { return tag_ == Tag::Capsule; }

  const Tensor& to_tensor() const& {
    expect(Tag::Tensor);
    return payload_.as_tensor;
  }
  // Moves the tensor out; the IValue keeps the tag and an undefined Tensor.
  Tensor to_tensor() && {
    expect(Tag::Tensor);
    return std::move(payload_.as_tensor);
  }
  const Storage& to_storage() const& {
    expect(Tag::Storage);
    return payload_.as_storage;
  }
  int64_t to_int() const {
    expect(Tag::Int);
    return payload_.u.as_int;
  }
  double to_double() const {
    expect(Tag::Double);
    return payload_.u.as_double;
  }
  bool to_bool() const {
    expect(Tag::Bool);
    return payload_.u.as_bool;
  }
  std::complex<double> to_complex_double() const {
    expect(Tag::ComplexDouble);
    return {payload_.u.as_complex.re, payload_.u.as_complex.im};
  }
  // Throws TypeError "Expected Scalar but got str" unless is_scalar().
  Scalar to_scalar() const;
  const std::string& to_string_ref() const& { return heap<std::string>(Tag::String); }
  std::string_view to_string_view() const& { return heap<std::string>(Tag::String); }
  ScalarType to_scalar_type() const {
    expect(Tag::ScalarType);
    return payload_.u.as_scalar_type;
  }
  Layout to_layout() const {
    expect(Tag::Layout);
    return payload_.u.as_layout;
  }
  MemoryFormat to_memory_format() const {
    expect(Tag::MemoryFormat);
    return payload_.u.as_memory_format;
  }
  Device to_device() const {
    expect(Tag::Device);
    return payload_.u.as_device;
  }
  const std::vector<int64_t>& to_int_list() const& {
    return heap<std::vector<int64_t>>(Tag::IntList);
  }
  const std::vector<double>& to_double_list() const& {
    return heap<std::vector<double>>(Tag::DoubleList);
  }
  const std::vector<bool>& to_bool_list() const& { return heap<std::vector<bool>>(Tag::BoolList); }
  const std::vector<Tensor>& to_tensor_list() const& {
    return heap<std::vector<Tensor>>(Tag::TensorList);
  }
  // From an IValue that is going away (a call's result, as std::move(v).to_tensor_list()): the
  // list moved out when no copy of the IValue shares it, else copied.
  std::vector<Tensor> to_tensor_list() && {
    return take_heap<std::vector<Tensor>>(Tag::TensorList);
  }
  const std::vector<std::optional<Tensor>>& to_optional_tensor_list() const& {
    return heap<std::vector<std::optional<Tensor>>>(Tag::OptionalTensorList);
  }
  const std::vector<IValue>& to_generic_list() const& {
    return heap<std::vector<IValue>>(Tag::GenericList);
  }
  const std::vector<IValue>& to_tuple() const& { return heap<std::vector<IValue>>(Tag::Tuple); }
  // A Capsule's object. Throws TypeError "Expected Capsule but got int", and "Expected a
  // Capsule of kind 'k' but got one of kind 'j'" when it was made as another kind.
  const std::shared_ptr<void>& to_capsule(std::string_view kind) const& {
    const detail::CapsuleValue& c = heap<detail::CapsuleValue>(Tag::Capsule);
    if (c.kind != kind) [[unlikely]]
      throw_wrong_capsule_kind(kind, c.kind);
    return c.object;
  }
  // A `Generator` argument: a Capsule of kind "Generator". Throws TypeError as to_capsule.
  static constexpr const char* kGeneratorKind = "Generator";
  bool is_generator() const { return is_capsule() && capsule_kind() == kGeneratorKind; }
  Generator to_generator() const {
    return Generator(std::static_pointer_cast<GeneratorState>(to_capsule(kGeneratorKind)));
  }
  // The kind a Capsule was made as.
  const std::string& capsule_kind() const& { return heap<detail::CapsuleValue>(Tag::Capsule).kind; }

  // The value as a C++ type, for generic code (kernel wrappers): Tensor, Storage, int64_t,
  // double, bool, std::complex<double>, Scalar, ScalarType, Layout, MemoryFormat, Device,
  // Generator, std::string and std::string_view, the list types above and their spans (IntArrayRef,
  // std::span<const double>, std::span<const Tensor>, std::span<const std::optional<Tensor>>),
  // std::vector<T> of other types (from a GenericList, element by element), std::array<bool, N>
  // (from a bool[] of N elements), std::tuple<...> (from a Tuple), std::optional<T> (None ->
  // nullopt) and IValue itself. References and spans point into this value (see above).
  template <class T>
  decltype(auto) to() const& {
    return detail::IValueTo<T>::get(*this);
  }

  // Python's repr: 1, 2.5, 2.0, True, None, 'str', [1, 2], (1,), float32, strided,
  // contiguous_format, cuda:0, and Tensor::str() for tensors.
  std::string repr() const;

  // Same tag and equal value; tensors and storages compare by identity (is_same), lists
  // element by element. Int 1 and Double 1.0 differ.
  bool operator==(const IValue& o) const;

 private:
  bool is_heap() const noexcept { return tag_ >= Tag::String; }
  void expect(Tag t) const {
    if (tag_ != t) [[unlikely]]
      throw_wrong_tag(tag_name(t), tag_);
  }
  [[noreturn]] static void throw_wrong_tag(const char* expected, Tag found);
  [[noreturn]] static void throw_int_overflow(uint64_t v);
  [[noreturn]] static void throw_wrong_capsule_kind(std::string_view expected,
                                                    std::string_view found);
  static void free_heap(Tag t, detail::IValueHeap* h) noexcept;

  template <class T>
  void set_heap(T value) {
    payload_.u.as_heap = new detail::IValueHeapOf<T>(std::move(value));
  }
  template <class T>
  const T& heap(Tag t) const {
    expect(t);
    return static_cast<const detail::IValueHeapOf<T>*>(payload_.u.as_heap)->value;
  }
  // The heap value, moved out when this IValue holds the only reference to it (nothing else
  // can read the block then), else copied.
  template <class T>
  T take_heap(Tag t) {
    expect(t);
    auto* h = static_cast<detail::IValueHeapOf<T>*>(payload_.u.as_heap);
    if (h->refcount.load(std::memory_order_acquire) == 1) return std::move(h->value);
    return h->value;
  }

  // REQUIRES: tag_ == o.tag_ and this payload holds nothing.
  void copy_payload_from(const IValue& o) noexcept {
    if (tag_ == Tag::Tensor) {
      new (&payload_.as_tensor) Tensor(o.payload_.as_tensor);
    } else if (tag_ == Tag::Storage) {
      new (&payload_.as_storage) Storage(o.payload_.as_storage);
    } else {
      payload_.u = o.payload_.u;
      if (is_heap()) payload_.u.as_heap->refcount.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // REQUIRES: tag_ == o.tag_ and this payload holds nothing. Leaves `o` None.
  void move_payload_from(IValue& o) noexcept {
    if (tag_ == Tag::Tensor) {
      new (&payload_.as_tensor) Tensor(std::move(o.payload_.as_tensor));
      o.payload_.as_tensor.~Tensor();
    } else if (tag_ == Tag::Storage) {
      new (&payload_.as_storage) Storage(std::move(o.payload_.as_storage));
      o.payload_.as_storage.~Storage();
    } else {
      payload_.u = o.payload_.u;
    }
    o.tag_ = Tag::None;
  }
  void destroy() noexcept {
    if (tag_ == Tag::Tensor) {
      payload_.as_tensor.~Tensor();
    } else if (tag_ == Tag::Storage) {
      payload_.as_storage.~Storage();
    } else if (is_heap()) {
      detail::IValueHeap* h = payload_.u.as_heap;
      if (h->refcount.fetch_sub(1, std::memory_order_acq_rel) == 1) free_heap(tag_, h);
    }
    tag_ = Tag::None;
  }

  union Payload {
    // Trivially copyable members; `as_heap` owns one reference on its block.
    union Trivial {
      Trivial() noexcept : as_int(0) {}
      int64_t as_int;
      double as_double;
      bool as_bool;
      struct {
        double re, im;
      } as_complex;
      ScalarType as_scalar_type;
      Layout as_layout;
      MemoryFormat as_memory_format;
      Device as_device;
      detail::IValueHeap* as_heap;
    } u;
    Tensor as_tensor;
    Storage as_storage;
    Payload() noexcept : u() {}
    ~Payload() {}
  } payload_;  // the member named by tag_ is live
  Tag tag_;
};

inline std::ostream& operator<<(std::ostream& out, const IValue& v) { return out << v.repr(); }

namespace detail {

template <class T>
struct IValueTo {
  static_assert(sizeof(T) == 0, "IValue::to<T>: unsupported type");
};

#define OPD_IVALUE_TO(Type, Getter)                                   \
  template <>                                                         \
  struct IValueTo<Type> {                                             \
    static decltype(auto) get(const IValue& v) { return v.Getter(); } \
  };
OPD_IVALUE_TO(Tensor, to_tensor)
OPD_IVALUE_TO(Storage, to_storage)
OPD_IVALUE_TO(int64_t, to_int)
OPD_IVALUE_TO(double, to_double)
OPD_IVALUE_TO(bool, to_bool)
OPD_IVALUE_TO(std::complex<double>, to_complex_double)
OPD_IVALUE_TO(Scalar, to_scalar)
OPD_IVALUE_TO(std::string, to_string_ref)
OPD_IVALUE_TO(std::string_view, to_string_view)
OPD_IVALUE_TO(ScalarType, to_scalar_type)
OPD_IVALUE_TO(Layout, to_layout)
OPD_IVALUE_TO(MemoryFormat, to_memory_format)
OPD_IVALUE_TO(Device, to_device)
OPD_IVALUE_TO(Generator, to_generator)
OPD_IVALUE_TO(std::vector<int64_t>, to_int_list)
OPD_IVALUE_TO(std::vector<double>, to_double_list)
OPD_IVALUE_TO(std::vector<bool>, to_bool_list)
OPD_IVALUE_TO(std::vector<Tensor>, to_tensor_list)
OPD_IVALUE_TO(std::vector<std::optional<Tensor>>, to_optional_tensor_list)
OPD_IVALUE_TO(std::vector<IValue>, to_generic_list)
#undef OPD_IVALUE_TO

template <class E>
struct IValueTo<std::span<const E>> {
  static std::span<const E> get(const IValue& v) { return IValueTo<std::vector<E>>::get(v); }
};
template <class E>
struct IValueTo<ArrayRef<E>> {
  static ArrayRef<E> get(const IValue& v) { return IValueTo<std::vector<E>>::get(v); }
};
template <>
struct IValueTo<IValue> {
  static const IValue& get(const IValue& v) { return v; }
};
template <class T>
struct IValueTo<std::optional<T>> {
  using Value = std::remove_cvref_t<decltype(IValueTo<T>::get(std::declval<const IValue&>()))>;
  static std::optional<Value> get(const IValue& v) {
    if (v.is_none()) return std::nullopt;
    return IValueTo<T>::get(v);
  }
};
template <class T>
struct IValueTo<std::vector<T>> {
  static std::vector<T> get(const IValue& v) {
    const std::vector<IValue>& items = v.to_generic_list();
    std::vector<T> out;
    out.reserve(items.size());
    for (const IValue& x : items) out.push_back(T(x.to<T>()));
    return out;
  }
};
template <size_t N>
struct IValueTo<std::array<bool, N>> {
  static std::array<bool, N> get(const IValue& v) {
    const std::vector<bool>& items = v.to_bool_list();
    OPD_CHECK_T(TypeError, items.size() == N, "Expected bool[{}] but got a bool[] of {} elements",
                N, items.size());
    std::array<bool, N> out{};
    for (size_t i = 0; i < N; ++i) out[i] = items[i];
    return out;
  }
};
template <class... Ts>
struct IValueTo<std::tuple<Ts...>> {
  static std::tuple<Ts...> get(const IValue& v) {
    const std::vector<IValue>& items = v.to_tuple();
    OPD_CHECK_T(TypeError, items.size() == sizeof...(Ts),
                "Expected a tuple of {} elements but got one of {}", sizeof...(Ts), items.size());
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return std::tuple<Ts...>(Ts(items[I].to<Ts>())...);
    }
    (std::index_sequence_for<Ts...>{});
  }
};

}  // namespace detail

}  // namespace opd

template <>
struct fmt::formatter<opd::IValue> : fmt::formatter<std::string_view> {
  template <class Ctx>
  auto format(const opd::IValue& v, Ctx& ctx) const {
    return fmt::formatter<std::string_view>::format(v.repr(), ctx);
  }
};
