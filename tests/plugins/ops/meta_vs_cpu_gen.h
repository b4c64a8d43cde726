#pragma once

// Random arguments for the Meta-vs-CPU property test (meta_vs_cpu_test.cpp). Every argument is a
// recipe made once on CPU and once on Meta, so that both calls see the same sizes, strides,
// storage offsets and dtypes; only CPU tensors hold values.

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "opd/function_schema.h"
#include "opd/ivalue.h"
#include "opd/ops.h"

namespace opd::test::meta_vs_cpu {

using Shape = std::vector<int64_t>;

inline int64_t rank_of(const Shape& s) { return static_cast<int64_t>(s.size()); }

inline int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// One argument: how to make it for a device, and how to print it in a failure.
struct Arg {
  std::function<IValue(Device)> make;
  std::string text;
};

// The arguments of one call. `args` fills the schema's arguments from the first on; `named`
// sets later ones by name; the rest take their schema defaults.
struct Case {
  std::vector<Arg> args;
  std::map<std::string, Arg> named;
};

// How an input tensor is laid out over its storage.
enum class Layout_ { Contiguous, Transposed, Sliced, Expanded };

// An input tensor: a dense base of `base` sizes, then one view that gives it `sizes`.
struct TensorRecipe {
  std::vector<int64_t> sizes;  // logical sizes
  ScalarType dtype = kFloat;
  Layout_ layout = Layout_::Contiguous;
  int64_t slice_dim = 0;       // Sliced: the dimension taken with step 2
  std::vector<int64_t> base;   // sizes of the allocated tensor
  std::vector<double> values;  // row-major values of the base (CPU only)
  bool requires_grad = false;

  // Allocates the base on `device` (writing values only on CPU, through data_ptr, so that no
  // operator runs and the version counter stays 0), then applies the view.
  Tensor make(Device device) const;
  // "Float[2, 3] strides [1, 2] (transposed)".
  std::string text() const;
};

// The random source and the argument builders. Deterministic for a seed.
class Gen {
 public:
  Gen(uint32_t seed, bool autograd_available) : rng_(seed), autograd_(autograd_available) {}

  // Numbers.
  int64_t integer(int64_t lo, int64_t hi);  // in [lo, hi]
  double real(double lo, double hi);
  bool chance(double p);
  template <class T>
  const T& pick(const std::vector<T>& xs) {
    return xs[static_cast<size_t>(integer(0, static_cast<int64_t>(xs.size()) - 1))];
  }

  // Dtypes: any of Bool, UInt8, Int32, Int64, Float32, Float64; mostly-floating.
  ScalarType dtype();
  ScalarType float_dtype();
  // Sizes: rank in [min_rank, max_rank], each size 0 (rarely), 1 or up to 4.
  std::vector<int64_t> shape(int min_rank = 0, int max_rank = 3);
  // Two shapes that broadcast together (now and then two that do not).
  std::pair<std::vector<int64_t>, std::vector<int64_t>> broadcast_pair();
  // A shape that broadcasts to `target` (now and then one that does not).
  std::vector<int64_t> broadcastable_to(const std::vector<int64_t>& target);

  // Tensors in a random layout.
  TensorRecipe recipe(std::vector<int64_t> sizes, ScalarType dtype);
  Arg tensor(const TensorRecipe& r);
  Arg tensor(std::vector<int64_t> sizes, ScalarType dtype) {
    return tensor(recipe(std::move(sizes), dtype));
  }
  Arg tensor() { return tensor(shape(), dtype()); }
  // A floating tensor that requires grad when the autograd plugin is loaded (half the time).
  Arg grad_tensor(std::vector<int64_t> sizes);
  // Class indices in [0, classes) or `ignore_index`, Long (now and then another integer dtype).
  Arg target(std::vector<int64_t> sizes, int64_t classes, int64_t ignore_index);
  Arg tensor_list(std::vector<Arg> items);
  // The same object wherever the returned Arg appears in one case (made once per device).
  Arg shared(Arg a);
  // A value computed from other arguments when the case is made (a non-leaf: y = sum(x * x)).
  Arg derived(std::vector<Arg> from, std::function<IValue(const std::vector<IValue>&)> f,
              std::string text);

  // Other arguments.
  Arg none();
  Arg value(IValue v);     // the same value on both devices
  Arg scalar();            // an int, a float or a bool
  Arg dim(int64_t rank);   // a dimension of a tensor of that rank (rarely out of range)
  Arg dims(int64_t rank);  // a list of such dimensions (rarely repeated)
  Arg int_list(std::vector<int64_t> xs) { return value(IValue(std::move(xs))); }
  Arg optional_dtype();              // None or one of dtype()
  Arg device(bool optional);         // cpu (or None) on CPU, meta on Meta
  Arg memory_format(bool optional);  // mostly None / Contiguous / Preserve
  Arg reduction() { return value(integer(0, 2)); }
  // A value tensor (fill_.Tensor, masked_fill.Tensor) of a random dtype whose elements convert
  // to `target` without overflow: CPU refuses a value that does not fit by its data alone
  // ("value cannot be converted to type uint8_t without overflow"), which Meta, with no data,
  // cannot see (nor can PyTorch's Meta), so such a case compares nothing.
  Arg fitting_value_tensor(std::vector<int64_t> sizes, ScalarType target);

  // Fills the TensorOptions-like keyword arguments of a factory.
  void factory_options(Case& c);

 private:
  std::mt19937 rng_;
  bool autograd_;
};

// The case generators, by operator name as the YAML writes it ("add.Tensor", "sum").
using CaseFn = std::function<Case(Gen&)>;
const std::map<std::string, CaseFn>& case_generators();
// The hand-written generators of the indexing, scatter/gather and shape families
// (meta_vs_cpu_cases_index.cpp), added to the map by case_generators().
void add_index_cases(std::map<std::string, CaseFn>& m);

// Those of masked_scatter, index_copy and cross (meta_vs_cpu_cases_missing.cpp).
void add_missing_op_cases(std::map<std::string, CaseFn>& m);
// Those of bernoulli and normal, whose probabilities and deviations CPU reads
// (meta_vs_cpu_cases_random.cpp).
void add_random_op_cases(std::map<std::string, CaseFn>& m);
// Those of repeat_interleave.Tensor and .self_Tensor, without output_size
// (meta_vs_cpu_cases_surface.cpp).
void add_surface_op_cases(std::map<std::string, CaseFn>& m);
// Those of the losses of Operators II (meta_vs_cpu_cases_loss.cpp).
void add_loss_op_cases(std::map<std::string, CaseFn>& m);
// Those of the normalisation, embedding and dropout operators (meta_vs_cpu_cases_norm.cpp).
void add_norm_op_cases(std::map<std::string, CaseFn>& m);
// Those of the pooling operators, one_hot and bilinear (meta_vs_cpu_cases_pool.cpp).
void add_pool_op_cases(std::map<std::string, CaseFn>& m);
// Those of the convolutions (meta_vs_cpu_cases_conv.cpp).
void add_conv_op_cases(std::map<std::string, CaseFn>& m);
// The schema-driven generator of an operator without a hand-written one (Note [Default case
// generator] in meta_vs_cpu_default.cpp); empty when an argument's type cannot be drawn.
CaseFn default_generator(const FunctionSchema& schema);

}  // namespace opd::test::meta_vs_cpu
