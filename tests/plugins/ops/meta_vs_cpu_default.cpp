// The schema-driven case generator of the Meta-vs-CPU property test: for an operator without a
// hand-written generator (meta_vs_cpu_cases*.cpp), each argument is drawn from its schema type.
//
// Note [Default case generator]
// The first tensor argument ("self" mostly) sets a shape and a dtype; later tensors broadcast to
// that shape most of the time and share its dtype more often than not, so that most calls are
// valid and the rest exercise the shape and dtype errors. An int named like a dimension is a dim
// of that shape (rarely out of range), an int[] named like dimensions is a list of such dims, and
// other int[] are sizes. Optional arguments are None now and then, and an argument with a default
// keeps it half the time (but a device: Meta's is meta). A tensor named condition or mask is Bool
// most of the time; a Scalar fits a UInt8 self (see Draw::scalar). Strings
// cannot be drawn from a type: kStringChoices lists the values each one accepts (and one it does
// not). out= tensors are drawn as with_out does: mostly empty (resized), now and then of another
// shape or dtype. An in-place form needs nothing more: its self is the first tensor, written.
// Values that only CPU can check (indices in range) need the hand-written generators.

#include <fmt/format.h>

#include <map>
#include <set>

#include "meta_vs_cpu_gen.h"

namespace opd::test::meta_vs_cpu {
namespace {

// Values of str arguments by argument name: the accepted ones, then one that is not.
const std::map<std::string, std::vector<std::string>> kStringChoices = {
    {"rounding_mode", {"trunc", "floor", "floor", "trunc", "bad"}},
    {"approximate", {"none", "tanh", "none", "bad"}},
    {"reduce", {"sum", "prod", "mean", "amax", "amin", "add", "multiply", "bad"}},
    {"equation", {"ij,jk->ik", "ii->i", "i,i->", "ij->ji", "ij"}},
};

bool names_dim(const std::string& name) {
  return name == "dim" || name == "dim0" || name == "dim1" || name == "dim2" || name == "axis" ||
         name == "axis0" || name == "axis1" || name == "source" || name == "destination" ||
         name == "start_dim" || name == "end_dim" || name == "dims" || name == "offset_dim";
}

// The state of one case while its arguments are drawn in schema order.
struct Draw {
  Gen& g;
  bool have_self = false;
  Shape self_shape;
  ScalarType self_dtype = kFloat;

  int64_t rank() const { return static_cast<int64_t>(self_shape.size()); }

  Shape tensor_shape() {
    if (!have_self) return g.shape();
    return g.chance(0.85) ? g.broadcastable_to(self_shape) : g.shape();
  }
  ScalarType tensor_dtype(const std::string& name) {
    if ((name == "condition" || name == "mask") && g.chance(0.85)) return kBool;
    if (!have_self) return g.chance(0.5) ? g.float_dtype() : g.dtype();
    return g.chance(0.6) ? self_dtype : g.dtype();
  }
  Arg tensor(const std::string& name) {
    Shape s = tensor_shape();
    ScalarType dt = tensor_dtype(name);
    if (!have_self) {
      have_self = true;
      self_shape = s;
      self_dtype = dt;
    }
    return g.tensor(s, dt);
  }
  Arg tensors(const std::string& name) {
    Shape s = have_self ? self_shape : g.shape();
    ScalarType dt = have_self ? self_dtype : g.dtype();
    std::vector<Arg> items;
    for (int64_t i = g.integer(g.chance(0.05) ? 0 : 1, 3); i > 0; --i) {
      items.push_back(g.tensor(g.chance(0.9) ? s : g.shape(), g.chance(0.85) ? dt : g.dtype()));
    }
    if (!have_self) {
      have_self = true;
      self_shape = s;
      self_dtype = dt;
    }
    (void)name;
    return g.tensor_list(std::move(items));
  }
  Arg out_tensor() {
    Shape s = g.chance(0.7) ? Shape{0} : g.chance(0.5) ? self_shape : g.shape();
    return g.tensor(s, g.chance(0.6) ? self_dtype : g.dtype());
  }
  Arg integer(const std::string& name) {
    if (names_dim(name)) return g.dim(rank());
    return g.value(IValue(g.chance(0.9) ? g.integer(0, 3) : g.integer(-2, 5)));
  }
  Arg int_list(const std::string& name, std::optional<int64_t> n) {
    if (names_dim(name)) {
      return g.dims(rank());
    }
    Shape xs = n ? Shape(static_cast<size_t>(*n)) : g.shape(0, 3);
    for (int64_t& x : xs) x = g.chance(0.95) ? g.integer(0, 3) : -1;
    return g.int_list(std::move(xs));
  }
  Arg string(const std::string& name) {
    auto it = kStringChoices.find(name);
    return g.value(IValue(it == kStringChoices.end() ? std::string("bad") : g.pick(it->second)));
  }
  // A Scalar; one that fits self's dtype when self is UInt8 (CPU refuses a value that
  // overflows it when it writes it, a check of values that Meta does not make, as in PyTorch).
  Arg scalar() {
    if (have_self && self_dtype == kByte) return g.value(IValue(g.integer(0, 5)));
    return g.scalar();
  }
  Arg real() { return g.value(IValue(static_cast<double>(g.integer(-8, 8)) / 4)); }

