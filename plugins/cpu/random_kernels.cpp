// CPU kernels of the in-place random fills: uniform_, normal_, random_ (and .from, .to),
// bernoulli_ (.float, .Tensor), exponential_, geometric_, log_normal_, cauchy_. Each draws
// through the generator given, or the process-wide one, with the counters of one reservation
// (Note [Random numbers per element] in common/philox.h): element i of `self`, in row-major
// order, gets the Philox block at offset + i, so the values depend only on the generator's seed
// and the order of the calls, never on the thread count or on `self`'s strides. uniform_(0, 1)
// and normal_(0, 1) give the values rand and randn give for the same counters. The argument
// checks are common/random_checks.h's, shared with the Meta kernels.

#include <cmath>
#include <limits>
#include <type_traits>

#include "common/broadcast.h"
#include "common/index_shape.h"
#include "common/output.h"
#include "common/philox.h"
#include "common/random_checks.h"
#include "common/type_dispatch.h"
#include "cpu/parallel.h"
#include "opd/generator.h"
#include "opd/half.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

// A Philox block per element: the grain of rand's kernel.
constexpr int64_t kRandomGrain = 4096;
constexpr double kPi = 3.14159265358979323846;

// Half, BFloat16, Float, Double.
#define OPD_DISPATCH_RANDOM_FLOATING(TYPE, NAME, ...)                                    \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                                                \
                              OPD_PRIVATE_CASE_TYPE(Float16, Half, __VA_ARGS__)          \
                                  OPD_PRIVATE_CASE_TYPE(BFloat16, BFloat16, __VA_ARGS__) \
                                      OPD_PRIVATE_CASES_FLOATING(__VA_ARGS__))
// Every numeric type, Bool, Half, BFloat16.
#define OPD_DISPATCH_RANDOM_NUMERIC(TYPE, NAME, ...)                                        \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                                                   \
                              OPD_PRIVATE_CASE_TYPE(Float16, Half, __VA_ARGS__)             \
                                  OPD_PRIVATE_CASE_TYPE(BFloat16, BFloat16, __VA_ARGS__)    \
                                      OPD_PRIVATE_CASE_TYPE(Bool, bool, __VA_ARGS__)        \
                                          OPD_PRIVATE_CASES_ALL(__VA_ARGS__))

// A value computed in double as element type T: through float for the 16-bit floats (as rand
// and randn round), saturated for the integral types (geometric_'s counts may exceed them).
template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    if (!(v > static_cast<double>(std::numeric_limits<T>::lowest()))) {
      return std::numeric_limits<T>::lowest();
    }
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) {
      return std::numeric_limits<T>::max();
    }
    return static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    return T(static_cast<float>(v));
  }
}

// A uniform double in (0, 1): never 0 or 1, for the logarithms and the tangent.
double open_uniform(const philox::Block& b) {
  const uint64_t x = (static_cast<uint64_t>(b.v[1]) << 32) | b.v[0];
  return (static_cast<double>(x >> 11) + 0.5) * 0x1.0p-53;
}
// A uniform double in [0, 1), as rand's for double.
double uniform01(const philox::Block& b) { return philox::uniform_double(b.v[0], b.v[1]); }

// Writes draw(block of element i) into element i of `self` (any strides) and bumps its version.
template <class T, class Draw>
void fill_elements(Tensor& self, const std::optional<Generator>& generator, Draw draw) {
  common::check_no_internal_overlap(self);  // an expanded self, as PyTorch refuses it
  const int64_t n = self.numel();
  if (n == 0) return;
  const RandomReservation r = reserve_random(generator, static_cast<uint64_t>(n));
  T* data = static_cast<T*>(self.data_ptr());
  if (self.is_contiguous()) {
    cpu::parallel_for(0, n, kRandomGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) data[i] = draw(philox::philox4x32_10(r.seed, r.offset + i));
    });
  } else {
    cpu::parallel_for(0, n, kRandomGrain, [&](int64_t begin, int64_t end) {
      common::walk_strided(self.sizes(), self.strides(), begin, end, [&](int64_t l, int64_t off) {
        data[off] = draw(philox::philox4x32_10(r.seed, r.offset + l));
      });
    });
  }
}

