#pragma once

// Note [Operator tags]
// What an operator's definition says about it beyond its schema, as PyTorch's torch.Tag (from
// its tags.yaml): `tags:` in native_functions.yaml, Library::def(schema, {Tag::...}) in C++,
// define(..., tags=(opdispatch.Tag.core,)) in Python; read with OperatorHandle::has_tag and
// shown by `opd dump`. The set is closed, as PyTorch's: a tag is a promise that passes (a
// tracer, a graph compiler) act on, so a name that is not one of these is an error where it is
// written. The values cross the plugin boundary: new tags are appended, never reordered.

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace opd {

enum class Tag : uint8_t {
  core,                      // in the core aten operator set
  data_dependent_output,     // the output's values depend on the input's values, not its shape
  dynamic_output_shape,      // the output's shape depends on the input's values
  generated,                 // a generated variant (functional of an in-place operator, say)
  inplace_view,              // modifies the metadata (sizes, strides) of its input in place
  needs_fixed_stride_order,  // its inputs' stride order must be kept by a compiler
  nondeterministic_bitwise,  // results may differ bitwise between runs of the same inputs
  nondeterministic_seeded,   // random, reproducible from the generator's seed
  pointwise,                 // each output element depends on the elements at its index
  pt2_compliant_tag,         // tested to work with PyTorch 2's compiler stack
  view_copy,                 // the copying variant of a view operator
};

inline constexpr std::array<std::string_view, 11> kTagNames = {"core",
                                                               "data_dependent_output",
                                                               "dynamic_output_shape",
                                                               "generated",
                                                               "inplace_view",
                                                               "needs_fixed_stride_order",
                                                               "nondeterministic_bitwise",
                                                               "nondeterministic_seeded",
                                                               "pointwise",
                                                               "pt2_compliant_tag",
                                                               "view_copy"};

constexpr std::string_view to_string(Tag t) { return kTagNames[static_cast<size_t>(t)]; }

// The tag named `name` (PyTorch's spelling), or nullopt.
constexpr std::optional<Tag> tag_from_name(std::string_view name) {
  for (size_t i = 0; i < kTagNames.size(); ++i) {
    if (kTagNames[i] == name) return static_cast<Tag>(i);
  }
  return std::nullopt;
}

// A set of tags, as one word.
class TagSet {
 public:
  constexpr TagSet() = default;
  constexpr TagSet(std::initializer_list<Tag> tags) {
    for (Tag t : tags) add(t);
  }
  static constexpr TagSet from_raw(uint32_t bits) {
    TagSet s;
    s.bits_ = bits;
    return s;
  }
  constexpr void add(Tag t) { bits_ |= uint32_t{1} << static_cast<unsigned>(t); }
  constexpr bool has(Tag t) const { return bits_ >> static_cast<unsigned>(t) & 1; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr uint32_t raw() const { return bits_; }
  constexpr bool operator==(const TagSet&) const = default;
  // The tags in the enum's order.
  std::vector<Tag> list() const {
    std::vector<Tag> out;
    for (size_t i = 0; i < kTagNames.size(); ++i) {
      if (has(static_cast<Tag>(i))) out.push_back(static_cast<Tag>(i));
    }
    return out;
  }

 private:
  uint32_t bits_ = 0;
};
// "inplace_view, pointwise": the tags in the enum's order.
inline std::string to_string(TagSet tags) {
  std::string out;
  for (Tag t : tags.list()) {
    if (!out.empty()) out += ", ";
    out += to_string(t);
  }
  return out;
}

static_assert(kTagNames.size() <= 32, "a TagSet holds 32 tags");
static_assert(sizeof(TagSet) == 4, "TagSet crosses the plugin boundary by value");

}  // namespace opd
