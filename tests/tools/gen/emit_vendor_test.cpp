// opd-gen for a vendor's namespace (tools/gen/emit_vendor.cpp, emit_vendor_autograd.cpp): what
// it writes for acme, and its errors on derivatives it cannot turn into a Function, naming the
// file and line. tests/vendor_plugin builds and runs what it writes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "derivatives.h"
#include "emit.h"
#include "opd/error.h"
#include "temp_yaml.h"

namespace {

using opd::gen::test::load_strict;
using opd::gen::test::OutputDir;
using opd::gen::test::TempYaml;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kFunctions =
    "- func: acme::scale(Tensor x, float alpha=1) -> Tensor\n"
    "  dispatch:\n"
    "    CPU: scale_cpu\n"
    "    Meta: scale_meta\n"
    "- func: acme::scale_(Tensor(a!) self, float alpha) -> Tensor(a!)\n"
    "  tags: inplace_view, core\n"
    "  dispatch:\n"
    "    CPU: scale_cpu_\n"
    "- func: acme::split2(Tensor x, Tensor[] rest) -> (Tensor, Tensor)\n";

class EmitVendor : public ::testing::Test {
 protected:
  std::string read(const std::string& relative) const { return out_.read(relative); }
  // emit_vendor_autograd's error for `derivatives`, with its temporary path replaced by "D".
  std::string autograd_error(const std::string& derivatives) {
    TempYaml f(kFunctions), d(derivatives);
    auto fs = load_strict(f);
    try {
      opd::gen::emit_vendor_autograd(fs, opd::gen::load_derivatives(d.path(), fs), options(),
                                     d.path());
    } catch (const opd::Error& e) {
      std::string msg = e.what();
      EXPECT_EQ(msg.rfind(d.path() + ":", 0), 0u) << msg;
      return "D" + msg.substr(d.path().size());
    }
    ADD_FAILURE() << "expected an error for:\n" << derivatives;
    return "";
  }
  opd::gen::EmitOptions options() const { return {"acme_functions.yaml", out_.path().string()}; }