// A floating fill: value(block) in double, rounded to the element type.
template <class Value>
Tensor& fill_floating(Tensor& self, const char* kernel,
                      const std::optional<Generator>& generator, Value value) {
  OPD_DISPATCH_RANDOM_FLOATING(self.scalar_type(), kernel, [&] {
    fill_elements<scalar_t>(self, generator, [&](const philox::Block& b) {
      return from_double<scalar_t>(value(b));
    });
  });
  self.bump_version();
  return self;
}

}  // namespace

Tensor& uniform_(Tensor& self, double from, double to, const std::optional<Generator>& generator) {
  common::check_uniform(self.scalar_type(), from, to);
  OPD_DISPATCH_RANDOM_FLOATING(self.scalar_type(), "check_uniform_bounds", [&] {
    using T = scalar_t;
    if constexpr (std::is_same_v<T, double>) {
      fill_elements<T>(self, generator, [&](const philox::Block& b) {
        return from + (to - from) * philox::uniform_double(b.v[0], b.v[1]);
      });
    } else {
      // As many random bits as T's significand holds, as rand: uniform_(0, 1) is rand.
      const float lo = static_cast<float>(from), width = static_cast<float>(to) - lo;
      fill_elements<T>(self, generator, [&](const philox::Block& b) {
        float u;
        if constexpr (std::is_same_v<T, float>) {
          u = philox::uniform_float(b.v[0]);
        } else if constexpr (std::is_same_v<T, Half>) {
          u = philox::uniform_bits<11>(b.v[0]);
        } else {
          u = philox::uniform_bits<8>(b.v[0]);
        }
        return T(lo + width * u);
      });
    }
  });
  self.bump_version();
  return self;
}

Tensor& normal_(Tensor& self, double mean, double std, const std::optional<Generator>& generator) {
  common::check_normal_std(std);
  // mean + std * randn's value: normal_(0, 1) is randn.
  return fill_floating(self, "normal_kernel_cpu", generator, [&](const philox::Block& b) {
    return mean + std * philox::normal_double(b);
  });
}

Tensor& random__from(Tensor& self, int64_t from, std::optional<int64_t> to,
                     const std::optional<Generator>& generator) {
  const common::RandomRange range = common::random_range(self.scalar_type(), from, to);
  OPD_DISPATCH_RANDOM_NUMERIC(self.scalar_type(), "random_from_to_kernel_cpu", [&] {
    using T = scalar_t;
    fill_elements<T>(self, generator, [&](const philox::Block& b) {
      // 64 random bits modulo the span (PyTorch's rule; the bias is below 2^-32 for spans
      // under 2^32).
      const uint64_t x = (static_cast<uint64_t>(b.v[1]) << 32) | b.v[0];
      const uint64_t k = range.span == 0 ? x : x % range.span;
      const int64_t v = static_cast<int64_t>(static_cast<uint64_t>(range.from) + k);
      if constexpr (std::is_same_v<T, bool>) {
        return v != 0;
      } else if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(v);
      } else if constexpr (std::is_same_v<T, double> || std::is_same_v<T, float>) {
        return static_cast<T>(v);
      } else {
        return T(static_cast<float>(v));
      }
    });
  });
  self.bump_version();
  return self;
}

Tensor& random__to(Tensor& self, int64_t to, const std::optional<Generator>& generator) {
  return random__from(self, 0, to, generator);
}

Tensor& random_(Tensor& self, const std::optional<Generator>& generator) {
  common::random_range(self.scalar_type(), std::nullopt, std::nullopt);  // the dtype check
  return random__from(self, 0, std::nullopt, generator);
}

Tensor& exponential_(Tensor& self, double lambd, const std::optional<Generator>& generator) {
  common::check_exponential(lambd);
  return fill_floating(self, "exponential_cpu", generator, [&](const philox::Block& b) {
    if (lambd == 0) return std::numeric_limits<double>::infinity();
    return -std::log1p(-uniform01(b)) / lambd;
  });
}

