#include "opd/fx/graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "opd/bind/print.h"
#include "opd/error.h"
#include "opd/function_schema.h"
#include "opd/layout.h"
#include "opd/scalar_type.h"

namespace opd::fx {

namespace {

// Names a node may not take (torch.fx's _Namespace._is_illegal_name): Python 3.11's keywords
// and builtins, and the names the generated code itself uses (torch.fx's _custom_builtins, and
// this package's module name).
bool is_illegal_name(std::string_view name) {
  static constexpr std::string_view kReserved =
      "ArithmeticError AssertionError AttributeError BaseException BaseExceptionGroup "
      "BlockingIOError BrokenPipeError BufferError BytesWarning ChildProcessError "
      "ConnectionAbortedError ConnectionError ConnectionRefusedError ConnectionResetError "
      "DeprecationWarning EOFError Ellipsis EncodingWarning EnvironmentError Exception "
      "ExceptionGroup False FileExistsError FileNotFoundError FloatingPointError FutureWarning "
      "GeneratorExit IOError ImportError ImportWarning IndentationError IndexError "
      "InterruptedError IsADirectoryError KeyError KeyboardInterrupt LookupError MemoryError "
      "ModuleNotFoundError NameError None NotADirectoryError NotImplemented NotImplementedError "
      "OSError OverflowError PendingDeprecationWarning PermissionError ProcessLookupError "
      "RecursionError ReferenceError ResourceWarning RuntimeError RuntimeWarning "
      "StopAsyncIteration StopIteration SyntaxError SyntaxWarning SystemError SystemExit "
      "TabError TimeoutError True TypeError UnboundLocalError UnicodeDecodeError "
      "UnicodeEncodeError UnicodeError UnicodeTranslateError UnicodeWarning UserWarning "
      "ValueError Warning ZeroDivisionError __build_class__ __debug__ __doc__ __import__ "
      "__loader__ __name__ __package__ __spec__ abs aiter all and anext any as ascii assert "
      "async await bin bool break breakpoint bytearray bytes callable chr class classmethod "
      "compile complex continue copyright credits def del delattr dict dir divmod elif else "
      "enumerate eval except exec exit filter finally float for format from frozenset getattr "
      "global globals hasattr hash help hex id if import in input int is isinstance issubclass "
      "iter lambda len license list locals map max memoryview min next nonlocal not object oct "
      "open or ord pass pow print property quit raise range repr return reversed round set "
      "setattr slice sorted staticmethod str sum super try tuple type vars while with yield zip "
      "inf nan NoneType torch device fx_pytree pytree opdispatch ";
  static const std::set<std::string_view, std::less<>> reserved = [] {
    std::set<std::string_view, std::less<>> out;
    for (size_t start = 0, end; (end = kReserved.find(' ', start)) != std::string_view::npos;
         start = end + 1) {
      out.insert(kReserved.substr(start, end - start));
    }
    return out;
  }();
  return reserved.contains(name);
}

}  // namespace

const char* Node::op_name(Op op) {
  switch (op) {
    case Op::Placeholder:
      return "placeholder";
    case Op::GetAttr:
      return "get_attr";
    case Op::CallFunction:
      return "call_function";
    case Op::Output:
      return "output";
  }
  return "?";
}

std::string Node::target_string() const {
  if (target_) {
    const OperatorName& n = target_->operator_name();
    std::string ns = "aten", base = n.name;
    if (size_t sep = n.name.find("::"); sep != std::string::npos) {
      ns = n.name.substr(0, sep);
      base = n.name.substr(sep + 2);
    }
    return fmt::format("opdispatch.ops.{}.{}.{}", ns, base,
                       n.overload_name.empty() ? "default" : n.overload_name);
  }
  if (op_ == Op::CallFunction) return "getitem";
  if (op_ == Op::Output) return "output";
  return name_;
}

Graph::Graph() = default;

// torch.fx's _Namespace.create_name: characters that cannot be in an identifier become '_', a
// leading digit gets a '_', and a name taken (or reserved) gets the first free numeric suffix,
// counting on from a suffix the candidate already has ("sum_1" is base "sum", number 1).
std::string Graph::create_name(std::string_view wanted) {
  std::string candidate;
  bool in_illegal_run = false;  // a run of illegal characters becomes one '_'
  for (char c : wanted) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (ok) candidate += c;
    if (!ok && !in_illegal_run) candidate += '_';
    in_illegal_run = !ok;
  }
  if (candidate.empty()) candidate = "_";
  if (std::isdigit(static_cast<unsigned char>(candidate[0]))) candidate = "_" + candidate;
  std::string base = candidate;
  int64_t num = 0;
  // A suffix of more than 18 digits (no int64_t) stays part of the base.
  size_t us = candidate.rfind('_');
  if (us != std::string::npos && us + 1 < candidate.size() && candidate.size() - us - 1 <= 18 &&
      std::all_of(candidate.begin() + us + 1, candidate.end(),
                  [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    base = candidate.substr(0, us);
    num = std::stoll(candidate.substr(us + 1));
    candidate = fmt::format("{}_{}", base, num);
  }
  while (used_names_.contains(candidate) || is_illegal_name(candidate)) {
    candidate = fmt::format("{}_{}", base, ++num);
  }
  used_names_.insert(candidate);
  return candidate;
}

Node& Graph::append(Node::Op op, std::string_view candidate) {
  OPD_CHECK(!has_output_, "fx::Graph: the graph has its output node already; no node follows it");
  auto node = std::make_unique<Node>();
  node->op_ = op;
  node->index_ = nodes_.size();
  node->name_ = op == Node::Op::Output ? std::string("output") : create_name(candidate);
  nodes_.push_back(std::move(node));
  return *nodes_.back();
}

const Node& Graph::placeholder(std::string_view candidate, std::optional<IValue> default_value) {
  Node& n = append(Node::Op::Placeholder, candidate);
  n.default_value_ = std::move(default_value);
  return n;
}

const Node& Graph::get_attr(std::string_view candidate, Tensor value) {
  Node& n = append(Node::Op::GetAttr, candidate);
  attributes_.emplace(n.name_, std::move(value));
  return n;
}

const Node& Graph::call_function(const OperatorHandle& op, std::vector<Arg> args,
                                 std::vector<std::pair<std::string, Arg>> kwargs) {
  const std::string& full = op.operator_name().name;
  size_t sep = full.find("::");
  Node& n = append(Node::Op::CallFunction, sep == std::string::npos
                                               ? std::string_view(full)
                                               : std::string_view(full).substr(sep + 2));
  n.target_ = op;
  n.args_ = std::move(args);
  n.kwargs_ = std::move(kwargs);
  return n;
}

const Node& Graph::getitem(const Node& of, int64_t index) {
  Node& n = append(Node::Op::CallFunction, "getitem");
  n.getitem_index_ = index;
  n.args_ = {Arg::of(of), Arg::of(IValue(index))};
  return n;
}

const Node& Graph::output(Arg result) {
  Node& n = append(Node::Op::Output, "output");
  n.args_ = {std::move(result)};
  has_output_ = true;
  return n;
}

std::string constant_repr(const IValue& v) {
  if (v.is_scalar_type()) return fmt::format("opdispatch.{}", python_name(v.to_scalar_type()));
  if (v.is_layout()) return fmt::format("opdispatch.{}", python_name(v.to_layout()));
  if (v.is_memory_format()) return fmt::format("opdispatch.{}", python_name(v.to_memory_format()));
  if (v.is_double()) {
    double d = v.to_double();
    if (std::isnan(d)) return "nan";  // torch.fx's custom builtins inf and nan
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  }
  if (v.is_generic_list() || v.is_tuple()) {
    const auto& items = v.is_tuple() ? v.to_tuple() : v.to_generic_list();
    std::string out = v.is_tuple() ? "(" : "[";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + constant_repr(items[i]);
    if (v.is_tuple() && items.size() == 1) out += ",";
    return out + (v.is_tuple() ? ")" : "]");
  }
  return bind::repr(v);
}

}  // namespace opd::fx
