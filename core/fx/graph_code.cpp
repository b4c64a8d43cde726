// Graph::code and Graph::readable: torch.fx's code generation (torch/fx/graph.py,
// CodeGen._gen_python_code) for the nodes a capture makes.

#include <fmt/format.h>

#include <map>

#include "opd/fx/graph.h"

namespace opd::fx {

namespace {

std::string arg_repr(const Arg& a) {
  switch (a.kind) {
    case Arg::Kind::Node:
      return a.node->name();
    case Arg::Kind::Constant:
      return constant_repr(a.constant);
    case Arg::Kind::List:
    case Arg::Kind::Tuple: {
      bool tuple = a.kind == Arg::Kind::Tuple;
      std::string out = tuple ? "(" : "[";
      for (size_t i = 0; i < a.items.size(); ++i) out += (i ? ", " : "") + arg_repr(a.items[i]);
      if (tuple && a.items.size() == 1) out += ",";
      return out + (tuple ? ")" : "]");
    }
  }
  return "?";
}

template <class F>
void for_each_node(const Arg& a, const F& f) {
  if (a.kind == Arg::Kind::Node) f(a.node);
  for (const Arg& item : a.items) for_each_node(item, f);
}

template <class F>
void for_each_node(const Node& n, const F& f) {
  for (const Arg& a : n.args()) for_each_node(a, f);
  for (const auto& kw : n.kwargs()) for_each_node(kw.second, f);
}

// The body and the def line, as torch.fx's _gen_python_code; `verbose` adds the stack trace
// summary, which a capture does not record: the one "No stacktrace" line print_readable shows.
// The output's leaves, in order (torch's pytree flattening of the output).
void flatten(const Arg& a, std::vector<Arg>* leaves) {
  if (a.kind == Arg::Kind::List || a.kind == Arg::Kind::Tuple) {
    for (const Arg& item : a.items) flatten(item, leaves);
  } else {
    leaves->push_back(a);
  }
}

std::string python_code(const std::vector<std::unique_ptr<Node>>& nodes,
                        const std::vector<std::string>& pytree_args, bool verbose) {
  // Each value is freed after its last use: walking backwards, the first user seen of a node is
  // its last; users list what they free in the order they refer to them.
  std::map<const Node*, const Node*> last_use;
  std::map<const Node*, std::vector<const Node*>> frees;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    const Node* user = it->get();
    for_each_node(*user, [&](const Node* used) {
      if (last_use.emplace(used, user).second) frees[user].push_back(used);
    });
  }
  std::vector<std::string> free_vars{"self"};
  std::string body;
  bool said_no_stacktrace = false;
  for (const auto& node : nodes) {
    const Node& n = *node;
    if (verbose && !said_no_stacktrace && n.op() != Node::Op::Placeholder &&
        n.op() != Node::Op::Output) {
      body += "\n# No stacktrace found for following nodes \n";
      said_no_stacktrace = true;
    }
    switch (n.op()) {
      case Node::Op::Placeholder:
        free_vars.push_back(
            n.default_value() ? fmt::format("{} = {}", n.name(), constant_repr(*n.default_value()))
                              : n.name());
        continue;  // a placeholder frees nothing
      case Node::Op::GetAttr:
        body += fmt::format("{} = self.{}", n.name(), n.name());
        break;
      case Node::Op::CallFunction:
        if (n.getitem_index() >= 0) {
          body += fmt::format("{} = {}[{}]", n.name(), arg_repr(n.args()[0]), n.getitem_index());
        } else {
          std::string args;
          for (const Arg& a : n.args()) args += (args.empty() ? "" : ", ") + arg_repr(a);
          for (const auto& [name, a] : n.kwargs()) {
            args += fmt::format("{}{} = {}", args.empty() ? "" : ", ", name, arg_repr(a));
          }
          body += fmt::format("{} = {}({})", n.name(), n.target_string(), args);
        }
        break;
      case Node::Op::Output:
        if (pytree_args.empty()) {
          body += "return " + arg_repr(n.args()[0]) + "\n";
        } else {
          std::vector<Arg> leaves;
          flatten(n.args()[0], &leaves);
          body += fmt::format("return pytree.tree_unflatten({}, self._out_spec)\n",
                              arg_repr(Arg::list(std::move(leaves))));
        }
        continue;
    }
    if (auto it = frees.find(&n); it != frees.end()) {
      body += ";  ";
      for (const Node* f : it->second) body += f->name() + " = ";
      body += "None";
    }
    body += "\n";
  }
  if (body.empty()) body = "pass\n";
  std::string code;
  size_t start = 0;
  while (true) {
    size_t end = body.find('\n', start);
    code += "    " + body.substr(start, end == std::string::npos ? end : end - start);
    if (end == std::string::npos) break;
    code += "\n";
    start = end + 1;
  }
  if (pytree_args.empty()) {
    return fmt::format("\n\n\ndef forward({}):\n{}", fmt::join(free_vars, ", "), code);
  }
  // _PyTreeCodeGen.gen_fn_def: the program's arguments, and the placeholders (without self)
  // unpacked from them on the def's next line.
  std::string def = fmt::format("def forward(self, {}):", fmt::join(pytree_args, ", "));
  if (free_vars.size() > 1) {
    def += fmt::format("\n    {}, = fx_pytree.tree_flatten_spec([{}], self._in_spec)",
                       fmt::join(free_vars.begin() + 1, free_vars.end(), ", "),
                       fmt::join(pytree_args, ", "));
  }
  return fmt::format("\n\n\n{}\n{}", def, code);
}

}  // namespace

std::string Graph::code() const { return python_code(nodes_, pytree_args_, /*verbose=*/false); }

// GraphModule.print_readable: the verbose code without its leading newlines, as a method of
// the class, every line after the first indented by four spaces (torch's _addindent).
std::string Graph::readable(std::string_view class_name) const {
  std::string code = python_code(nodes_, pytree_args_, /*verbose=*/true);
  code.erase(0, code.find_first_not_of('\n'));
  std::string text = fmt::format("class {}(torch.nn.Module):\n{}", class_name, code);
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += "    ";
  }
  return out;
}

}  // namespace opd::fx
