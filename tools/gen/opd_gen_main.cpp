// opd-gen: reads a native_functions.yaml and writes the typed API, the schema registrations and
// the per-key kernel declarations, for aten or for a vendor's namespace (see README.md). With
// --check, only parses and reports.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "derivatives.h"
#include "emit.h"
#include "native_function.h"
#include "opd/error.h"

int main(int argc, char** argv) {
  CLI::App app{"opd-gen: operators from native_functions.yaml"};
  std::string yaml, out_dir, display_name, check, derivatives, derivatives_display;
  app.add_option("--yaml", yaml, "our native_functions.yaml");
  app.add_option("--out", out_dir, "output folder (include/ and src/ are written under it)");
  app.add_option("--display-name", display_name,
                 "the YAML's path as generated code names it (default: --yaml)");
  app.add_option("--check", check,
                 "parse this native_functions.yaml (PyTorch's own included) and report");
  app.add_option("--derivatives", derivatives,
                 "derivatives.yaml: also write the autograd plugin's nodes and kernels");
  app.add_option("--derivatives-display-name", derivatives_display,
                 "the derivatives YAML's path as generated code names it (default: --derivatives)");
  CLI11_PARSE(app, argc, argv);
  try {
    if (!check.empty()) {
      opd::gen::LoadReport report;
      auto fs = opd::gen::load_native_functions(check, /*strict=*/false, &report);
      size_t methods = 0, dispatch = 0;
      for (const auto& f : fs) {
        methods += f.method_variant;
        dispatch += !f.dispatch.empty();
      }
      fmt::print("{}: {} entries parsed ({} with methods, {} with dispatch)\n", check,
                 report.entries, methods, dispatch);
      for (const auto& [field, n] : report.unknown_fields) {
        fmt::print("  unknown field {}: {} entries\n", field, n);
      }
      return 0;
    }
    if (yaml.empty() || out_dir.empty()) {
      fmt::print(stderr, "opd-gen: --yaml and --out are required (or --check FILE)\n");
      return 2;
    }
    opd::gen::LoadReport report;
    // Every file is read and checked before anything is written: a refused file leaves no
    // partial output.
    auto fs = opd::gen::load_native_functions(yaml, /*strict=*/true, &report);
    const auto ds = derivatives.empty() ? std::vector<opd::gen::DerivativeInfo>{}
                                        : opd::gen::load_derivatives(derivatives, fs);
    opd::gen::EmitOptions o{display_name.empty() ? yaml : display_name, out_dir};
    opd::gen::emit_schemas(fs, o);
    if (opd::gen::namespace_of(fs) == "aten") {
      opd::gen::emit_api(fs, o);
      opd::gen::emit_native(fs, o);
      if (!derivatives.empty()) opd::gen::emit_autograd(fs, ds, o, derivatives);
    } else {
      // A vendor's namespace: code for its plugin, against the plugin API only.
      opd::gen::emit_vendor_api(fs, o);
      opd::gen::emit_vendor_native(fs, o);
      opd::gen::emit_vendor_autograd(
          fs, ds, o, derivatives_display.empty() ? derivatives : derivatives_display);
    }
  } catch (const opd::Error& e) {
    fmt::print(stderr, "opd-gen: {}\n", e.what());
    return 1;
  }
  return 0;
}
