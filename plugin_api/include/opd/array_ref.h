#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <span>
#include <vector>

namespace opd {

// A read-only view of contiguous values that it does not own (PyTorch's c10::ArrayRef): sizes,
// strides, `int[]` and `Tensor[]` arguments. It is a std::span<const T> that also converts from
// a braced list and a std::vector, so that `opd::ones({2, 3})` and `x.view(shape)` read as in
// ATen. The values must outlive the view; a braced list lives until the end of the full
// expression, which is enough for an argument and never for a variable.
template <class T>
class ArrayRef : public std::span<const T> {
  using Base = std::span<const T>;

 public:
  using Base::Base;
  constexpr ArrayRef() noexcept = default;
  constexpr ArrayRef(Base s) noexcept : Base(s) {}
  constexpr ArrayRef(std::initializer_list<T> values) noexcept
      : Base(values.begin(), values.size()) {}
  ArrayRef(const std::vector<T>& values) noexcept : Base(values.data(), values.size()) {}

  std::vector<T> vec() const { return std::vector<T>(this->begin(), this->end()); }
  bool equals(ArrayRef o) const {
    return std::equal(this->begin(), this->end(), o.begin(), o.end());
  }
  friend bool operator==(ArrayRef a, ArrayRef b) { return a.equals(b); }
};

// An optional list of ints (`int[1]? dim`), as c10::OptionalIntArrayRef: std::optional's own
// converting constructor unwraps a braced list into its elements, so `opd::sum(x, {0}, true)`
// would not compile with std::optional<ArrayRef>. An empty braced list is nullopt, which every
// operator taking such an argument reads as "all dimensions", as it reads [].
class OptionalIntArrayRef : public std::optional<ArrayRef<int64_t>> {
  using Base = std::optional<ArrayRef<int64_t>>;

 public:
  using Base::Base;
  OptionalIntArrayRef() = default;
  OptionalIntArrayRef(const Base& o) : Base(o) {}
  OptionalIntArrayRef(ArrayRef<int64_t> values) : Base(values) {}
  OptionalIntArrayRef(std::initializer_list<int64_t> values) : Base(ArrayRef<int64_t>(values)) {}
  OptionalIntArrayRef(const std::vector<int64_t>& values) : Base(ArrayRef<int64_t>(values)) {}
};

}  // namespace opd