  // The value of an argument of type `t`; nullopt when this generator cannot make one.
  std::optional<Arg> of(const Argument& a, const Type& t) {
    const std::string& name = a.name();
    switch (t.kind()) {
      case TypeKind::Tensor:
        return a.is_out() ? out_tensor() : tensor(name);
      case TypeKind::Int:
      case TypeKind::SymInt:
        return integer(name);
      case TypeKind::Float:
        return real();
      case TypeKind::Bool:
        return g.value(IValue(g.chance(0.5)));
      case TypeKind::Scalar:
        return scalar();
      case TypeKind::Str:
        return string(name);
      case TypeKind::ScalarType:
        return g.value(IValue(g.dtype()));
      case TypeKind::Layout:
        return g.value(IValue(Layout::Strided));
      case TypeKind::Device:
        return g.device(false);
      case TypeKind::MemoryFormat:
        return g.memory_format(false);
      case TypeKind::Optional: {
        const Type& inner = *t.contained()[0];
        if (inner.kind() == TypeKind::Device) return g.device(true);
        if (inner.kind() == TypeKind::MemoryFormat) return g.memory_format(true);
        if (inner.kind() == TypeKind::Generator) return g.none();
        if (name == "pin_memory") return g.chance(0.2) ? g.value(IValue(false)) : g.none();
        if (g.chance(0.3)) return g.none();
        return of(a, inner);
      }
      case TypeKind::List: {
        const Type& item = *t.contained()[0];
        if (item.kind() == TypeKind::Tensor) return tensors(name);
        if (item.kind() == TypeKind::Int || item.kind() == TypeKind::SymInt)
          return int_list(name, a.N());
        if (item.kind() == TypeKind::Optional && item.contained()[0]->kind() == TypeKind::Tensor) {
          // Tensor?[] (indices): None or a dim's worth of indices 0, valid for a non-empty dim.
          std::vector<Arg> items;
          for (int64_t i = g.integer(0, std::max<int64_t>(rank(), 1)); i > 0; --i) {
            items.push_back(g.chance(0.4) ? g.none() : g.tensor(g.shape(0, 2), kLong));
          }
          std::vector<std::string> texts;
          for (const Arg& x : items) texts.push_back(x.text);
          return Arg{
              [items](Device d) {
                std::vector<std::optional<Tensor>> ts;
                for (const Arg& x : items) {
                  IValue v = x.make(d);
                  ts.push_back(v.is_none() ? std::nullopt : std::optional<Tensor>(v.to_tensor()));
                }
                return IValue(std::move(ts));
              },
              fmt::format("[{}]", fmt::join(texts, ", "))};
        }
        return std::nullopt;
      }
      default:
        return std::nullopt;
    }
  }
};

}  // namespace

CaseFn default_generator(const FunctionSchema& schema) {
  for (const Argument& a : schema.arguments()) {
    const Type* t = a.type().get();
    if (t->kind() == TypeKind::Optional) t = t->contained()[0].get();
    if (t->kind() == TypeKind::List) t = t->contained()[0].get();
    if (t->kind() == TypeKind::Optional) t = t->contained()[0].get();
    static const std::set<TypeKind> kDrawn = {
        TypeKind::Tensor, TypeKind::Int,    TypeKind::SymInt,       TypeKind::Float,
        TypeKind::Bool,   TypeKind::Scalar, TypeKind::Str,          TypeKind::ScalarType,
        TypeKind::Layout, TypeKind::Device, TypeKind::MemoryFormat, TypeKind::Generator};
    if (!kDrawn.count(t->kind())) return nullptr;
  }
  return [schema](Gen& g) {
    Draw draw{g, false, {}, kFloat};
    Case c;
    for (const Argument& a : schema.arguments()) {
      bool has_default = a.default_value().has_value();
      // Draw even a kept default, so that later arguments see the same self.
      std::optional<Arg> v = draw.of(a, *a.type());
      // A device is never left to its default: Meta needs device=meta.
      const Type* inner =
          a.type()->kind() == TypeKind::Optional ? a.type()->contained()[0].get() : a.type().get();
      if (has_default && !a.is_out() && inner->kind() != TypeKind::Device && g.chance(0.5))
        continue;
      if (v) c.named[a.name()] = std::move(*v);
    }
    return c;
  };
}

}  // namespace opd::test::meta_vs_cpu
