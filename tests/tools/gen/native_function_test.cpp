// opd-gen's reader on our native_functions.yaml, on PyTorch's own, and on broken files.

#include "native_function.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "opd/error.h"
#include "temp_yaml.h"

namespace {

using opd::gen::load_native_functions;
using opd::gen::LoadReport;
using opd::gen::test::load_error;
using opd::gen::test::TempYaml;
using ::testing::HasSubstr;

TEST(NativeFunctions, OursLoadsStrictly) {
  LoadReport report;
  auto fs = load_native_functions(OPD_NATIVE_FUNCTIONS_YAML, /*strict=*/true, &report);
  EXPECT_EQ(report.entries, fs.size());
  EXPECT_GE(fs.size(), 110u);
  EXPECT_TRUE(report.unknown_fields.empty());
  const auto* add = &fs[0];
  for (const auto& f : fs) {
    if (f.schema.operator_name().to_string() == "aten::add.Tensor") add = &f;
  }
  ASSERT_EQ(add->schema.operator_name().to_string(), "aten::add.Tensor");
  EXPECT_EQ(add->schema.to_string(),
            "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  EXPECT_TRUE(add->function_variant);
  EXPECT_TRUE(add->method_variant);
  // Structured (Note [Structured kernels]): the CPU keeps its own functional kernel.
  EXPECT_EQ(add->structured_delegate, "add.out");
  ASSERT_EQ(add->dispatch.size(), 1u);
  EXPECT_EQ(add->dispatch[0], std::make_pair(std::string("CPU"), std::string("add_Tensor")));
  // Operators without `dispatch:` nor a structured_delegate are the autograd plugin's, which
  // registers them by hand.
  for (const auto& f : fs) {
    if (f.dispatch.empty() && f.structured_delegate.empty()) {
      EXPECT_GT(f.line, add->line) << f.func;
    }
  }
}

TEST(NativeFunctions, PyTorchsOwnParsesWithUnknownFieldsCounted) {
  if (!std::filesystem::exists(OPD_PYTORCH_NATIVE_FUNCTIONS_YAML)) {
    GTEST_SKIP() << OPD_PYTORCH_NATIVE_FUNCTIONS_YAML
                 << " is absent: this test reads PyTorch's own native_functions.yaml from Debian's "
                    "python3-torch 1.13.1 (tools/dev installs it)";
  }
  LoadReport report;
  auto fs = load_native_functions(OPD_PYTORCH_NATIVE_FUNCTIONS_YAML, /*strict=*/false, &report);
  // PyTorch 1.13.1 (Debian's python3-torch): every entry parsed.
  EXPECT_EQ(fs.size(), 2493u);
  EXPECT_EQ(report.entries, fs.size());
  EXPECT_GT(report.unknown_fields["python_module"], 0u);
  EXPECT_GT(report.unknown_fields["autogen"], 0u);
  EXPECT_EQ(report.unknown_fields.count("func"), 0u);
}

TEST(NativeFunctions, ErrorsNameFileAndLine) {
  EXPECT_EQ(load_error("- func: foo(Tensor x) -> Tensor\n  dispatchh:\n    CPU: foo\n"),
            "F:2: unknown field 'dispatchh' (expected one of: func, variants, dispatch, "
            "device_check, tags, structured, structured_delegate, structured_inherits)");
  EXPECT_EQ(load_error("- func: foo(Tensor x) -> Tensor\n  dispatch:\n    Cpu: foo\n"),
            "F:3: unknown dispatch key 'Cpu'");
  EXPECT_THAT(load_error("- func: foo(Tensor x ->\n"), HasSubstr("F:1: "));
  EXPECT_EQ(load_error("- func: foo(Tensor x) -> Tensor\n  variants: functions\n"),
            "F:2: unknown variant 'functions' (expected function, method)");
  EXPECT_EQ(load_error("- func: foo(Tensor x) -> Tensor\n- func: foo(Tensor y) -> Tensor\n"),
            "F:2: operator aten::foo is declared twice");
  EXPECT_EQ(load_error("- func: foo(Tensor x) -> Tensor\n  dispatch:\n    CPU: k\n"
                       "- func: bar(Tensor x) -> Tensor\n  dispatch:\n    CPU: k\n"),
            "F:4: kernel k for CPU is already used at line 1");
  EXPECT_EQ(load_error("- func: foo(Tensor x) -> Tensor\n  tags: [core, pointwize]\n"),
            "F:2: unknown tag 'pointwize' (expected one of: core, data_dependent_output, "
            "dynamic_output_shape, generated, inplace_view, needs_fixed_stride_order, "
            "nondeterministic_bitwise, nondeterministic_seeded, pointwise, pt2_compliant_tag, "
            "view_copy)");
  EXPECT_EQ(load_error("- dispatch: {}\n"), "F:1: entry without 'func'");
  EXPECT_THAT(load_error("- func: [\n"), HasSubstr("F:2: "));
  EXPECT_EQ(load_error("func: foo\n"), "F:1: expected a list of entries");
}

// Issue 29: a node of another kind than the reader expects (a list or a mapping where a
// string goes) aborted opd-gen with yaml-cpp's TypedBadConversion; each is an error naming the
// file and the node's line, in strict and in non-strict (`opd-gen --check`) mode.
TEST(NativeFunctions, NodesOfTheWrongKindAreErrorsNamingFileAndLine) {
  const std::string foo = "- func: foo(Tensor x) -> Tensor\n";
  for (bool strict : {true, false}) {
    SCOPED_TRACE(strict ? "strict" : "non-strict");
    EXPECT_EQ(load_error(foo + "  dispatch:\n    [CPU]: k\n", strict),
              "F:3: a dispatch key must be a string, not a list");
    EXPECT_EQ(load_error(foo + "  {a: 1}: 2\n", strict),
              "F:2: a field name in an entry must be a string, not a mapping");
    EXPECT_EQ(load_error("- func: [foo]\n", strict), "F:1: 'func' must be a string, not a list");
    EXPECT_EQ(load_error("- func:\n", strict), "F:1: 'func' must be a string, not empty");
    EXPECT_EQ(load_error(foo + "  variants: [function]\n", strict),
              "F:2: 'variants' must be a string, not a list");
    EXPECT_EQ(load_error(foo + "  dispatch:\n    CPU: [k]\n", strict),
              "F:3: the kernel name of 'CPU' must be a string, not a list");
    EXPECT_EQ(load_error(foo + "  dispatch:\n    CPU:\n", strict),
              "F:3: the kernel name of 'CPU' must be a string, not empty");
    EXPECT_EQ(load_error(foo + "  dispatch: [CPU]\n", strict),
              "F:2: 'dispatch' must map dispatch keys to kernel names");
    EXPECT_EQ(load_error(foo + "  tags: [[core]]\n", strict),
              "F:2: a tag must be a string, not a list");
    EXPECT_EQ(load_error(foo + "  tags: {core: 1}\n", strict),
              "F:2: 'tags' must be a string, not a mapping");
    EXPECT_EQ(load_error(foo + "  structured: [True]\n", strict),
              "F:2: 'structured' must be a string, not a list");
    EXPECT_EQ(load_error(foo + "  structured_delegate: {a: 1}\n", strict),
              "F:2: 'structured_delegate' must be a string, not a mapping");
    EXPECT_EQ(load_error(foo + "- [func]\n", strict),
              "F:2: an entry must be a mapping with a 'func' field");
    // A field given twice was read once, silently.
    EXPECT_EQ(load_error(foo + "  func: bar(Tensor x) -> Tensor\n", strict),
              "F:2: 'func' appears twice in an entry (first at line 1)");
    EXPECT_EQ(load_error(foo + "  dispatch:\n    CPU: a\n    CPU: b\n", strict),
              "F:4: 'CPU' appears twice in 'dispatch' (first at line 3)");
  }
  EXPECT_EQ(load_error(foo + "  dispatch:\n    CPU: a\n    CPU, Meta: b\n"),
            "F:4: dispatch key 'CPU' has two kernels");
}

// Issue 29: YAML text opd-gen writes into generated C++ must not be able to become code there.
TEST(NativeFunctions, TextWrittenAsCodeIsRefusedNamingFileAndLine) {
  const std::string foo = "- func: acme::foo(Tensor x) -> Tensor\n";
  EXPECT_EQ(load_error(foo + "  dispatch: {CPU: 'k; system(\"x\")'}\n"),
            "F:2: the kernel name 'k; system(\"x\")' is not a C++ identifier");
  EXPECT_EQ(load_error(foo + "  dispatch:\n    CPU: acme::native::k\n"),
            "F:3: the kernel name 'acme::native::k' is not a C++ identifier");
  EXPECT_EQ(load_error(foo + "  dispatch:\n    CPU: delete\n"),
            "F:3: the kernel name 'delete' is not a C++ identifier (it is a keyword)");
  EXPECT_EQ(load_error(foo + "  dispatch:\n    CPU: 2k\n", /*strict=*/false),
            "F:3: the kernel name '2k' is not a C++ identifier");
  EXPECT_EQ(load_error("- func: class::foo(Tensor x) -> Tensor\n"),
            "F:1: the namespace 'class' is not a C++ identifier (it is a keyword)");
  EXPECT_EQ(load_error("- func: acme::delete(Tensor x) -> Tensor\n"),
            "F:1: the operator name 'delete' is not a C++ identifier (it is a keyword)");
  // The func text goes as written into generated comments and R"opd(...)opd".
  EXPECT_EQ(load_error("- func: \"acme::foo(Tensor x)\\n-> Tensor\"\n"),
            "F:1: 'func' holds the control character 0x0a (a schema is one line)");
  EXPECT_EQ(load_error("- func: 'acme::foo(Tensor x, str s='')opd\"'') -> Tensor'\n"),
            "F:1: 'func' holds ')opd\"', which would end the raw string literal opd-gen writes "
            "it in");
}

TEST(NativeFunctions, AVendorsFileHasOneNamespaceAndNoMethods) {
  TempYaml f(
      "- func: acme::scale(Tensor x, float alpha=1) -> Tensor\n"
      "- func: acme::shift(Tensor x) -> Tensor\n");
  LoadReport report;
  auto fs = load_native_functions(f.path(), /*strict=*/true, &report);
  EXPECT_EQ(opd::gen::namespace_of(fs), "acme");
  EXPECT_EQ(fs[1].schema.name(), "acme::shift");
  EXPECT_EQ(load_error("- func: acme::scale(Tensor x) -> Tensor\n"
                       "- func: other::shift(Tensor x) -> Tensor\n"),
            "F:2: operator other::shift is in namespace 'other' but the first entry (line 1) is "
            "in 'acme': one native_functions.yaml declares the operators of one namespace");
  EXPECT_EQ(load_error("- func: acme::scale(Tensor x) -> Tensor\n"
                       "- func: shift(Tensor x) -> Tensor\n"),
            "F:2: operator aten::shift is in namespace 'aten' but the first entry (line 1) is "
            "in 'acme': one native_functions.yaml declares the operators of one namespace");
  EXPECT_EQ(
      load_error("- func: acme::scale(Tensor self) -> Tensor\n  variants: function, method\n"),
      "F:2: acme::scale: 'variants: method' is for aten operators only (opd::Tensor's "
      "members are fixed when opdispatch is built; call acme::scale(...) instead)");
}

TEST(NativeFunctions, NonStrictCountsUnknownFieldsAndKeys) {
  TempYaml f(
      "- func: foo(Tensor x) -> Tensor\n  python_module: nn\n  dispatch:\n"
      "    SparseCPU, CPU: foo\n");
  LoadReport report;
  auto fs = load_native_functions(f.path(), /*strict=*/false, &report);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(report.unknown_fields["python_module"], 1u);
  EXPECT_EQ(fs[0].dispatch.size(), 2u);
}

TEST(NativeFunctions, MissingFileIsAnError) {
  LoadReport report;
  try {
    load_native_functions("/nonexistent/native_functions.yaml", true, &report);
    FAIL();
  } catch (const opd::Error& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/native_functions.yaml: cannot read the file");
  }
}

}  // namespace
