// The vector loops of the float and double binary kernels (Note [Binary kernels in AVX2],
// plugins/cpu/binary_vec.h) at their edges: lengths around the vector width (the padded tail),
// a repeated operand on either side, and the special values (negative zero, inf, NaN, a zero
// divisor) in every lane, each element checked against PyTorch 1.13's scalar formula computed
// here, and against the same call on strided inputs (the kernels' scalar loop).

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "op_test_util.h"
#include "opd/ops.h"

namespace opd {
namespace {

// PyTorch's scalar formulas (BinaryOpsKernel.cpp, c10::div_floor_floating), in T.
template <class T>
T ref_remainder(T a, T b) {
  T m = std::fmod(a, b);
  if (m != 0 && (b < 0) != (m < 0)) m += b;
  return m;
}
template <class T>
T ref_div_floor(T a, T b) {
  if (b == 0) return a / b;
  const T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return std::copysign(T(0), a / b);
  T floordiv = std::floor(div);
  if (div - floordiv > T(0.5)) floordiv += 1;
  return floordiv;
}
template <class T>
T ref_max(T a, T b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<T>::quiet_NaN() : std::max(a, b);
}
template <class T>
T ref_min(T a, T b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<T>::quiet_NaN() : std::min(a, b);
}

struct Case {
  std::string name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<double(double, double, bool)> ref;  // (a, b, is_float)
  bool exact;                                       // else within a few ulp
  bool sign_of_zero;                                // -0.0 and 0.0 told apart
  bool fmod_based = false;                          // see fmod_overflows
};

// SLEEF's fmod, which PyTorch's vector loops call, gives NaN where the finite a / b overflows
// (fmod(2.5f, 5e-39f)); torch 1.13 does the same on all but a run's scalar tail. The kernels
// keep it (their tail runs the vector code too), so the test accepts it there.
bool fmod_overflows(double a, double b, bool is_float) {
  if (!std::isfinite(a) || b == 0 || std::isnan(b)) return false;
  return is_float ? std::isinf(static_cast<float>(a) / static_cast<float>(b)) : std::isinf(a / b);
}

template <class F>
std::function<double(double, double, bool)> both(F f) {
  return [f](double a, double b, bool is_float) {
    return is_float ? static_cast<double>(f(static_cast<float>(a), static_cast<float>(b)))
                    : f(a, b);
  };
}

std::vector<Case> cases() {
  auto exact = [](std::string name, auto op, auto ref) {
    return Case{std::move(name), op, ref, true, true};
  };
  auto fmod_based = [](std::string name, auto op, auto ref) {
    return Case{std::move(name), op, ref, true, true, true};
  };
  return {
      exact(
          "add", [](auto& a, auto& b) { return add(a, b); },
          both([](auto a, auto b) { return a + b; })),
      exact(
          "sub", [](auto& a, auto& b) { return sub(a, b); },
          both([](auto a, auto b) { return a - b; })),
      exact(
          "mul", [](auto& a, auto& b) { return mul(a, b); },
          both([](auto a, auto b) { return a * b; })),
      exact(
          "div", [](auto& a, auto& b) { return div(a, b); },
          both([](auto a, auto b) { return a / b; })),
      exact(
          "div_trunc", [](auto& a, auto& b) { return div(a, b, "trunc"); },
          both([](auto a, auto b) { return std::trunc(a / b); })),
      fmod_based(
          "div_floor", [](auto& a, auto& b) { return div(a, b, "floor"); },
          both([](auto a, auto b) { return ref_div_floor(a, b); })),
      fmod_based(
          "floor_divide", [](auto& a, auto& b) { return floor_divide(a, b); },
          both([](auto a, auto b) { return ref_div_floor(a, b); })),
      fmod_based(
          "remainder", [](auto& a, auto& b) { return remainder(a, b); },
          both([](auto a, auto b) { return ref_remainder(a, b); })),
      fmod_based(
          "fmod", [](auto& a, auto& b) { return fmod(a, b); },
          both([](auto a, auto b) { return std::fmod(a, b); })),
      exact(
          "copysign", [](auto& a, auto& b) { return copysign(a, b); },
          both([](auto a, auto b) { return std::copysign(a, b); })),
      // maximum(0.0, -0.0): torch's vector loop and its scalar loop disagree; either is right.
      Case{"maximum", [](auto& a, auto& b) { return maximum(a, b); },
           both([](auto a, auto b) { return ref_max(a, b); }), true, false},
      Case{"minimum", [](auto& a, auto& b) { return minimum(a, b); },
           both([](auto a, auto b) { return ref_min(a, b); }), true, false},
      Case{"atan2", [](auto& a, auto& b) { return atan2(a, b); },
           both([](auto a, auto b) { return std::atan2(a, b); }), false, true},
      Case{"hypot", [](auto& a, auto& b) { return hypot(a, b); },
           both([](auto a, auto b) { return std::hypot(a, b); }), false, true},
      Case{"pow", [](auto& a, auto& b) { return pow(a, b); },
           both([](auto a, auto b) { return std::pow(a, b); }), false, true},
  };
}

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Every pair of these values, a and b, appears in some lane.
const std::vector<double> kSpecials = {0.0,  -0.0,  1.0,  -1.0, 2.5,   -2.5, 7.0,  -3.0,
                                       kInf, -kInf, kNaN, 1e-3, -1e30, 0.75, 5e-39};

class BinaryVecOps : public ::testing::TestWithParam<ScalarType> {
 protected:
  void SetUp() override { test::load_default_plugins(); }
};

// Whether got is the reference: bit for bit but NaN's payload (and, where the case says so, the
// sign of zero), or within 4 ulp (atan2, hypot, pow: SLEEF's 1-ulp functions against libm).
bool agrees(const Case& c, double a, double b, double got, double want, bool is_float) {
  if (std::isnan(want)) return std::isnan(got);
  if (c.fmod_based && std::isnan(got) && fmod_overflows(a, b, is_float)) return true;
  if (c.exact || std::isinf(want) || want == 0) {
    if (got != want) return false;
    return !c.sign_of_zero || std::signbit(got) == std::signbit(want);
  }
  const double ulp = is_float ? std::ldexp(1.0, std::ilogb(static_cast<float>(want)) - 23)
                              : std::ldexp(1.0, std::ilogb(want) - 52);
  return std::abs(got - want) <= 4 * ulp;
}

// Checks op(a, b) element by element against the reference: element i of the result is of
// as[i] (as[0] when a is repeated) and bs[i] (bs[0] when b is).
void check(const Case& c, const Tensor& a, const Tensor& b, const std::vector<double>& as,
           const std::vector<double>& bs, bool a_repeated, bool b_repeated, ScalarType dtype,
           const std::string& where) {
  const Tensor out = c.op(a, b);
  ASSERT_EQ(out.scalar_type(), dtype) << c.name << where;
  const std::vector<double> got = test::values(out);
  const bool is_float = dtype == kFloat;
  for (size_t i = 0; i < got.size(); ++i) {
    const double x = as[a_repeated ? 0 : i], y = bs[b_repeated ? 0 : i];
    const double want = c.ref(x, y, is_float);
    EXPECT_TRUE(agrees(c, x, y, got[i], want, is_float))
        << c.name << where << " element " << i << " of " << got.size() << ": " << c.name << "(" << x
        << ", " << y << ") = " << got[i] << ", want " << want;
  }
}

TEST_P(BinaryVecOps, EveryLengthEveryLaneEverySpecialValue) {
  const ScalarType dtype = GetParam();
  const size_t k = kSpecials.size();
  for (const Case& c : cases()) {
    for (int64_t n : {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 225, 1027}) {
      std::vector<double> as(n), bs(n);
      for (int64_t i = 0; i < n; ++i) {  // all pairs, shifted so each lands in many lanes
        as[i] = kSpecials[i % k];
        bs[i] = kSpecials[(i / k + i) % k];
      }
      const std::string where = " n=" + std::to_string(n);
      const Tensor a = test::tensor(as, dtype), b = test::tensor(bs, dtype);
      check(c, a, b, as, bs, false, false, dtype, where + " dense");
      // The same values strided (the scalar loop) give the same results.
      if (n > 0) {
        const auto strided = [&](const std::vector<double>& v) {  // stride 2
          return test::tensor(v, {n, 1}, dtype).expand({n, 2}).contiguous().select(1, 1);
        };
        const Tensor a2 = strided(as), b2 = strided(bs);
        ASSERT_EQ(a2.stride(0), 2);
        check(c, a2, b2, as, bs, false, false, dtype, where + " strided");
      }
      // A repeated operand on either side, each special value in turn.
      for (double v : kSpecials) {
        const Tensor s = test::tensor({v}, std::vector<int64_t>{}, dtype);
        const std::string sv = " scalar " + std::to_string(v);
        check(c, s, b, {v}, bs, true, false, dtype, where + sv + " on the left");
        check(c, a, s, as, {v}, false, true, dtype, where + sv + " on the right");
      }
    }
  }
}

// Random values: the vector and the scalar loops agree over long runs (the thread pool's chunks
// included), both broadcast shapes (a column against a row) among them.
TEST_P(BinaryVecOps, LongRunsAndBroadcastRowsAgreeWithTheReference) {
  const ScalarType dtype = GetParam();
  const int64_t rows = 37, cols = 1029;
  std::vector<double> col(rows), row(cols);
  for (int64_t i = 0; i < rows; ++i) {
    col[i] = std::ldexp(static_cast<double>(i * 7919 % 613) - 300, -3);
  }
  for (int64_t j = 0; j < cols; ++j) {
    row[j] = std::ldexp(static_cast<double>(j * 104729 % 211) - 105, -4);
  }
  const Tensor a = test::tensor(col, {rows, 1}, dtype), b = test::tensor(row, {1, cols}, dtype);
  for (const Case& c : cases()) {
    const Tensor out = c.op(a, b);
    const std::vector<double> got = test::values(out);
    ASSERT_EQ(static_cast<int64_t>(got.size()), rows * cols);
    int bad = 0;
    for (int64_t i = 0; i < rows && bad < 5; ++i) {
      for (int64_t j = 0; j < cols && bad < 5; ++j) {
        const double want = c.ref(col[i], row[j], dtype == kFloat);
        if (!agrees(c, col[i], row[j], got[i * cols + j], want, dtype == kFloat)) {
          ++bad;
          ADD_FAILURE() << c.name << "(" << col[i] << ", " << row[j] << ") = " << got[i * cols + j]
                        << ", want " << want;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FloatAndDouble, BinaryVecOps, ::testing::Values(kFloat, kDouble),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace opd
