// The 16-bit floating types (opd/half.h): float -> Half and float -> BFloat16 round to
// nearest, ties to even, overflow to infinity, keep NaN a NaN (quiet) and handle subnormals;
// the way back is exact. Checked against known bit patterns, and at every midpoint between two
// neighbouring 16-bit values.

#include "opd/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace opd {
namespace {

float from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }
uint32_t to_bits(float f) { return std::bit_cast<uint32_t>(f); }

uint16_t half(float f) { return Half(f).bits; }
float from_half(uint16_t bits) {
  Half h;
  h.bits = bits;
  return h;
}
uint16_t bf16(float f) { return BFloat16(f).bits; }
float from_bf16(uint16_t bits) {
  BFloat16 b;
  b.bits = bits;
  return b;
}

bool is_nan_half(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x03ffu) != 0; }
bool is_nan_bf16(uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x007fu) != 0; }

constexpr float kInf = std::numeric_limits<float>::infinity();

// ---- Half (IEEE 754 binary16) -----------------------------------------------------------------

TEST(Half, ExactValuesHaveTheirBitPatterns) {
  EXPECT_EQ(half(0.0f), 0x0000);
  EXPECT_EQ(half(-0.0f), 0x8000);
  EXPECT_EQ(half(1.0f), 0x3c00);
  EXPECT_EQ(half(-2.0f), 0xc000);
  EXPECT_EQ(half(0.5f), 0x3800);
  EXPECT_EQ(half(65504.0f), 0x7bff) << "the largest finite half";
  EXPECT_EQ(half(0x1p-14f), 0x0400) << "the smallest normal half";
  EXPECT_EQ(half(0x1p-24f), 0x0001) << "the smallest subnormal half";
  EXPECT_EQ(half(1023 * 0x1p-24f), 0x03ff) << "the largest subnormal half";
  EXPECT_EQ(half(-0x1p-24f), 0x8001);
}

TEST(Half, RoundsToNearestAndTiesToEven) {
  // 1 + 2^-11 lies halfway between 1 (0x3c00, even) and 1 + 2^-10 (0x3c01).
  EXPECT_EQ(half(1.0f + 0x1p-11f), 0x3c00);
  EXPECT_EQ(half(from_bits(to_bits(1.0f + 0x1p-11f) + 1)), 0x3c01) << "just above the tie";
  EXPECT_EQ(half(from_bits(to_bits(1.0f + 0x1p-11f) - 1)), 0x3c00) << "just below the tie";
  // 1 + 3 * 2^-11 lies halfway between 0x3c01 and 0x3c02 (even).
  EXPECT_EQ(half(1.0f + 3 * 0x1p-11f), 0x3c02);
  EXPECT_EQ(half(-(1.0f + 3 * 0x1p-11f)), 0xbc02);
  // 1/3 is not a tie: nearest is 0x3555 (0.333251953125).
  EXPECT_EQ(half(1.0f / 3.0f), 0x3555);
}