  OutputDir out_{"opd_gen_vendor_test"};
};

TEST_F(EmitVendor, TypedApiKernelDeclarationsAndRegistrationInTheVendorsNamespace) {
  TempYaml f(kFunctions);
  auto fs = load_strict(f);
  opd::gen::emit_schemas(fs, options());
  opd::gen::emit_vendor_api(fs, options());
  opd::gen::emit_vendor_native(fs, options());
  EXPECT_THAT(read("src/schemas.cpp"), HasSubstr("OPD_LIBRARY(acme, m) {\n#line 1 "
                                                 "\"acme_functions.yaml\"\n  m.def(R\"opd(scale("
                                                 "Tensor x, float alpha=1) -> Tensor)opd\");"));
  // `tags:` as written, into the definition.
  EXPECT_THAT(read("src/schemas.cpp"),
              HasSubstr("  m.def(R\"opd(scale_(Tensor(a!) self, float alpha) -> Tensor(a!))opd\", "
                        "{opd::Tag::inplace_view, opd::Tag::core});"));
  const std::string api = read("include/acme/ops.h");
  EXPECT_THAT(api, HasSubstr("namespace acme {"));
  EXPECT_THAT(api,
              HasSubstr("inline opd::Tensor scale(const opd::Tensor& x, double alpha = 1.0) {\n"
                        "  return opd::find_operator_or_throw(\"acme::scale\", \"\")"
                        ".call_as<opd::Tensor>(x, alpha);\n}"));
  // An in-place operator returns its written argument.
  EXPECT_THAT(api, HasSubstr("inline opd::Tensor& scale_(opd::Tensor& self, double alpha) {\n"
                             "  opd::find_operator_or_throw(\"acme::scale_\", \"\")"
                             ".call_as<opd::Tensor>(self, alpha);\n  return self;\n}"));
  EXPECT_THAT(api, HasSubstr("inline std::tuple<opd::Tensor, opd::Tensor> split2(const "
                             "opd::Tensor& x, opd::TensorList rest)"));
  const std::string cpu = read("include/acme/native/CPU.h");
  EXPECT_THAT(cpu, HasSubstr("namespace acme::native {"));
  EXPECT_THAT(cpu, HasSubstr("opd::Tensor scale_cpu(const opd::Tensor& x, double alpha);"));
  EXPECT_THAT(cpu, HasSubstr("opd::Tensor& scale_cpu_(opd::Tensor& self, double alpha);"));
  EXPECT_THAT(cpu, Not(HasSubstr("scale_meta")));
  EXPECT_THAT(read("include/acme/native/Meta.h"),
              HasSubstr("opd::Tensor scale_meta(const opd::Tensor& x, double alpha);"));
  const std::string kernels = read("src/kernels.cpp");
  EXPECT_THAT(kernels,
              HasSubstr("OPD_LIBRARY_IMPL(acme, CPU, m) {\n#line 1 \"acme_functions.yaml\"\n"
                        "  m.impl(\"scale\", OPD_FN(acme::native::scale_cpu));"));
  EXPECT_THAT(kernels, HasSubstr("OPD_LIBRARY_IMPL(acme, Meta, m) {"));
  // No aten output for a vendor.
  EXPECT_FALSE(std::filesystem::exists(out_.path() / "src/aten_schemas.cpp"));
  EXPECT_FALSE(std::filesystem::exists(out_.path() / "include/opd/ops.h"));
}

TEST_F(EmitVendor, AFormulaBecomesAFunctionThatSavesWhatItReads) {
  TempYaml f(kFunctions), d("- name: scale(Tensor x, float alpha=1) -> Tensor\n"
                            "  x: grad * alpha + result * 0\n");
  auto fs = load_strict(f);
  opd::gen::emit_vendor_autograd(fs, opd::gen::load_derivatives(d.path(), fs), options(),
                                 "acme_derivatives.yaml");
  const std::string code = read("src/autograd.cpp");
  EXPECT_THAT(code, HasSubstr("struct ScaleBackward0 : opd::autograd::Function<ScaleBackward0>"));
  EXPECT_THAT(code, HasSubstr("opd::Tensor result = acme::scale(x, alpha);\n"
                              "    ctx->save_for_backward({result});\n"
                              "    ctx->saved_data[\"alpha\"] = "
                              "opd::detail::TraitsOf<double>::box(alpha);"));
  EXPECT_THAT(code, HasSubstr("if (ctx->needs_input_grad(0)) {\n#line 2 "
                              "\"acme_derivatives.yaml\"\n      grad_inputs[0] = grad * alpha + "
                              "result * 0;"));
  EXPECT_THAT(code,
              HasSubstr("m.impl(\"scale\", "
                        "opd::autograd::function_kernel<acme::autograd::ScaleBackward0>());"));
}

TEST_F(EmitVendor, DerivativesItCannotTurnIntoAFunctionNameFileAndLine) {
  const std::string hint =
      " (write its Autograd kernel with opd::autograd::Function and autograd::function_kernel "
      "instead)";
  EXPECT_EQ(autograd_error("- name: scale_(Tensor(a!) self, float alpha) -> Tensor(a!)\n"
                           "  self: grad * alpha\n"),
            "D:1: acme::scale_: argument 'self' is written" + hint);
  EXPECT_EQ(autograd_error("- name: split2(Tensor x, Tensor[] rest) -> (Tensor, Tensor)\n"
                           "  x: grads[0]\n"),
            "D:1: acme::split2: argument 'rest' is Tensor[]; derivatives of a vendor operator "
            "take Tensor and non-tensor arguments" +
                hint);
  // The reader's own errors name the vendor's operators too.
  EXPECT_EQ(autograd_error("- name: nope(Tensor x) -> Tensor\n  x: grad\n"),
            "D:1: acme::nope is not an operator of native_functions.yaml");
}

}  // namespace
