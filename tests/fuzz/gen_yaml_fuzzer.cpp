// Reads arbitrary bytes as opd-gen's YAML (issue 29): as a native_functions.yaml (strictly, as
// the build reads ours and a vendor's, and leniently, as `opd-gen --check` reads PyTorch's), as a
// derivatives.yaml against fixed aten and vendor operators, and as the tags, dispatch and further
// entries of a vendor's file. Whatever loads is also generated, as opd-gen would, into a
// temporary folder, where no generated line may be a directive opd-gen did not write. Every failure
// must be opd::Error "<file>:<line>: <what>" (or, from the generators, an opd::Error naming the
// operator); any other exception, and any crash, is a bug.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "derivatives.h"
#include "emit.h"
#include "fuzz_support.h"
#include "native_function.h"
#include "opd/error.h"

namespace {

using opd::fuzz::fail;

const std::filesystem::path& folder() {
  static const std::filesystem::path dir = opd::fuzz::temp_folder("opd-gen-fuzz");
  return dir;
}

std::string write(const std::string& name, std::string_view text) {
  const std::filesystem::path file = folder() / name;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  return file.string();
}

// Operators the derivatives are read against: tensors, lists, optionals, several results, a
// written argument, an argument named by a keyword.
constexpr std::string_view kAtenFunctions =
    "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
    "  variants: function, method\n  dispatch:\n    CPU: add_Tensor\n"
    "- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)\n"
    "  variants: method\n  dispatch:\n    CPU: add__Tensor\n"
    "- func: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor "
    "indices)\n  dispatch:\n    CPU: max_dim\n"
    "- func: cat(Tensor[] tensors, int dim=0) -> Tensor\n  dispatch:\n    CPU: cat\n"
    "- func: where(Tensor cond, Tensor? self, Tensor other, str mode='a\"b') -> Tensor\n"
    "  dispatch:\n    CPU: where\n"
    "- func: sum(Tensor self, int[1] dim, bool keepdim=False, *, ScalarType? dtype=None) -> "
    "Tensor\n  dispatch:\n    CompositeExplicitAutograd: sum\n"
    "- func: kw(Tensor self, int int) -> Tensor\n  dispatch:\n    CPU: kw\n";
constexpr std::string_view kVendorFunctions =
    "- func: acme::scale(Tensor x, float alpha=1) -> Tensor\n  dispatch:\n    CPU: scale_cpu\n"
    "- func: acme::axpy(float a, Tensor x, Tensor y) -> Tensor\n  tags: [pointwise]\n"
    "- func: acme::split2(Tensor x, Tensor[] rest) -> (Tensor, Tensor)\n";

// Runs `step`; an opd::Error naming `file` first (when given) is an answer, anything else a bug.
template <class Step>
bool answered(std::string_view input, const std::string& file, Step step) {
  try {
    step();
    return true;
  } catch (const opd::Error& e) {
    const std::string msg = e.what();
    if (!file.empty() && msg.rfind(file + ":", 0) != 0) {
      fail("the error does not name the file and line first", input, msg);
    }
  } catch (const std::exception& e) {
    fail("opd-gen threw something other than opd::Error", input,
         std::string(typeid(e).name()) + ": " + e.what());
  }
  return false;
}

// What opd_gen_main does with loaded operators and derivatives.
void generate(const std::vector<opd::gen::NativeFunction>& fs,
              const std::vector<opd::gen::DerivativeInfo>& ds, const std::string& yaml,
              const std::string& derivatives) {
  std::error_code ec;
  std::filesystem::remove_all(folder() / "out", ec);
  const opd::gen::EmitOptions o{yaml, (folder() / "out").string()};
  opd::gen::emit_schemas(fs, o);
  if (opd::gen::namespace_of(fs) == "aten") {
    opd::gen::emit_api(fs, o);
    opd::gen::emit_native(fs, o);
    opd::gen::emit_autograd(fs, ds, o, derivatives);
  } else {
    opd::gen::emit_vendor_api(fs, o);
    opd::gen::emit_vendor_native(fs, o);
    opd::gen::emit_vendor_autograd(fs, ds, o, derivatives);
  }
}

// Text from the YAML must never reach the preprocessor: a generated line that starts with '#' is
// one of opd-gen's own directives.
void check_directives(std::string_view input) {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder() / "out")) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      const size_t first = line.find_first_not_of(" \t");
      if (first == std::string::npos || line[first] != '#') continue;
      const std::string_view directive = std::string_view(line).substr(first);
      if (!directive.starts_with("#line ") && !directive.starts_with("#include ") &&
          directive != "#pragma once") {
        fail("a generated line is a directive opd-gen did not write", input,
             entry.path().string() + ": " + line);
      }
    }
  }
}

void as_functions(std::string_view input, std::string_view text) {
  const std::string yaml = write("native_functions.yaml", text);
  answered(input, yaml, [&] {
    opd::gen::LoadReport report;
    opd::gen::load_native_functions(yaml, /*strict=*/false, &report);
  });
  std::vector<opd::gen::NativeFunction> fs;
  const bool loaded = answered(input, yaml, [&] {
    opd::gen::LoadReport report;
    fs = opd::gen::load_native_functions(yaml, /*strict=*/true, &report);
  });
  // The generators' own errors name the operator, not always a line.
  if (loaded && answered(input, "", [&] { generate(fs, {}, yaml, "derivatives.yaml"); })) {
    check_directives(input);
  }
}

void as_derivatives(std::string_view input, std::string_view functions) {
  const std::string yaml = write("functions.yaml", functions);
  opd::gen::LoadReport report;
  const auto fs = opd::gen::load_native_functions(yaml, /*strict=*/true, &report);
  const std::string derivatives = write("derivatives.yaml", input);
  std::vector<opd::gen::DerivativeInfo> ds;
  if (answered(input, derivatives, [&] { ds = opd::gen::load_derivatives(derivatives, fs); })) {
    if (answered(input, "", [&] { generate(fs, ds, yaml, derivatives); })) check_directives(input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  as_functions(input, input);
  as_derivatives(input, kAtenFunctions);
  as_derivatives(input, kVendorFunctions);
  // The input continues a vendor's entry: its tags, dispatch and other fields, or more entries.
  as_functions(
      input, std::string("- func: acme::f(Tensor x, str s='a') -> Tensor\n") + std::string(input));
  return 0;
}
