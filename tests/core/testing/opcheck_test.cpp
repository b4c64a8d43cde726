// opd::testing::opcheck (opd/testing/opcheck.h): aten operators that honour their schemas pass
// every sub-check; operators registered here that break a rule fail with the Python opcheck's
// texts (tests/python/test_opcheck.py asserts the same ones), and the rule only a boxed caller
// can see, an out= kernel that returns another tensor than `out`, is caught.

#include "opd/testing/opcheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "opd/autograd.h"
#include "opd/library.h"
#include "opd/ops.h"
#include "opd/plugin_manager.h"

namespace opd {
namespace {

using opd::testing::opcheck;
using opd::testing::OpCheckError;
using opd::testing::OpCheckOptions;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::vector<std::string> kAll{"test_schema", "test_autograd_registration", "test_faketensor"};

class OpCheck : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { plugins().load_default(); }
};

Tensor ones3() { return ones({3}); }
Tensor arange6() { return arange(0, 6, 1, TensorOptions().dtype(kFloat)).view({2, 3}); }

std::vector<std::string> names(const std::vector<testing::OpCheckResult>& results) {
  std::vector<std::string> out;
  for (const auto& r : results) out.push_back(r.test_util);
  return out;
}

void expect_all_pass(const OperatorHandle& op, const Stack& stack) {
  const auto results = opcheck(op, stack);
  EXPECT_EQ(names(results), kAll);
  for (const auto& r : results)
    EXPECT_TRUE(r.ok()) << op.operator_name().to_string() << " " << r.test_util << ": "
                        << r.message;
}

// The failure of sub-check `util` (OpCheckError's text), and its cause's text, which must hold
// `expected`.
std::string failure(const OperatorHandle& op, const Stack& stack, const std::string& util,
                    const std::string& expected) {
  OpCheckOptions options;
  options.test_utils = {util};
  try {
    opcheck(op, stack, options);
  } catch (const OpCheckError& e) {
    EXPECT_THAT(e.msg(), StartsWith("opcheck(op, ...): " + util + " failed with "));
    EXPECT_THAT(e.msg(), ::testing::EndsWith(" (scroll up for stack trace)"));
    try {
      std::rethrow_if_nested(e);
      ADD_FAILURE() << "OpCheckError without its cause";
    } catch (const Error& cause) {
      EXPECT_THAT(cause.msg(), HasSubstr(expected));
      EXPECT_THAT(e.msg(), HasSubstr(cause.msg()));
      return cause.msg();
    }
  }
  ADD_FAILURE() << util << " passed; expected: " << expected;
  return "";
}

// ---- aten operators that honour their schemas ----------------------------------------------

TEST_F(OpCheck, AtenOperatorsPass) {
  expect_all_pass(find_operator_or_throw("aten::add", "Tensor"),
                  {IValue(arange6()), IValue(ones3()), IValue(1)});
  expect_all_pass(find_operator_or_throw("aten::add", "Tensor"),
                  {IValue(arange6().requires_grad_(true)), IValue(ones3()), IValue(2)});
  expect_all_pass(find_operator_or_throw("aten::add_", "Tensor"),
                  {IValue(arange6()), IValue(ones3()), IValue(1)});
  expect_all_pass(find_operator_or_throw("aten::add", "out"),
                  {IValue(arange6()), IValue(ones3()), IValue(1), IValue(empty({2, 3}))});
  expect_all_pass(find_operator_or_throw("aten::view"),
                  {IValue(arange6().requires_grad_(true)), IValue(std::vector<int64_t>{3, 2})});
}

TEST_F(OpCheck, TheCallersTensorsAreLeftUntouched) {
  Tensor x = arange6();
  const Tensor y = ones3();
  expect_all_pass(find_operator_or_throw("aten::add_", "Tensor"),
                  {IValue(x), IValue(y), IValue(1)});
  EXPECT_EQ(x.version(), 0u);
  EXPECT_TRUE(equal(x, arange6()));
}

TEST_F(OpCheck, MetaInputsSkipEveryCheck) {
  Library lib(Library::DEF, "opcheck_cpp_skip");
  lib.def("f(Tensor x) -> Tensor");  // no kernel at all: any check that ran would fail
  const auto results = opcheck(find_operator_or_throw("opcheck_cpp_skip::f"),
                               {IValue(empty({3}, TensorOptions().device(Device(kMeta))))});
  EXPECT_EQ(names(results), kAll);
  for (const auto& r : results) EXPECT_EQ(r.message, "SUCCESS");
}

// ---- test_schema ---------------------------------------------------------------------------

TEST_F(OpCheck, MutatingAnArgumentNotDeclaredMutable) {
  Library lib(Library::DEF, "opcheck_cpp_mut");
  lib.def("mutates(Tensor x) -> Tensor");
  lib.def("touches(Tensor x) -> Tensor");
  lib.impl("mutates", DispatchKey::CPU, [](const Tensor& x) { return x.add_(1) + 1; });
  lib.impl("touches", DispatchKey::CPU, [](const Tensor& x) {
    x.bump_version();  // the same data, a new version: a mutation still
    return x + 1;
  });
  for (const char* name : {"opcheck_cpp_mut::mutates", "opcheck_cpp_mut::touches"}) {
    failure(find_operator_or_throw(name), {IValue(ones3())}, "test_schema",
            "Argument x is not defined as mutable but was mutated");
  }
}

TEST_F(OpCheck, ReturningAnInputOrItsViewUndeclared) {
  Library lib(Library::DEF, "opcheck_cpp_ret");
  lib.def("same(Tensor x) -> Tensor");
  lib.def("flat(Tensor self) -> Tensor");
  lib.impl("same", DispatchKey::CPU, [](const Tensor& x) { return x; });
  lib.impl("flat", DispatchKey::CPU, [](const Tensor& self) { return self.view({-1}); });
  EXPECT_EQ(failure(find_operator_or_throw("opcheck_cpp_ret::same"), {IValue(ones3())},
                    "test_schema", ""),
            "Argument x is not defined to alias output but was aliasing");
  // self is named input, as torch names it.
  EXPECT_EQ(failure(find_operator_or_throw("opcheck_cpp_ret::flat"), {IValue(ones3())},
                    "test_schema", ""),
            "Argument input is not defined to alias output but was aliasing");
}

TEST_F(OpCheck, DeclaringAnAliasAndReturningANewTensorOrTheInputItself) {
  Library lib(Library::DEF, "opcheck_cpp_alias");
  lib.def("fake_view(Tensor(a) x) -> Tensor(a)");
  lib.def("same(Tensor(a) x) -> Tensor(a)");
  lib.impl("fake_view", DispatchKey::CPU, [](const Tensor& x) { return x.clone(); });
  lib.impl("same", DispatchKey::CPU, [](const Tensor& x) { return x; });
  EXPECT_EQ(failure(find_operator_or_throw("opcheck_cpp_alias::fake_view"), {IValue(ones3())},
                    "test_schema", ""),
            "Argument x is defined to alias output but was not aliasing");
  EXPECT_EQ(failure(find_operator_or_throw("opcheck_cpp_alias::same"), {IValue(ones3())},
                    "test_schema", ""),
            "Dispatcher operators below autograd are not allowed to directly return inputs.\n"
            "However, we found that `outputs[0] is x");
}

// Note [Written results are the arguments] in core/src/testing/opcheck.cpp.
TEST_F(OpCheck, AnOutKernelMustReturnTheOutArgumentItself) {
  Library lib(Library::DEF, "opcheck_cpp_out");
  lib.def("twice.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("copied.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
  lib.def("viewed.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)");
  // Boxed kernels: the stack holds x and out; each leaves its result in their place.
  const auto kernel = [](int what) {
    return [what](const OperatorHandle&, Stack* s) {
      Tensor x = (*s)[0].to_tensor(), out = (*s)[1].to_tensor();
      out.copy_(x * 2);
      s->clear();
      s->push_back(IValue(what == 0 ? out : what == 1 ? out.clone() : out.view({-1})));
    };
  };
  lib.impl("twice.out", DispatchKey::CPU, kernel(0));
  lib.impl("copied.out", DispatchKey::CPU, kernel(1));
  lib.impl("viewed.out", DispatchKey::CPU, kernel(2));
  const Stack stack{IValue(ones3()), IValue(empty({3}))};
  OpCheckOptions schema_only;
  schema_only.test_utils = {"test_schema"};
  EXPECT_TRUE(
      opcheck(find_operator_or_throw("opcheck_cpp_out::twice", "out"), stack, schema_only)[0].ok());
  for (const char* name : {"opcheck_cpp_out::copied", "opcheck_cpp_out::viewed"}) {
    EXPECT_EQ(failure(find_operator_or_throw(name, "out"), stack, "test_schema", ""),
              "Argument out is written and returned as outputs[0] (Tensor(a!)), but "
              "`outputs[0] is out` is False: an in-place or out= kernel must return the "
              "argument it wrote")
        << name;
  }
}

// Note [Written results are the arguments]: no backend kernel, so the call goes through autograd.
TEST_F(OpCheck, AnOperatorServedOnlyAtAnAutogradKeyIsCheckedThroughAutograd) {
  Library lib(Library::DEF, "opcheck_cpp_adonly");
  lib.def("twice(Tensor x) -> Tensor");
  lib.impl("twice", DispatchKey::Autograd, [](const Tensor& x) { return x * 2; });
  OpCheckOptions options;
  options.test_utils = {"test_schema", "test_autograd_registration"};
  const auto results = opcheck(find_operator_or_throw("opcheck_cpp_adonly::twice"),
                               {IValue(ones3().requires_grad_(true))}, options);
  EXPECT_EQ(names(results), options.test_utils);
  for (const auto& r : results) EXPECT_TRUE(r.ok()) << r.test_util << ": " << r.message;
}

TEST_F(OpCheck, OutputsThatAliasEachOtherUnexpectedly) {
  Library lib(Library::DEF, "opcheck_cpp_pair");
  lib.def("pair(Tensor x) -> (Tensor, Tensor)");
  lib.impl("pair", DispatchKey::CPU, [](const Tensor& x) {
    Tensor y = x * 2;
    return std::tuple<Tensor, Tensor>(y, y.view({-1}));
  });
  failure(find_operator_or_throw("opcheck_cpp_pair::pair"), {IValue(ones3())}, "test_schema",
          "Outputs 0 and 1 alias unexpectedly");
}

// ---- test_faketensor -----------------------------------------------------------------------

TEST_F(OpCheck, AMetaKernelThatDisagreesWithTheRealOne) {
  Library lib(Library::DEF, "opcheck_cpp_fake");
  lib.def("f(Tensor x) -> Tensor");
  lib.impl("f", DispatchKey::CPU, [](const Tensor& x) { return x * 2; });
  lib.impl("f", DispatchKey::Meta, [](const Tensor& x) {
    return empty({x.size(0) + 1}, TensorOptions().device(Device(kMeta)));
  });
  const Stack stack{IValue(ones({3, 2}))};
  OpCheckOptions options;
  options.test_utils = {"test_faketensor"};
  try {
    opcheck(find_operator_or_throw("opcheck_cpp_fake::f"), stack, options);
    ADD_FAILURE() << "test_faketensor passed";
  } catch (const OpCheckError& e) {
    try {
      std::rethrow_if_nested(e);
      ADD_FAILURE() << "OpCheckError without its cause";
    } catch (const testing::MetadataMismatchError& cause) {
      EXPECT_EQ(cause.msg(),
                "When comparing the output of opcheck_cpp_fake.f.default on meta and concrete "
                "Tensors, found mismatched tensor metadata: Shapes opdispatch.Size([3, 2]) and "
                "opdispatch.Size([4]) are not equal!");
    }
  }
}

TEST_F(OpCheck, AnOperatorWithoutAMetaKernel) {
  Library lib(Library::DEF, "opcheck_cpp_nometa");
  lib.def("h(Tensor x) -> Tensor");
  lib.impl("h", DispatchKey::CPU, [](const Tensor& x) { return x * 2; });
  EXPECT_EQ(failure(find_operator_or_throw("opcheck_cpp_nometa::h"), {IValue(ones3())},
                    "test_faketensor", ""),
            "opcheck_cpp_nometa.h.default has no meta implementation: register a Meta kernel "
            "for opcheck_cpp_nometa::h (Library.impl(..., 'Meta'))");
}

// ---- test_autograd_registration ------------------------------------------------------------

TEST_F(OpCheck, InputsThatRequireGradAndNoAutogradKernel) {
  Library lib(Library::DEF, "opcheck_cpp_noad");
  lib.def("k(Tensor x) -> Tensor");
  lib.impl("k", DispatchKey::CPU, [](const Tensor& x) { return x * 2; });
  const OperatorHandle k = find_operator_or_throw("opcheck_cpp_noad::k");
  OpCheckOptions options;
  options.test_utils = {"test_autograd_registration"};
  EXPECT_TRUE(opcheck(k, {IValue(ones3())}, options)[0].ok());  // nothing requires grad
  failure(k, {IValue(ones3().requires_grad_(true))}, "test_autograd_registration",
          "opcheck_cpp_noad::k: its inputs require grad but the operator does not have an "
          "autograd kernel defined at an autograd key (e.g. DispatchKey::Autograd) or a "
          "CompositeImplicitAutograd kernel, so the call was served by the autograd fallback");
  EXPECT_EQ(autograd::fallback_mode(), "warn");  // restored
}

TEST_F(OpCheck, CompositeImplicitAutogradCountsAsRegistered) {
  Library lib(Library::DEF, "opcheck_cpp_cia");
  lib.def("n(Tensor x) -> Tensor");
  lib.impl("n", DispatchKey::CompositeImplicitAutograd, [](const Tensor& x) { return x * 2; });
  expect_all_pass(find_operator_or_throw("opcheck_cpp_cia::n"),
                  {IValue(ones3().requires_grad_(true))});
}

// ---- the result, the errors, the arguments -------------------------------------------------

TEST_F(OpCheck, WithoutRaisingEveryFailureIsReturned) {
  Library lib(Library::DEF, "opcheck_cpp_dict");
  lib.def("bad(Tensor x) -> Tensor");
  lib.impl("bad", DispatchKey::CPU, [](const Tensor& x) { return x; });
  OpCheckOptions options;
  options.raise_exception = false;
  const auto results =
      opcheck(find_operator_or_throw("opcheck_cpp_dict::bad"), {IValue(ones3())}, options);
  ASSERT_EQ(names(results), kAll);
  EXPECT_EQ(results[0].message, "Argument x is not defined to alias output but was aliasing");
  EXPECT_THROW(std::rethrow_exception(results[0].error), Error);
  EXPECT_EQ(results[1].message, "SUCCESS");
  EXPECT_TRUE(results[1].ok());
  EXPECT_THAT(results[2].message, HasSubstr("has no meta implementation"));
}

TEST_F(OpCheck, TestUtilsNamesAndTheStack) {
  const OperatorHandle add = find_operator_or_throw("aten::add", "Tensor");
  const Stack stack{IValue(ones3()), IValue(ones3()), IValue(1)};
  OpCheckOptions options;
  options.test_utils = {"ALL"};
  EXPECT_EQ(names(opcheck(add, stack, options)), kAll);
  options.test_utils = {"test_faketensor", "test_schema"};
  EXPECT_EQ(names(opcheck(add, stack, options)),
            (std::vector<std::string>{"test_faketensor", "test_schema"}));
  options.test_utils = {"test_schem"};
  try {
    opcheck(add, stack, options);
    ADD_FAILURE() << "no ValueError";
  } catch (const ValueError& e) {
    EXPECT_EQ(e.msg(),
              "opcheck(op, ..., test_utils=('test_schem',)), expected test_utils to be subset of "
              "('test_schema', 'test_autograd_registration', 'test_faketensor') but it was not");
  }
  options.test_utils = {"test_schema", "test_aot_dispatch_dynamic"};
  try {
    opcheck(add, stack, options);
    ADD_FAILURE() << "no ValueError";
  } catch (const ValueError& e) {
    EXPECT_THAT(e.msg(), HasSubstr("(test_aot_dispatch_dynamic: not available, opdispatch has "
                                   "no ahead-of-time compiler)"));
  }
  EXPECT_THROW(opcheck(add, {IValue(ones3()), IValue(ones3())}), TypeError);
}

}  // namespace
}  // namespace opd
