#include "opd/scalar.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "error_text.h"
#include "opd/error.h"

namespace opd {
namespace {

using test_util::error_text;

TEST(Scalar, ConstructorPicksTheType) {
  EXPECT_EQ(Scalar().type(), kLong);
  EXPECT_EQ(Scalar().to_int64(), 0);
  EXPECT_EQ(Scalar(3).type(), kLong);
  EXPECT_EQ(Scalar(int8_t{-3}).type(), kLong);
  EXPECT_EQ(Scalar(uint8_t{200}).to_int64(), 200);
  EXPECT_EQ(Scalar(uint32_t{4000000000u}).to_int64(), 4000000000);
  EXPECT_EQ(Scalar(true).type(), kBool);
  EXPECT_EQ(Scalar(2.5).type(), kDouble);
  EXPECT_EQ(Scalar(2.5f).type(), kDouble);
  EXPECT_EQ(Scalar(std::complex<double>(1, 2)).type(), kComplexDouble);
  EXPECT_EQ(Scalar(std::complex<float>(1, 2)).type(), kComplexDouble);
  static_assert(!std::is_constructible_v<Scalar, int*>, "a pointer must not become a bool");
}

TEST(Scalar, Predicates) {
  Scalar i(1), b(false), d(1.5), z(std::complex<double>(0, 1));
  EXPECT_TRUE(i.is_integral(false));
  EXPECT_TRUE(i.is_integral(true));
  EXPECT_FALSE(b.is_integral(false));
  EXPECT_TRUE(b.is_integral(true));
  EXPECT_TRUE(b.is_boolean());
  EXPECT_FALSE(i.is_boolean());
  EXPECT_TRUE(d.is_floating_point());
  EXPECT_FALSE(d.is_integral(true));
  EXPECT_TRUE(z.is_complex());
  EXPECT_FALSE(z.is_floating_point());
}

TEST(Scalar, Conversions) {
  EXPECT_EQ(Scalar(2.7).to<int64_t>(), 2);
  EXPECT_EQ(Scalar(-2.7).to_int64(), -2);
  EXPECT_EQ(Scalar(7).to_double(), 7.0);
  EXPECT_EQ(Scalar(7).to<float>(), 7.0f);
  EXPECT_TRUE(Scalar(1).to_bool());
  EXPECT_FALSE(Scalar(0.0).to_bool());
  EXPECT_EQ(Scalar(true).to_int64(), 1);
  EXPECT_EQ(Scalar(3).to_complex_double(), std::complex<double>(3, 0));
  EXPECT_EQ(Scalar(std::complex<double>(4, 0)).to_double(), 4.0);
  EXPECT_EQ(Scalar(std::complex<double>(1, 2)).to<std::complex<float>>(),
            std::complex<float>(1, 2));
  EXPECT_EQ(Scalar(100).to<int8_t>(), 100);
  EXPECT_EQ(Scalar(-1).to<uint8_t>(), 255);  // wraps, as c10::checked_convert allows
  EXPECT_TRUE(std::isinf(Scalar(INFINITY).to<float>()));
  EXPECT_TRUE(std::isnan(Scalar(NAN).to<double>()));
  EXPECT_EQ(Scalar(-9.0e18).to_int64(), int64_t{-9000000000000000000});
}

TEST(Scalar, ConversionOverflowNamesTheType) {
  EXPECT_EQ(error_text<Error>([] { Scalar(300).to<int8_t>(); }),
            "value cannot be converted to type int8_t without overflow");
  // opd::Error itself, Python's RuntimeError, as c10::checked_convert's: not a ValueError.
  try {
    Scalar(300).to<int8_t>();
  } catch (const ValueError&) {
    ADD_FAILURE() << "a ValueError; torch raises RuntimeError";
  } catch (const Error&) {
  }
  EXPECT_EQ(error_text<Error>([] { Scalar(-256).to<uint8_t>(); }),
            "value cannot be converted to type uint8_t without overflow");
  EXPECT_EQ(error_text<Error>([] { Scalar(1e40).to<float>(); }),
            "value cannot be converted to type float without overflow");
  EXPECT_EQ(error_text<Error>([] { Scalar(std::complex<double>(1, 1)).to_double(); }),
            "value cannot be converted to type double without overflow");
  EXPECT_EQ(error_text<Error>([] { Scalar(NAN).to_int64(); }),
            "value cannot be converted to type int64_t without overflow");
  EXPECT_EQ(error_text<Error>([] { Scalar(9.3e18).to_int64(); }),
            "value cannot be converted to type int64_t without overflow");
  // Converting to bool never overflows (c10::checked_convert): non-zero is true.
  EXPECT_TRUE(Scalar(2).to_bool());
  EXPECT_TRUE(Scalar(-0.5).to_bool());
  EXPECT_TRUE(Scalar(NAN).to_bool());
  EXPECT_FALSE(Scalar(0.0).to_bool());
  EXPECT_EQ(error_text<Error>([] { (void)Scalar(std::numeric_limits<uint64_t>::max()); }),
            "value cannot be converted to type int64_t without overflow");
}

TEST(Scalar, StrIsPythonRepr) {
  EXPECT_EQ(Scalar(3).str(), "3");
  EXPECT_EQ(Scalar(-3).str(), "-3");
  EXPECT_EQ(Scalar(2.5).str(), "2.5");
  EXPECT_EQ(Scalar(2.0).str(), "2.0");
  EXPECT_EQ(Scalar(-0.0).str(), "-0.0");
  EXPECT_EQ(Scalar(0.1).str(), "0.1");
  EXPECT_EQ(Scalar(1e-5).str(), "1e-05");
  EXPECT_EQ(Scalar(1e15).str(), "1000000000000000.0");
  EXPECT_EQ(Scalar(1e16).str(), "1e+16");
  EXPECT_EQ(Scalar(INFINITY).str(), "inf");
  EXPECT_EQ(Scalar(-INFINITY).str(), "-inf");
  EXPECT_EQ(Scalar(NAN).str(), "nan");
  EXPECT_EQ(Scalar(true).str(), "True");
  EXPECT_EQ(Scalar(false).str(), "False");
  EXPECT_EQ(Scalar(std::complex<double>(1, 2)).str(), "(1+2j)");
  EXPECT_EQ(Scalar(std::complex<double>(1.5, -0.5)).str(), "(1.5-0.5j)");
  EXPECT_EQ(Scalar(std::complex<double>(0, 2)).str(), "2j");
  EXPECT_EQ(Scalar(std::complex<double>(0, -2)).str(), "-2j");
  EXPECT_EQ(Scalar(std::complex<double>(1, 0)).str(), "(1+0j)");
  EXPECT_EQ(fmt::format("{}", Scalar(4)), "4");
}

TEST(Scalar, EqualityNeedsSameTypeAndValue) {
  EXPECT_EQ(Scalar(1), Scalar(int64_t{1}));
  EXPECT_NE(Scalar(1), Scalar(2));
  EXPECT_NE(Scalar(1), Scalar(1.0));
  EXPECT_NE(Scalar(true), Scalar(1));
  EXPECT_EQ(Scalar(0.5), Scalar(0.5f));
  EXPECT_NE(Scalar(NAN), Scalar(NAN));
  EXPECT_EQ(Scalar(std::complex<double>(1, 2)), Scalar(std::complex<float>(1, 2)));
  EXPECT_NE(Scalar(std::complex<double>(1, 2)), Scalar(std::complex<double>(1, 3)));
}

}  // namespace
}  // namespace opd
