// What a plugin holds of an operator (opd/operator_handle.h): found by name, described, and
// called boxed or with C++ values through call_as. Only plugin_api headers are included: this is
// the plugin's view.

#include "opd/operator_handle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>

#include "opd/error.h"
#include "opd/library.h"
#include "opd/tensor.h"

namespace opd {
namespace {

using ::testing::HasSubstr;

class OperatorHandleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    lib_.def("scaled(Tensor self, float factor) -> Tensor", [](const Tensor& self, double factor) {
      Tensor out = empty_like_cpu(self);
      for (int64_t i = 0; i < self.numel(); ++i) {
        out.data_ptr<float>()[i] = static_cast<float>(self.data_ptr<float>()[i] * factor);
      }
      return out;
    });
    lib_.def("pair(int a) -> (int, int)",
             [](int64_t a) { return std::tuple<int64_t, int64_t>(a, a + 1); });
    lib_.def("count(int a) -> ()", [this](int64_t a) { calls_ += a; });
  }
  static Tensor empty_like_cpu(const Tensor& t) {
    static thread_local float storage[16];
    return from_blob(storage, t.sizes(), kFloat);
  }
  Library lib_{Library::FRAGMENT, "test_handle"};
  int64_t calls_ = 0;
  float buf_[3] = {1, 2, 3};
  Tensor x_ = from_blob(buf_, {3}, kFloat);
};

TEST_F(OperatorHandleTest, FindsAndDescribesAnOperator) {
  auto op = find_operator("test_handle::scaled");
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->operator_name().to_string(), "test_handle::scaled");
  EXPECT_TRUE(op->has_schema());
  EXPECT_EQ(op->schema_string(), "test_handle::scaled(Tensor self, float factor) -> Tensor");
  EXPECT_THAT(op->debug(), HasSubstr("registered at tests/plugin_api/operator_handle_test.cpp"));
  EXPECT_TRUE(op->has_kernel_for_dispatch_key(DispatchKey::CompositeImplicitAutograd));
  EXPECT_FALSE(op->has_kernel_for_dispatch_key(DispatchKey::CPU));
  EXPECT_EQ(*op, find_operator_or_throw("test_handle::scaled"));
  EXPECT_FALSE(find_operator("test_handle::absent").has_value());
}

TEST_F(OperatorHandleTest, AMissingOperatorIsAnErrorNamingIt) {
  try {
    find_operator_or_throw("test_handle::absent", "overload");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("Could not find schema for test_handle::absent.overload"));
  }
}

TEST_F(OperatorHandleTest, CallAsBoxesTheArgumentsAndUnboxesOneResult) {
  Tensor y = find_operator_or_throw("test_handle::scaled").call_as<Tensor>(x_, 2.0);
  ASSERT_EQ(y.numel(), 3);
  EXPECT_EQ(y.data_ptr<float>()[2], 6.0f);
}

TEST_F(OperatorHandleTest, CallAsReturnsATupleForSeveralResultsAndNothingForNone) {
  auto [a, b] =
      find_operator_or_throw("test_handle::pair").call_as<std::tuple<int64_t, int64_t>>(int64_t{4});
  EXPECT_EQ(a, 4);
  EXPECT_EQ(b, 5);
  find_operator_or_throw("test_handle::count").call_as<void>(int64_t{3});
  EXPECT_EQ(calls_, 3);
}

TEST_F(OperatorHandleTest, CallAsChecksTheArgumentsAgainstTheSchema) {
  try {
    find_operator_or_throw("test_handle::scaled").call_as<Tensor>(x_, std::string("two"));
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("test_handle::scaled: argument 'factor' (position 2) must be "
                                   "float, not str"));
  }
}

TEST_F(OperatorHandleTest, CallAsRefusesAResultOfTheWrongArity) {
  EXPECT_THROW((find_operator_or_throw("test_handle::pair")
                    .call_as<std::tuple<int64_t, int64_t, int64_t>>(int64_t{1})),
               Error);
}

}  // namespace
}  // namespace opd