TEST(Half, OverflowsToInfinityFromTheMidpointAboveTheLargestFinite) {
  // 65520 is halfway between 65504 (0x7bff, odd) and 65536 (not representable): ties to even
  // round up, to infinity.
  EXPECT_EQ(half(65519.996f), 0x7bff);
  EXPECT_EQ(half(from_bits(to_bits(65520.0f) - 1)), 0x7bff);
  EXPECT_EQ(half(65520.0f), 0x7c00);
  EXPECT_EQ(half(-65520.0f), 0xfc00);
  EXPECT_EQ(half(65536.0f), 0x7c00);
  EXPECT_EQ(half(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(half(kInf), 0x7c00);
  EXPECT_EQ(half(-kInf), 0xfc00);
}

TEST(Half, NaNStaysNaN) {
  EXPECT_EQ(half(std::numeric_limits<float>::quiet_NaN()), 0x7e00);
  EXPECT_EQ(half(-std::numeric_limits<float>::quiet_NaN()), 0xfe00);
  // A signalling NaN whose payload lies below the half's mantissa would truncate to infinity;
  // it becomes a quiet NaN instead.
  EXPECT_TRUE(is_nan_half(half(from_bits(0x7f800001u))));
  EXPECT_EQ(half(from_bits(0x7f800001u)), 0x7e00);
  EXPECT_TRUE(is_nan_half(half(from_bits(0xff800001u))));
  EXPECT_TRUE(is_nan_half(half(from_bits(0x7fffffffu))));
  EXPECT_TRUE(std::isnan(from_half(0x7e00)));
  EXPECT_TRUE(std::isnan(from_half(0x7c01)));
  EXPECT_TRUE(std::isnan(from_half(0xffff)));
}

TEST(Half, SubnormalsRoundToNearestEven) {
  EXPECT_EQ(half(0x1p-25f), 0x0000) << "halfway between 0 and 2^-24: to 0, the even one";
  EXPECT_EQ(half(0x1p-25f + 0x1p-40f), 0x0001);
  EXPECT_EQ(half(3 * 0x1p-25f), 0x0002) << "halfway between 2^-24 and 2^-23: to the even one";
  EXPECT_EQ(half(5 * 0x1p-25f), 0x0002) << "halfway between 2 and 3 times 2^-24";
  EXPECT_EQ(half(0x1p-26f), 0x0000);
  EXPECT_EQ(half(-0x1p-26f), 0x8000) << "underflow keeps the sign";
  EXPECT_EQ(half(1e-30f), 0x0000);
  EXPECT_EQ(half(std::numeric_limits<float>::denorm_min()), 0x0000);
  // Halfway between the largest subnormal (0x03ff, odd) and the smallest normal: up.
  EXPECT_EQ(half(1023.5f * 0x1p-24f), 0x0400);
  EXPECT_EQ(half(from_bits(to_bits(1023.5f * 0x1p-24f) - 1)), 0x03ff);
}

TEST(Half, ToFloatIsExact) {
  EXPECT_EQ(from_half(0x3c00), 1.0f);
  EXPECT_EQ(from_half(0x3555), 0.333251953125f);
  EXPECT_EQ(from_half(0x7bff), 65504.0f);
  EXPECT_EQ(from_half(0x0400), 0x1p-14f);
  EXPECT_EQ(from_half(0x0001), 0x1p-24f);
  EXPECT_EQ(from_half(0x03ff), 1023 * 0x1p-24f);
  EXPECT_EQ(from_half(0x8001), -0x1p-24f);
  EXPECT_EQ(from_half(0x7c00), kInf);
  EXPECT_EQ(from_half(0xfc00), -kInf);
  EXPECT_EQ(to_bits(from_half(0x8000)), 0x80000000u) << "negative zero";
}

TEST(Half, EveryHalfSurvivesTheRoundTrip) {
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    if (is_nan_half(bits)) {
      EXPECT_TRUE(is_nan_half(half(from_half(bits)))) << std::hex << h;
    } else {
      EXPECT_EQ(half(from_half(bits)), bits) << std::hex << h;
    }
  }
}

// Between every two neighbouring finite halves of one sign (the last pair: 65504 and 65536, the
// first value past the range), the midpoint rounds to the one with an even mantissa, and the
// floats next to the midpoint round to their nearer neighbour.
TEST(Half, EveryMidpointRoundsToEvenAndItsNeighboursToTheNearer) {
  for (uint32_t sign : {0x0000u, 0x8000u}) {
    for (uint32_t h = 0; h < 0x7c00u; ++h) {
      const auto lo = static_cast<uint16_t>(sign | h);
      const auto hi = static_cast<uint16_t>(sign | (h + 1));
      const double a = from_half(lo);
      const double b = h + 1 == 0x7c00u ? (sign ? -65536.0 : 65536.0) : from_half(hi);
      const auto mid = static_cast<float>((a + b) / 2);
      ASSERT_EQ(static_cast<double>(mid), (a + b) / 2) << "the midpoint is a float";
      const uint16_t even = (h & 1u) == 0 ? lo : hi;
      EXPECT_EQ(half(mid), even) << std::hex << "between " << lo << " and " << hi;
      // Towards zero and away from it, one float from the midpoint.
      EXPECT_EQ(half(from_bits(to_bits(mid) - 1)), lo) << std::hex << lo;
      EXPECT_EQ(half(from_bits(to_bits(mid) + 1)), hi) << std::hex << hi;
    }
  }
}

// ---- BFloat16 (the upper half of a float) -----------------------------------------------------

TEST(BFloat16, ExactValuesHaveTheirBitPatterns) {
  EXPECT_EQ(bf16(0.0f), 0x0000);
  EXPECT_EQ(bf16(-0.0f), 0x8000);
  EXPECT_EQ(bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16(-2.0f), 0xc000);
  EXPECT_EQ(bf16(from_bits(0x7f7f0000u)), 0x7f7f) << "the largest finite bfloat16";
  EXPECT_EQ(bf16(0x1p-126f), 0x0080) << "the smallest normal";
  EXPECT_EQ(bf16(0x1p-133f), 0x0001) << "the smallest subnormal";
}

TEST(BFloat16, RoundsToNearestAndTiesToEven) {
  EXPECT_EQ(bf16(from_bits(0x3f808000u)), 0x3f80) << "tie between 0x3f80 (even) and 0x3f81";
  EXPECT_EQ(bf16(from_bits(0x3f808001u)), 0x3f81);
  EXPECT_EQ(bf16(from_bits(0x3f807fffu)), 0x3f80);
  EXPECT_EQ(bf16(from_bits(0x3f818000u)), 0x3f82) << "tie between 0x3f81 and 0x3f82 (even)";
  EXPECT_EQ(bf16(from_bits(0xbf818000u)), 0xbf82);
  EXPECT_EQ(bf16(1.0f / 3.0f), 0x3eab) << "0x3eaaaaab rounds up";
}

TEST(BFloat16, OverflowsToInfinityFromTheMidpointAboveTheLargestFinite) {
  EXPECT_EQ(bf16(from_bits(0x7f7f7fffu)), 0x7f7f);
  EXPECT_EQ(bf16(from_bits(0x7f7f8000u)), 0x7f80) << "tie; 0x7f7f is odd, so up, to infinity";
  EXPECT_EQ(bf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(bf16(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(bf16(kInf), 0x7f80);
  EXPECT_EQ(bf16(-kInf), 0xff80);
}

TEST(BFloat16, NaNStaysNaN) {
  EXPECT_EQ(bf16(std::numeric_limits<float>::quiet_NaN()), 0x7fc0);
  EXPECT_EQ(bf16(-std::numeric_limits<float>::quiet_NaN()), 0xffc0);
  // Rounding would carry 0x7fffffff into the sign bit, and truncating 0x7f800001 would give
  // infinity: both stay NaN.
  EXPECT_TRUE(is_nan_bf16(bf16(from_bits(0x7fffffffu))));
  EXPECT_EQ(bf16(from_bits(0x7fffffffu)) & 0x8000, 0);
  EXPECT_TRUE(is_nan_bf16(bf16(from_bits(0x7f800001u))));
  EXPECT_TRUE(is_nan_bf16(bf16(from_bits(0xff800001u))));
  EXPECT_TRUE(std::isnan(from_bf16(0x7fc0)));
  EXPECT_TRUE(std::isnan(from_bf16(0x7f81)));
}

TEST(BFloat16, SubnormalsRoundToNearestEven) {
  EXPECT_EQ(bf16(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(bf16(from_bits(0x00008000u)), 0x0000) << "tie between 0 and 0x0001: to 0";
  EXPECT_EQ(bf16(from_bits(0x00008001u)), 0x0001);
  EXPECT_EQ(bf16(from_bits(0x00018000u)), 0x0002) << "tie between 0x0001 and 0x0002";
  EXPECT_EQ(bf16(from_bits(0x80018000u)), 0x8002);
  EXPECT_EQ(bf16(from_bits(0x007fffffu)), 0x0080) << "the largest float subnormal rounds up";
  EXPECT_EQ(from_bf16(0x0001), 0x1p-133f);
  EXPECT_EQ(from_bf16(0x007f), 127 * 0x1p-133f);
}

TEST(BFloat16, ToFloatIsExact) {
  EXPECT_EQ(from_bf16(0x3f80), 1.0f);
  EXPECT_EQ(from_bf16(0x3eab), from_bits(0x3eab0000u));
  EXPECT_EQ(from_bf16(0x7f80), kInf);
  EXPECT_EQ(from_bf16(0xff80), -kInf);
  EXPECT_EQ(to_bits(from_bf16(0x8000)), 0x80000000u) << "negative zero";
}

TEST(BFloat16, EveryBFloat16SurvivesTheRoundTrip) {
  for (uint32_t b = 0; b <= 0xffffu; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    if (is_nan_bf16(bits)) {
      EXPECT_TRUE(is_nan_bf16(bf16(from_bf16(bits)))) << std::hex << b;
    } else {
      EXPECT_EQ(bf16(from_bf16(bits)), bits) << std::hex << b;
    }
  }
}

TEST(BFloat16, EveryMidpointRoundsToEvenAndItsNeighboursToTheNearer) {
  for (uint32_t sign : {0x0000u, 0x8000u}) {
    for (uint32_t b = 0; b < 0x7f80u; ++b) {
      const auto lo = static_cast<uint16_t>(sign | b);
      const auto hi = static_cast<uint16_t>(sign | (b + 1));  // 0x7f80: infinity
      const uint32_t mid = (static_cast<uint32_t>(lo) << 16) | 0x8000u;
      const uint16_t even = (b & 1u) == 0 ? lo : hi;
      EXPECT_EQ(bf16(from_bits(mid)), even) << std::hex << "between " << lo << " and " << hi;
      EXPECT_EQ(bf16(from_bits(mid - 1)), lo) << std::hex << lo;
      EXPECT_EQ(bf16(from_bits(mid + 1)), hi) << std::hex << hi;
    }
  }
}

}  // namespace
}  // namespace opd
