// CPU kernels of the in-place random fills: uniform_, normal_, random_ (and .from, .to),
// bernoulli_ (.float, .Tensor), exponential_, geometric_, log_normal_, cauchy_, and
// multinomial.out (Note [multinomial draws]). Each draws
// through the generator given, or the process-wide one, with the counters of one reservation
// (Note [Random numbers per element] in common/philox.h): element i of `self`, in row-major
// order, gets the Philox block at offset + i, so the values depend only on the generator's seed
// and the order of the calls, never on the thread count or on `self`'s strides. uniform_(0, 1)
// and normal_(0, 1) give the values rand and randn give for the same counters. The argument
// checks are common/random_checks.h's, shared with the Meta kernels.

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

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
#include "opd/ops.h"

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
#define OPD_DISPATCH_RANDOM_NUMERIC(TYPE, NAME, ...)                                     \
  OPD_PRIVATE_DISPATCH_SWITCH(TYPE, NAME,                                                \
                              OPD_PRIVATE_CASE_TYPE(Float16, Half, __VA_ARGS__)          \
                                  OPD_PRIVATE_CASE_TYPE(BFloat16, BFloat16, __VA_ARGS__) \
                                      OPD_PRIVATE_CASE_TYPE(Bool, bool, __VA_ARGS__)     \
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
      for (int64_t i = begin; i < end; ++i)
        data[i] = draw(philox::philox4x32_10(r.seed, r.offset + i));
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
Tensor& fill_floating(Tensor& self, const char* kernel, const std::optional<Generator>& generator,
                      Value value) {
  OPD_DISPATCH_RANDOM_FLOATING(self.scalar_type(), kernel, [&] {
    fill_elements<scalar_t>(
        self, generator, [&](const philox::Block& b) { return from_double<scalar_t>(value(b)); });
  });
  self.bump_version();
  return self;
}

// A complex tensor's real and imaginary parts as a real tensor with a last dimension of 2 (the
// memory of view_as_real(self)): PyTorch fills complex tensors through it, so element (i, c)
// gets counter 2i + c.
Tensor as_real(const Tensor& self) {
  std::vector<int64_t> sizes = self.sizes().vec(), strides = self.strides().vec();
  for (int64_t& s : strides) s *= 2;
  sizes.push_back(2);
  strides.push_back(1);
  return make_tensor(self.storage(), sizes, strides, self.storage_offset() * 2,
                     common::random_value_type(self.scalar_type()), self.device());
}

}  // namespace

Tensor& uniform_(Tensor& self, double from, double to, const std::optional<Generator>& generator) {
  if (is_complex(self.scalar_type())) {
    common::check_no_internal_overlap(self);
    Tensor parts = as_real(self);
    native::uniform_(parts, from, to, generator);
    self.bump_version();
    return self;
  }
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
  if (is_complex(self.scalar_type())) {
    // Each part N(mean, std^2 / 2), as PyTorch's.
    common::check_no_internal_overlap(self);
    Tensor parts = as_real(self);
    native::normal_(parts, mean, std / std::sqrt(2.0), generator);
    self.bump_version();
    return self;
  }
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

Tensor& bernoulli__Tensor(Tensor& self, const Tensor& p,
                          const std::optional<Generator>& generator) {
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

// Note [multinomial draws]
// As PyTorch 1.13: without replacement (and for one sample with it), each category j of a row
// gets the key p_j / e_j with e_j ~ Exp(1) and the samples are the categories of the largest
// keys, in decreasing order (Gumbel-top-k in its exponential form; ties go to the lower index);
// the counters are one per (row, category). With replacement, sample s of a row is the first
// category whose running sum exceeds u_s times the row's total; the counters are one per (row,
// sample). Each path checks the probabilities as PyTorch's does, with its messages.
Tensor& multinomial_out(const Tensor& self, int64_t num_samples, bool replacement,
                        const std::optional<Generator>& generator, Tensor& out) {
  const std::vector<int64_t> sizes =
      common::check_multinomial(self, num_samples, replacement, out.scalar_type());
  common::resize_output("multinomial", out, sizes);
  if (self.numel() == 0) return out;
  const int64_t rows = self.dim() == 1 ? 1 : self.size(0), k = self.size(-1);
  // The probabilities in double, row-major.
  std::vector<double> p(static_cast<size_t>(rows * k));
  OPD_DISPATCH_FLOATING_TYPES_AND(kBFloat16, self.scalar_type(), "multinomial", [&] {
    const auto* data = static_cast<const scalar_t*>(self.data_ptr());
    common::walk_strided(self.sizes(), self.strides(), 0, rows * k, [&](int64_t l, int64_t off) {
      if constexpr (std::is_same_v<scalar_t, double>) {
        p[static_cast<size_t>(l)] = data[off];
      } else {
        p[static_cast<size_t>(l)] = static_cast<double>(static_cast<float>(data[off]));
      }
    });
  });
  const bool by_keys = !replacement || num_samples == 1;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (int64_t j = 0; j < k; ++j) {
      const double v = p[static_cast<size_t>(r * k + j)];
      if (by_keys) {
        OPD_CHECK(v >= 0 && v < std::numeric_limits<double>::infinity(),
                  "probability tensor contains either `inf`, `nan` or element < 0");
      } else {
        OPD_CHECK(v >= 0, "invalid multinomial distribution (encountering probability entry < 0)");
        OPD_CHECK(std::isfinite(v),
                  "invalid multinomial distribution (encountering probability entry = infinity "
                  "or NaN)");
      }
      sum += v;
    }
    OPD_CHECK(sum > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
  }
  const int64_t per_row = by_keys ? k : num_samples;
  const RandomReservation res = reserve_random(generator, static_cast<uint64_t>(rows * per_row));
  // out is contiguous after resize_ when it was resized; write through its strides anyway.
  auto* dst = static_cast<int64_t*>(out.data_ptr());
  const int64_t row_stride = out.dim() == 2 ? out.stride(0) : 0, col_stride = out.stride(-1);
  cpu::parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> work(static_cast<size_t>(k));
    std::vector<int64_t> order(static_cast<size_t>(k));
    for (int64_t r = begin; r < end; ++r) {
      const double* row = p.data() + r * k;
      int64_t* o = dst + r * row_stride;
      const uint64_t base = res.offset + static_cast<uint64_t>(r * per_row);
      if (by_keys) {
        for (int64_t j = 0; j < k; ++j) {
          const double e = -std::log(open_uniform(philox::philox4x32_10(res.seed, base + j)));
          work[static_cast<size_t>(j)] = row[j] / e;
          order[static_cast<size_t>(j)] = j;
        }
        std::partial_sort(order.begin(), order.begin() + num_samples, order.end(),
                          [&](int64_t a, int64_t b) {
                            const double ka = work[static_cast<size_t>(a)];
                            const double kb = work[static_cast<size_t>(b)];
                            return ka > kb || (ka == kb && a < b);
                          });
        for (int64_t s = 0; s < num_samples; ++s) o[s * col_stride] = order[static_cast<size_t>(s)];
      } else {
        double running = 0;
        for (int64_t j = 0; j < k; ++j) work[static_cast<size_t>(j)] = running += row[j];
        const double total = work[static_cast<size_t>(k - 1)];
        for (int64_t s = 0; s < num_samples; ++s) {
          const double u = uniform01(philox::philox4x32_10(res.seed, base + s)) * total;
          const auto it = std::upper_bound(work.begin(), work.end(), u);
          o[s * col_stride] = std::min<int64_t>(it - work.begin(), k - 1);
        }
      }
    }
  });
  out.bump_version();
  return out;
}

}  // namespace opd::native
