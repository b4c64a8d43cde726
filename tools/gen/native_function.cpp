#include "native_function.h"

#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <set>
#include <utility>

#include "emit.h"
#include "opd/dispatch_key.h"
#include "opd/error.h"
#include "opd/tag.h"
#include "structured.h"

namespace opd::gen {
namespace {

// The fields this generator reads; with `strict`, the only ones allowed. PyTorch's file has
// more (python_module, autogen, ...): they are counted, not used.
const std::set<std::string> kKnownFields = {
    "func", "variants", "dispatch", "device_check", "tags", "structured", "structured_delegate"};

[[noreturn]] void fail(const std::string& path, const YAML::Mark& mark, const std::string& what) {
  throw Error(fmt::format("{}:{}: {}", path, mark.line + 1, what));
}

std::string scalar(const std::string& path, const YAML::Node& node, const char* field) {
  if (!node.IsScalar()) fail(path, node.Mark(), fmt::format("'{}' must be a string", field));
  return node.Scalar();
}

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

NativeFunction load_entry(const std::string& path, const YAML::Node& e, bool strict,
                          LoadReport* report) {
  if (!e.IsMap()) fail(path, e.Mark(), "an entry must be a mapping with a 'func' field");
  if (!e["func"]) fail(path, e.Mark(), "entry without 'func'");
  for (const auto& kv : e) {
    std::string field = kv.first.as<std::string>();
    if (kKnownFields.count(field)) continue;
    if (strict) {
      fail(path, kv.first.Mark(),
           fmt::format("unknown field '{}' (expected one of: func, variants, dispatch, "
                       "device_check, tags, structured, structured_delegate)",
                       field));
    }
    ++report->unknown_fields[field];
  }
  std::string func = scalar(path, e["func"], "func");
  std::string text = func.find("::") == std::string::npos ? "aten::" + func : func;
  FunctionSchema schema = [&] {
    try {
      return parse_schema(text);
    } catch (const Error& err) {
      fail(path, e["func"].Mark(), err.what());
    }
  }();
  NativeFunction f{
      std::move(schema), func, e["func"].Mark().line + 1, true, false, {}, {}, false, {}};
  if (e["variants"]) {
    auto variants = split(scalar(path, e["variants"], "variants"), ',');
    f.function_variant = f.method_variant = false;
    for (const auto& v : variants) {
      if (v == "function") {
        f.function_variant = true;
      } else if (v == "method") {
        f.method_variant = true;
      } else {
        fail(path, e["variants"].Mark(),
             fmt::format("unknown variant '{}' (expected function, method)", v));
      }
    }
  }
  if (const YAML::Node& d = e["dispatch"]) {
    if (!d.IsMap()) fail(path, d.Mark(), "'dispatch' must map dispatch keys to kernel names");
    for (const auto& kv : d) {
      std::string kernel = scalar(path, kv.second, "dispatch");
      for (const auto& key : split(kv.first.as<std::string>(), ',')) {
        if (strict && !try_parse_dispatch_key(key)) {
          fail(path, kv.first.Mark(), fmt::format("unknown dispatch key '{}'", key));
        }
        f.dispatch.emplace_back(key, kernel);
      }
    }
  }
  if (const YAML::Node& s = e["structured"]) {
    const std::string v = scalar(path, s, "structured");
    if (v != "True" && v != "False") {
      fail(path, s.Mark(), fmt::format("'structured' must be True or False, not '{}'", v));
    }
    f.structured = v == "True";
  }
  if (const YAML::Node& d = e["structured_delegate"]) {
    f.structured_delegate = scalar(path, d, "structured_delegate");
  }
  if (const YAML::Node& t = e["tags"]) {
    if (t.IsSequence()) {
      for (const auto& tag : t) f.tags.push_back(scalar(path, tag, "tags"));
    } else {
      f.tags = split(scalar(path, t, "tags"), ',');
    }
    for (const auto& tag : f.tags) {
      if (strict && !tag_from_name(tag)) {
        fail(
            path, t.Mark(),
            fmt::format("unknown tag '{}' (expected one of: {})", tag, fmt::join(kTagNames, ", ")));
      }
    }
  }
  return f;
}

std::string ns_of(const FunctionSchema& s) { return s.name().substr(0, s.name().find("::")); }

}  // namespace

std::string namespace_of(const std::vector<NativeFunction>& fs) {
  return fs.empty() ? "aten" : ns_of(fs.front().schema);
}

std::vector<NativeFunction> load_native_functions(const std::string& path, bool strict,
                                                  LoadReport* report) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw Error(fmt::format("{}: cannot read the file", path));
  } catch (const YAML::Exception& e) {
    fail(path, e.mark, e.msg);
  }
  if (!root.IsSequence()) throw Error(fmt::format("{}:1: expected a list of entries", path));
  std::vector<NativeFunction> out;
  std::set<std::string> names;
  std::map<std::pair<std::string, std::string>, int> kernels;  // (key, kernel) -> line
  for (const auto& e : root) {
    NativeFunction f = load_entry(path, e, strict, report);
    const std::string ns = ns_of(f.schema);
    if (!out.empty() && ns != ns_of(out.front().schema)) {
      fail(path, e["func"].Mark(),
           fmt::format("operator {} is in namespace '{}' but the first entry (line {}) is in '{}': "
                       "one native_functions.yaml declares the operators of one namespace",
                       f.schema.operator_name().to_string(), ns, out.front().line,
                       ns_of(out.front().schema)));
    }
    if (strict && ns != "aten" && f.method_variant) {
      fail(path, e["variants"].Mark(),
           fmt::format("{}: 'variants: method' is for aten operators only (opd::Tensor's members "
                       "are fixed when opdispatch is built; call {}::{}(...) instead)",
                       f.schema.operator_name().to_string(), ns, base_name(f.schema)));
    }
    if (!names.insert(f.schema.operator_name().to_string()).second) {
      fail(path, e.Mark(),
           fmt::format("operator {} is declared twice", f.schema.operator_name().to_string()));
    }
    if (strict) {
      for (const auto& [key, kernel] : f.dispatch) {
        auto [it, fresh] = kernels.emplace(std::make_pair(key, kernel), f.line);
        if (!fresh) {
          fail(path, e.Mark(),
               fmt::format("kernel {} for {} is already used at line {}", kernel, key, it->second));
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