Tensor& geometric_(Tensor& self, double p, const std::optional<Generator>& generator) {
  common::check_geometric(p);
  common::check_random_numeric("geometric_cpu", self.scalar_type(), /*bool_too=*/false);
  const double log_q = std::log1p(-p);
  OPD_DISPATCH_RANDOM_NUMERIC(self.scalar_type(), "geometric_cpu", [&] {
    // The number of trials up to the first success: at least 1.
    fill_elements<scalar_t>(self, generator, [&](const philox::Block& b) {
      return from_double<scalar_t>(std::ceil(std::log(open_uniform(b)) / log_q));
    });
  });
  self.bump_version();
  return self;
}

Tensor& log_normal_(Tensor& self, double mean, double std,
                    const std::optional<Generator>& generator) {
  common::check_log_normal(std);
  return fill_floating(self, "log_normal_cpu", generator, [&](const philox::Block& b) {
    return std::exp(mean + std * philox::normal_double(b));
  });
}

Tensor& cauchy_(Tensor& self, double median, double sigma,
                const std::optional<Generator>& generator) {
  return fill_floating(self, "cauchy_cpu", generator, [&](const philox::Block& b) {
    return median + sigma * std::tan(kPi * (open_uniform(b) - 0.5));
  });
}

Tensor& bernoulli__float(Tensor& self, double p, const std::optional<Generator>& generator) {
  common::check_bernoulli_p(p);
  common::check_bernoulli_self("bernoulli_scalar_cpu_", self.scalar_type());
  OPD_DISPATCH_RANDOM_NUMERIC(self.scalar_type(), "bernoulli_scalar_cpu_", [&] {
    fill_elements<scalar_t>(self, generator, [&](const philox::Block& b) {
      return from_double<scalar_t>(uniform01(b) < p ? 1.0 : 0.0);
    });
  });
  self.bump_version();
  return self;
}

Tensor& bernoulli__Tensor(Tensor& self, const Tensor& p, const std::optional<Generator>& generator) {
  const std::vector<int64_t> p_strides = common::check_bernoulli_tensor(self, p);
  // The probabilities, in double, element by element of self (p broadcast to self's shape).
  const int64_t n = self.numel();
  std::vector<double> probs(static_cast<size_t>(n));
  OPD_DISPATCH_FLOATING_TYPES_AND(kBFloat16, p.scalar_type(), "bernoulli_tensor_cpu_p_", [&] {
    const auto* pd = static_cast<const scalar_t*>(p.data_ptr());
    common::walk_strided(self.sizes(), p_strides, 0, n, [&](int64_t l, int64_t off) {
      if constexpr (std::is_same_v<scalar_t, double>) {
        probs[static_cast<size_t>(l)] = pd[off];
      } else {
        probs[static_cast<size_t>(l)] = static_cast<double>(static_cast<float>(pd[off]));
      }
    });
  });
  for (double q : probs) {
    OPD_CHECK(q >= 0 && q <= 1,
              "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
              "message be improved?  If so, please report an enhancement request to PyTorch.)");
  }
  common::check_no_internal_overlap(self);
  OPD_DISPATCH_RANDOM_NUMERIC(self.scalar_type(), "bernoulli_tensor_cpu_self_", [&] {
    // fill_elements hands blocks out in row-major order; the index comes from the counter.
    const RandomReservation r = reserve_random(generator, static_cast<uint64_t>(n));
    auto* data = static_cast<scalar_t*>(self.data_ptr());
    cpu::parallel_for(0, n, kRandomGrain, [&](int64_t begin, int64_t end) {
      common::walk_strided(self.sizes(), self.strides(), begin, end, [&](int64_t l, int64_t off) {
        const philox::Block b = philox::philox4x32_10(r.seed, r.offset + l);
        data[off] = from_double<scalar_t>(uniform01(b) < probs[static_cast<size_t>(l)] ? 1.0 : 0.0);
      });
    });
  });
  self.bump_version();
  return self;
}

}  // namespace opd::native
