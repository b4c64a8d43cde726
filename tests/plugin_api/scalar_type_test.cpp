#include "opd/scalar_type.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "error_text.h"
#include "opd/error.h"
#include "opd/layout.h"

namespace opd {
namespace {

constexpr ScalarType kAll[] = {kBool, kByte,     kChar,  kShort,  kInt,          kLong,
                               kHalf, kBFloat16, kFloat, kDouble, kComplexFloat, kComplexDouble};

using test_util::error_text;

TEST(ScalarType, ElementSizes) {
  EXPECT_EQ(element_size(kBool), 1u);
  EXPECT_EQ(element_size(kByte), 1u);
  EXPECT_EQ(element_size(kChar), 1u);
  EXPECT_EQ(element_size(kShort), 2u);
  EXPECT_EQ(element_size(kInt), 4u);
  EXPECT_EQ(element_size(kLong), 8u);
  EXPECT_EQ(element_size(kHalf), 2u);
  EXPECT_EQ(element_size(kBFloat16), 2u);
  EXPECT_EQ(element_size(kFloat), 4u);
  EXPECT_EQ(element_size(kDouble), 8u);
  EXPECT_EQ(element_size(kComplexFloat), 8u);
  EXPECT_EQ(element_size(kComplexDouble), 16u);
  EXPECT_EQ(element_size(ScalarType::Undefined), 0u);
  static_assert(element_size(kFloat) == sizeof(float));
}

TEST(ScalarType, CategoriesFollowPyTorch) {
  for (ScalarType t : {kHalf, kBFloat16, kFloat, kDouble}) EXPECT_TRUE(is_floating_point(t)) << t;
  for (ScalarType t : {kBool, kLong, kComplexFloat}) EXPECT_FALSE(is_floating_point(t)) << t;
  for (ScalarType t : {kByte, kChar, kShort, kInt, kLong}) {
    EXPECT_TRUE(is_integral(t, false)) << t;
    EXPECT_TRUE(is_integral(t, true)) << t;
  }
  EXPECT_FALSE(is_integral(kBool, false));
  EXPECT_TRUE(is_integral(kBool, true));
  EXPECT_FALSE(is_integral(kFloat, true));
  EXPECT_TRUE(is_complex(kComplexFloat));
  EXPECT_TRUE(is_complex(kComplexDouble));
  EXPECT_FALSE(is_complex(kDouble));
}

TEST(ScalarType, ToStringUsesC10Names) {
  const char* expected[] = {"Bool", "Byte",     "Char",  "Short",  "Int",          "Long",
                            "Half", "BFloat16", "Float", "Double", "ComplexFloat", "ComplexDouble"};
  for (int i = 0; i < kNumScalarTypes; ++i) EXPECT_STREQ(to_string(kAll[i]), expected[i]);
  EXPECT_STREQ(to_string(ScalarType::Undefined), "Undefined");
}

TEST(ScalarType, PythonNames) {
  const char* expected[] = {"bool",    "uint8",    "int8",    "int16",   "int32",     "int64",
                            "float16", "bfloat16", "float32", "float64", "complex64", "complex128"};
  for (int i = 0; i < kNumScalarTypes; ++i) EXPECT_STREQ(python_name(kAll[i]), expected[i]);
}

TEST(ScalarType, ParseRoundTripsBothSpellings) {
  for (ScalarType t : kAll) {
    EXPECT_EQ(parse_scalar_type(to_string(t)), t);
    EXPECT_EQ(parse_scalar_type(python_name(t)), t);
    EXPECT_EQ(parse_scalar_type(std::string("torch.") + python_name(t)), t);
  }
}

TEST(ScalarType, ParseAcceptsPythonAliases) {
  EXPECT_EQ(parse_scalar_type("float"), kFloat);
  EXPECT_EQ(parse_scalar_type("double"), kDouble);
  EXPECT_EQ(parse_scalar_type("half"), kHalf);
  EXPECT_EQ(parse_scalar_type("long"), kLong);
  EXPECT_EQ(parse_scalar_type("int"), kInt);
  EXPECT_EQ(parse_scalar_type("short"), kShort);
  EXPECT_EQ(parse_scalar_type("uint8"), kByte);
  EXPECT_EQ(parse_scalar_type("int8"), kChar);
  EXPECT_EQ(parse_scalar_type("cfloat"), kComplexFloat);
  EXPECT_EQ(parse_scalar_type("cdouble"), kComplexDouble);
  EXPECT_EQ(parse_scalar_type("bfloat16"), kBFloat16);
  EXPECT_EQ(parse_scalar_type("complex64"), kComplexFloat);
  EXPECT_EQ(parse_scalar_type("complex128"), kComplexDouble);
  EXPECT_EQ(parse_scalar_type("Float32"), kFloat);
}

TEST(ScalarType, ParseRejectsUnknownNameNamingIt) {
  EXPECT_THROW(parse_scalar_type("float128"), ValueError);
  EXPECT_EQ(error_text<ValueError>([] { parse_scalar_type("floaty"); }),
            "Unknown scalar type 'floaty'; expected a dtype name such as float32, float, int64, "
            "long or bool");
  EXPECT_THROW(parse_scalar_type(""), ValueError);
  EXPECT_THROW(parse_scalar_type("FLOAT"), ValueError);  // names are case-sensitive
}

TEST(ScalarType, PromoteTypesMatchesPyTorch) {
  EXPECT_EQ(promote_types(kBool, kBool), kBool);
  EXPECT_EQ(promote_types(kBool, kByte), kByte);
  EXPECT_EQ(promote_types(kBool, kChar), kChar);
  EXPECT_EQ(promote_types(kByte, kChar), kShort);
  EXPECT_EQ(promote_types(kByte, kShort), kShort);
  EXPECT_EQ(promote_types(kByte, kLong), kLong);
  EXPECT_EQ(promote_types(kInt, kLong), kLong);
  EXPECT_EQ(promote_types(kLong, kHalf), kHalf);
  EXPECT_EQ(promote_types(kLong, kFloat), kFloat);
  EXPECT_EQ(promote_types(kInt, kBFloat16), kBFloat16);
  EXPECT_EQ(promote_types(kHalf, kBFloat16), kFloat);
  EXPECT_EQ(promote_types(kHalf, kFloat), kFloat);
  EXPECT_EQ(promote_types(kFloat, kDouble), kDouble);
  EXPECT_EQ(promote_types(kBFloat16, kComplexFloat), kComplexFloat);
  EXPECT_EQ(promote_types(kFloat, kComplexFloat), kComplexFloat);
  EXPECT_EQ(promote_types(kDouble, kComplexFloat), kComplexDouble);
  EXPECT_EQ(promote_types(kComplexFloat, kComplexDouble), kComplexDouble);
  EXPECT_EQ(promote_types(kBool, kComplexDouble), kComplexDouble);
  EXPECT_EQ(promote_types(kFloat, ScalarType::Undefined), ScalarType::Undefined);
  EXPECT_EQ(promote_types(ScalarType::Undefined, kFloat), ScalarType::Undefined);
}

TEST(ScalarType, PromoteTypesIsSymmetricIdempotentAndNeverNarrows) {
  for (ScalarType a : kAll) {
    EXPECT_EQ(promote_types(a, a), a) << a;
    for (ScalarType b : kAll) {
      ScalarType r = promote_types(a, b);
      EXPECT_EQ(r, promote_types(b, a)) << a << " " << b;
      EXPECT_EQ(promote_types(r, a), r) << a << " " << b;
      EXPECT_EQ(promote_types(r, b), r) << a << " " << b;
    }
  }
}

TEST(ScalarType, CppTypeMapping) {
  static_assert(cpp_type_to_scalar_type<bool>() == kBool);
  static_assert(cpp_type_to_scalar_type<uint8_t>() == kByte);
  static_assert(cpp_type_to_scalar_type<int8_t>() == kChar);
  static_assert(cpp_type_to_scalar_type<int16_t>() == kShort);
  static_assert(cpp_type_to_scalar_type<int32_t>() == kInt);
  static_assert(cpp_type_to_scalar_type<int64_t>() == kLong);
  static_assert(cpp_type_to_scalar_type<float>() == kFloat);
  static_assert(cpp_type_to_scalar_type<const double>() == kDouble);
  static_assert(cpp_type_to_scalar_type<std::complex<float>>() == kComplexFloat);
  static_assert(cpp_type_to_scalar_type<std::complex<double>>() == kComplexDouble);
  static_assert(std::is_same_v<ScalarTypeToCpp<kInt>::type, int32_t>);
  static_assert(std::is_same_v<ScalarTypeToCpp<kComplexFloat>::type, std::complex<float>>);
  SUCCEED();
}

TEST(ScalarType, PrintsThroughFmtAndStreams) {
  EXPECT_EQ(fmt::format("{}", kLong), "Long");
  std::ostringstream out;
  out << kBFloat16;
  EXPECT_EQ(out.str(), "BFloat16");
}

TEST(Layout, NamesAndParsing) {
  EXPECT_STREQ(to_string(Layout::Strided), "Strided");
  EXPECT_STREQ(to_string(Layout::SparseCsr), "SparseCsr");
  EXPECT_STREQ(python_name(Layout::Strided), "strided");
  EXPECT_STREQ(python_name(Layout::Sparse), "sparse_coo");
  for (Layout l : {Layout::Strided, Layout::Sparse, Layout::SparseCsr, Layout::Mkldnn}) {
    EXPECT_EQ(parse_layout(to_string(l)), l);
    EXPECT_EQ(parse_layout(python_name(l)), l);
  }
  EXPECT_EQ(parse_layout("torch.strided"), Layout::Strided);
  EXPECT_EQ(error_text<ValueError>([] { parse_layout("dense"); }),
            "Unknown layout 'dense'; expected one of strided, sparse_coo, sparse_csr, _mkldnn");
  EXPECT_EQ(fmt::format("{}", Layout::Mkldnn), "Mkldnn");
}

TEST(MemoryFormat, NamesAndParsing) {
  EXPECT_STREQ(to_string(MemoryFormat::Contiguous), "Contiguous");
  EXPECT_STREQ(to_string(MemoryFormat::ChannelsLast3d), "ChannelsLast3d");
  EXPECT_STREQ(python_name(MemoryFormat::Contiguous), "contiguous_format");
  EXPECT_STREQ(python_name(MemoryFormat::Preserve), "preserve_format");
  EXPECT_STREQ(python_name(MemoryFormat::ChannelsLast), "channels_last");
  for (MemoryFormat m : {MemoryFormat::Contiguous, MemoryFormat::Preserve,
                         MemoryFormat::ChannelsLast, MemoryFormat::ChannelsLast3d}) {
    EXPECT_EQ(parse_memory_format(to_string(m)), m);
    EXPECT_EQ(parse_memory_format(python_name(m)), m);
  }
  EXPECT_EQ(error_text<ValueError>([] { parse_memory_format("rows"); }),
            "Unknown memory format 'rows'; expected one of contiguous_format, preserve_format, "
            "channels_last, channels_last_3d");
}

}  // namespace
}  // namespace opd
