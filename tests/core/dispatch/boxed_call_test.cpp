// Boxed calls (core/src/dispatch/boxed_call.cpp): before a boxed call dispatches, the stack is
// checked against the operator's schema, and a refused call names the operator, the argument and
// its position, and leaves the stack as it was.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string_view>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/library.h"
#include "opd/tensor.h"

namespace opd {
namespace {

using ::testing::HasSubstr;

OperatorHandle op(std::string_view name, std::string_view overload = "") {
  return Dispatcher::singleton().find_schema_or_throw(name, overload);
}

class BoxedArgumentChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    lib_.def("add(Tensor self, Tensor other, Scalar alpha=1) -> Tensor",
             [](const Tensor& self, const Tensor&, const Scalar&) { return self; });
    lib_.def("opt(Tensor? x, int[] sizes) -> ()", [](const std::optional<Tensor>&, IntArrayRef) {});
  }
  Library lib_{Library::FRAGMENT, "test_kernel_fn_check"};
  float buf_[2] = {};
  Tensor x_ = from_blob(buf_, {2}, kFloat);
};

TEST_F(BoxedArgumentChecks, WrongArgumentTypeThrowsTypeErrorNamingOpArgumentAndPosition) {
  Stack s{x_, int64_t{1}, int64_t{1}};
  try {
    op("test_kernel_fn_check::add").call_boxed(&s);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("test_kernel_fn_check::add: argument 'other' (position 2) must "
                                   "be Tensor, not int"));
  }
}

TEST_F(BoxedArgumentChecks, ScalarArgumentRejectsAString) {
  Stack s{x_, x_, "two"};
  try {
    op("test_kernel_fn_check::add").call_boxed(&s);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("argument 'alpha' (position 3) must be Scalar, not str"));
  }
}

TEST_F(BoxedArgumentChecks, TooFewArgumentsThrowsTypeError) {
  Stack s{x_};
  try {
    op("test_kernel_fn_check::add").call_boxed(&s);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("test_kernel_fn_check::add: expected 3 arguments"));
    EXPECT_THAT(e.msg(), HasSubstr("but the stack holds 1"));
  }
}

TEST_F(BoxedArgumentChecks, OptionalAcceptsNoneAndRejectsOtherTypes) {
  Stack ok{IValue(), std::vector<int64_t>{1}};
  EXPECT_NO_THROW(op("test_kernel_fn_check::opt").call_boxed(&ok));
  Stack bad{int64_t{3}, std::vector<int64_t>{1}};
  try {
    op("test_kernel_fn_check::opt").call_boxed(&bad);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("argument 'x' (position 1) must be Tensor?, not int"));
  }
}

TEST_F(BoxedArgumentChecks, ListElementTypeIsChecked) {
  Stack s{x_, std::vector<double>{1.0}};
  try {
    op("test_kernel_fn_check::opt").call_boxed(&s);
    FAIL() << "expected TypeError";
  } catch (const TypeError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("argument 'sizes' (position 2) must be int[], not float[]"));
  }
}

TEST_F(BoxedArgumentChecks, ARefusedCallLeavesTheStackUntouched) {
  Stack s{x_, int64_t{1}, int64_t{1}};
  EXPECT_THROW(op("test_kernel_fn_check::add").call_boxed(&s), TypeError);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_TRUE(s[0].to_tensor().is_same(x_));
}

}  // namespace
}  // namespace opd
