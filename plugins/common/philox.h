#pragma once

// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw, "Parallel random
// numbers: as easy as 1, 2, 3" (SC 2011), written from the paper's description: a 128-bit
// counter and a 64-bit key go through ten rounds of two 32x32->64 multiplications, with the key
// bumped by the Weyl constants between rounds. Output i depends only on (key, counter i), so any
// thread can produce any element without drawing the ones before it.
//
// Note [Random numbers per element]
// rand and randn on every backend give element i of a call the counter (offset + i) under the
// key `seed`, where {seed, offset} come from opd::reserve_random(numel) (opd/generator.h). An
// element consumes one whole Philox block (four 32-bit words), whatever its dtype, so the values
// depend only on the seed and the order of the calls, never on how the work is split.
//
// Header-only and free of host-only calls so that a CUDA plugin can compile it for the device.

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define OPD_PHILOX_HD __host__ __device__
#else
#define OPD_PHILOX_HD
#endif

namespace opd::philox {

struct Block {
  uint32_t v[4];
};

namespace detail {
inline constexpr uint32_t kMul0 = 0xD2511F53u;
inline constexpr uint32_t kMul1 = 0xCD9E8D57u;
inline constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // golden ratio
inline constexpr uint32_t kWeyl1 = 0xBB67AE85u;  // sqrt(3) - 1

OPD_PHILOX_HD inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  uint64_t p = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
}

OPD_PHILOX_HD inline Block round(Block c, uint32_t k0, uint32_t k1) {
  uint32_t hi0, lo0, hi1, lo1;
  mulhilo(kMul0, c.v[0], hi0, lo0);
  mulhilo(kMul1, c.v[2], hi1, lo1);
  return Block{{hi1 ^ c.v[1] ^ k0, lo1, hi0 ^ c.v[3] ^ k1, lo0}};
}
}  // namespace detail

// Ten rounds on the 128-bit `counter` (four words, least significant first) under the 64-bit key
// (k0, k1). Matches the known-answer vectors of the Random123 distribution.
OPD_PHILOX_HD inline Block philox4x32_10(Block counter, uint32_t k0, uint32_t k1) {
  Block c = counter;
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += detail::kWeyl0;
      k1 += detail::kWeyl1;
    }
    c = detail::round(c, k0, k1);
  }
  return c;
}

// The block of element `counter` under `seed` (see Note [Random numbers per element]): the
// counter's low 64 bits are `counter`, its high 64 bits `stream`.
OPD_PHILOX_HD inline Block philox4x32_10(uint64_t seed, uint64_t counter, uint64_t stream = 0) {
  Block c{{static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32),
           static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32)}};
  return philox4x32_10(c, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// A uniform value in [0, 1) on the grid of 2^-Bits, from the low Bits bits of `x`. With Bits the
// significand width of the target type (24 for float, 11 for half, 8 for bfloat16) every value
// is exact in that type, so rounding can never produce 1.
template <int Bits>
OPD_PHILOX_HD inline float uniform_bits(uint32_t x) {
  static_assert(Bits > 0 && Bits <= 24, "uniform_bits: at most float's 24 significand bits");
  return static_cast<float>(x & ((1u << Bits) - 1u)) * (1.0f / static_cast<float>(1u << Bits));
}
OPD_PHILOX_HD inline float uniform_float(uint32_t x) { return uniform_bits<24>(x); }
// A uniform double in [0, 1) from 53 of the 64 bits of (hi, lo).
OPD_PHILOX_HD inline double uniform_double(uint32_t hi, uint32_t lo) {
  uint64_t x = (static_cast<uint64_t>(hi) << 32) | lo;
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

// A standard normal value by Box-Muller from one block: two 53-bit uniforms, the cosine branch.
// The first uniform is taken from (0, 1] so that the logarithm is finite.
OPD_PHILOX_HD inline double normal_double(const Block& b) {
  double u1 = 1.0 - uniform_double(b.v[0], b.v[1]);
  double u2 = uniform_double(b.v[2], b.v[3]);
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

}  // namespace opd::philox
