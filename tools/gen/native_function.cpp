#include "native_function.h"

#include <fmt/ranges.h>

#include <set>
#include <utility>

#include "emit.h"
#include "formula_text.h"
#include "opd/dispatch_key.h"
#include "opd/error.h"
#include "opd/tag.h"
#include "structured.h"
#include "yaml_read.h"

namespace opd::gen {
namespace {

// The fields this generator reads; with `strict`, the only ones allowed. PyTorch's file has
// more (python_module, autogen, ...): they are counted, not used.
const std::set<std::string> kKnownFields = {"func",
                                            "variants",
                                            "dispatch",
                                            "device_check",
                                            "tags",
                                            "structured",
                                            "structured_delegate",
                                            "structured_inherits"};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(start, end - start);
    part.erase(0, part.find_first_not_of(" \t"));
    part.erase(part.find_last_not_of(" \t") + 1);
    if (!part.empty()) out.push_back(part);
    start = end + 1;
  }
  return out;
}

std::string ns_of(const FunctionSchema& s) { return s.name().substr(0, s.name().find("::")); }

const YamlField* find(const std::vector<YamlField>& fields, const std::string& name) {
  for (const YamlField& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// A name opd-gen writes as C++ (a kernel it declares and registers, a namespace, a function):
// an identifier, not a keyword (issue 29: a kernel 'k; system("x")' was pasted into the
// generated registration).
void check_identifier(const YamlFile& file, int line, const std::string& name,
                      const std::string& what) {
  if (!is_cpp_identifier(name)) {
    file.fail(line, fmt::format("{} '{}' is not a C++ identifier{}", what, name,
                                is_cpp_keyword(name) ? " (it is a keyword)" : ""));
  }
}

NativeFunction load_entry(const YamlFile& file, const YAML::Node& e, bool strict,
                          LoadReport* report) {
  if (!e.IsMap()) file.fail(e, "an entry must be a mapping with a 'func' field");
  const std::vector<YamlField> fields = file.mapping(e, "an entry");
  const YamlField* func_field = find(fields, "func");
  if (!func_field) file.fail(e, "entry without 'func'");
  for (const YamlField& field : fields) {
    if (kKnownFields.count(field.name)) continue;
    if (strict) {
      file.fail(field.name_node,
                fmt::format("unknown field '{}' (expected one of: func, variants, dispatch, "
                            "device_check, tags, structured, structured_delegate, "
                            "structured_inherits)",
                            field.name));
    }
    ++report->unknown_fields[field.name];
  }
  const int func_line = func_field->line;
  std::string func = file.scalar(*func_field, "'func'");
  // The text is written as it is into generated comments and a raw string literal R"opd(...)opd".
  for (unsigned char c : func) {
    if (c < 0x20 || c == 0x7f) {
      file.fail(func_line, fmt::format("'func' holds the control character 0x{:02x} (a schema "
                                       "is one line)",
                                       c));
    }
  }
  if (func.find(")opd\"") != std::string::npos) {
    file.fail(func_line,
              "'func' holds ')opd\"', which would end the raw string literal opd-gen writes it in");
  }
  std::string text = func.find("::") == std::string::npos ? "aten::" + func : func;
  FunctionSchema schema = [&] {
    try {
      return parse_schema(text);
    } catch (const Error& err) {
      file.fail(func_line, err.what());
    }
  }();
  // The namespace and the base name become C++ namespaces and functions; the schema parser
  // reads them as identifiers, which may still be keywords. (Argument names are renamed by
  // cpp_name.)
  check_identifier(file, func_line, ns_of(schema), "the namespace");
  check_identifier(file, func_line, base_name(schema), "the operator name");
  NativeFunction f{std::move(schema), func, func_line, true, false, {}, {}, false, {}, {}};
  if (const YamlField* v = find(fields, "variants")) {
    auto variants = split(file.scalar(*v, "'variants'"), ',');
    f.function_variant = f.method_variant = false;
    for (const auto& variant : variants) {
      if (variant == "function") {
        f.function_variant = true;
      } else if (variant == "method") {
        f.method_variant = true;
      } else {
        file.fail(v->line,
                  fmt::format("unknown variant '{}' (expected function, method)", variant));
      }
    }
    if (strict && ns_of(f.schema) != "aten" && f.method_variant) {
      file.fail(
          v->line,
          fmt::format("{}: 'variants: method' is for aten operators only (opd::Tensor's "
                      "members are fixed when opdispatch is built; call {}::{}(...) instead)",
                      f.schema.operator_name().to_string(), ns_of(f.schema), base_name(f.schema)));
    }
  }
  if (const YamlField* d = find(fields, "dispatch")) {
    if (!d->value.IsMap()) file.fail(d->line, "'dispatch' must map dispatch keys to kernel names");
    for (const YamlField& kv : file.mapping(*d, "'dispatch'", "a dispatch key")) {
      const std::string kernel = file.scalar(kv, "the kernel name of '" + kv.name + "'");
      check_identifier(file, kv.line, kernel, "the kernel name");
      for (const auto& key : split(kv.name, ',')) {
        if (strict && !try_parse_dispatch_key(key)) {
          file.fail(kv.name_node, fmt::format("unknown dispatch key '{}'", key));
        }
        for (const auto& entry : f.dispatch) {
          if (strict && entry.first == key) {
            file.fail(kv.name_node, fmt::format("dispatch key '{}' has two kernels", key));
          }
        }
        f.dispatch.emplace_back(key, kernel);
      }
    }
  }
  if (const YamlField* st = find(fields, "structured")) {
    const std::string v = file.scalar(*st, "'structured'");
    if (v != "True" && v != "False") {
      file.fail(st->line, fmt::format("'structured' must be True or False, not '{}'", v));
    }
    f.structured = v == "True";
  }
  if (const YamlField* d = find(fields, "structured_delegate")) {
    // Checked against the operators' names by structured_groups, never written as it is.
    f.structured_delegate = file.scalar(*d, "'structured_delegate'");
  }
  if (const YamlField* in = find(fields, "structured_inherits")) {
    f.structured_inherits = file.scalar(*in, "'structured_inherits'");
    if (f.structured_inherits != "TensorIteratorBase" && f.structured_inherits != "MetaBase") {
      file.fail(in->line, fmt::format("'structured_inherits' must be TensorIteratorBase or "
                                      "MetaBase, not '{}'",
                                      f.structured_inherits));
    }
  }
  if (const YamlField* t = find(fields, "tags")) {
    if (t->value.IsSequence()) {
      for (const YAML::Node& tag : file.sequence(*t, "'tags'")) {
        f.tags.push_back(file.scalar(tag, "a tag"));
      }
    } else {
      f.tags = split(file.scalar(*t, "'tags'"), ',');
    }
    for (const auto& tag : f.tags) {
      if (strict && !tag_from_name(tag)) {
        file.fail(t->line, fmt::format("unknown tag '{}' (expected one of: {})", tag,
                                       fmt::join(kTagNames, ", ")));
      }
    }
  }
  return f;
}

}  // namespace

std::string namespace_of(const std::vector<NativeFunction>& fs) {
  return fs.empty() ? "aten" : ns_of(fs.front().schema);
}

std::vector<NativeFunction> load_native_functions(const std::string& path, bool strict,
                                                  LoadReport* report) {
  const YamlFile file(path);
  if (!file.root().IsSequence()) file.fail(1, "expected a list of entries");
  std::vector<NativeFunction> out;
  std::set<std::string> names;
  std::map<std::pair<std::string, std::string>, int> kernels;  // (key, kernel) -> line
  for (const YAML::Node& e : file.sequence(file.root(), "the file")) {
    NativeFunction f = load_entry(file, e, strict, report);
    const std::string ns = ns_of(f.schema);
    if (!out.empty() && ns != ns_of(out.front().schema)) {
      file.fail(f.line, fmt::format("operator {} is in namespace '{}' but the first entry (line "
                                    "{}) is in '{}': one native_functions.yaml declares the "
                                    "operators of one namespace",
                                    f.schema.operator_name().to_string(), ns, out.front().line,
                                    ns_of(out.front().schema)));
    }
    if (!names.insert(f.schema.operator_name().to_string()).second) {
      file.fail(e,
                fmt::format("operator {} is declared twice", f.schema.operator_name().to_string()));
    }
    if (strict) {
      for (const auto& [key, kernel] : f.dispatch) {
        auto [it, fresh] = kernels.emplace(std::make_pair(key, kernel), f.line);
        if (!fresh) {
          file.fail(e, fmt::format("kernel {} for {} is already used at line {}", kernel, key,
                                   it->second));
        }
      }
    }
    out.push_back(std::move(f));
  }
  report->entries = out.size();
  if (strict) structured_groups(out, path);  // checks them
  return out;
}

}  // namespace opd::gen
