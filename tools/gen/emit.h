#pragma once

#include <string>
#include <vector>

#include "native_function.h"

namespace opd::gen {

// Where the generated code says it came from: `#line` directives name this path, so that the
// registration sites the dispatcher reports are lines of the YAML.
struct EmitOptions {
  std::string yaml_display_name;  // "manifests/native_functions.yaml"
  std::string out_dir;            // <build>/generated
};

// include/opd/ops.h, include/opd/tensor_methods.inc and src/ops.cpp: the typed API.
void emit_api(const std::vector<NativeFunction>& fs, const EmitOptions& o);
// The schema registrations: src/aten_schemas.cpp (aten) or src/schemas.cpp (a vendor's).
void emit_schemas(const std::vector<NativeFunction>& fs, const EmitOptions& o);
// include/opd/native/<Key>.h and src/register_<Key>.cpp for every key of a dispatch entry.
void emit_native(const std::vector<NativeFunction>& fs, const EmitOptions& o);

// For a vendor's namespace (not aten), compiled against the plugin API only:
// include/<ns>/ops.h, the typed API (inline boxed calls: <ns>::name(args...)).
void emit_vendor_api(const std::vector<NativeFunction>& fs, const EmitOptions& o);
// include/<ns>/native/<Key>.h, the kernels each `dispatch:` key names (in <ns>::native), and
// src/kernels.cpp, their OPD_LIBRARY_IMPL(<ns>, <Key>, m) blocks.
void emit_vendor_native(const std::vector<NativeFunction>& fs, const EmitOptions& o);
// "const Tensor&" -> "const opd::Tensor&": a generated type for code outside namespace opd.
std::string qualify_opd_types(const std::string& cpp);

// Writes `text` to `path` (creating folders) unless the file already holds exactly that text,
// so that an unchanged output does not trigger rebuilds.
void write_if_changed(const std::string& path, const std::string& text);
// The C++ identifier of an operator's internal entry point: "add_Tensor", "add__Tensor", "sum".
std::string unique_name(const FunctionSchema& s);
// The operator's name without its namespace: "add" for aten::add.Tensor.
std::string base_name(const FunctionSchema& s);
// "add.Tensor", "sum": what Library::impl takes.
std::string impl_name(const FunctionSchema& s);

}  // namespace opd::gen
