#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "opd/function_schema.h"

namespace opd::gen {

// One entry of a native_functions.yaml.
struct NativeFunction {
  FunctionSchema schema;
  std::string func;  // the `func:` text as written
  int line = 0;      // 1-based line of the entry's `func:`
  bool function_variant = true;
  bool method_variant = false;
  // `dispatch:` as written: keys ("CPU", "CompositeImplicitAutograd") and the kernel each names,
  // one pair per key ("CPU, Meta: add_Tensor" gives two).
  std::vector<std::pair<std::string, std::string>> dispatch;
  // `tags:` (Note [Operator tags]); with `strict`, names of opd::Tag.
  std::vector<std::string> tags;
  // `structured: True` (an out= operator whose dispatch entries name impls) and
  // `structured_delegate: add.out` (a variant generated from that operator's meta function and
  // impls): Note [Structured kernels] in structured.h.
  bool structured = false;
  std::string structured_delegate;
  // `structured_inherits:` of a structured operator, PyTorch's name for what its meta function
  // is: TensorIteratorBase (builds an iterator; the default here) or MetaBase (makes the output).
  std::string structured_inherits;
};

struct LoadReport {
  size_t entries = 0;
  // Fields this generator does not use, with how many entries carry each.
  std::map<std::string, size_t> unknown_fields;
};

// Reads `path`. Every entry's `func:` names the same namespace ("acme::scale(...)"); one
// without a namespace is in aten, as in PyTorch.
// With `strict` (our own YAML) an unknown field, an unknown dispatch key or a
// duplicate kernel name for one key is an error; otherwise unknown fields are counted in
// `report`. Errors are opd::Error "<path>:<line>: <what>".
std::vector<NativeFunction> load_native_functions(const std::string& path, bool strict,
                                                  LoadReport* report);

// The namespace of the operators load_native_functions returned: "aten" for PyTorch's and ours,
// the vendor's own otherwise ("acme").
std::string namespace_of(const std::vector<NativeFunction>& fs);

}  // namespace opd::gen
