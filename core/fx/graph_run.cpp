// Graph::run: the captured operators called again, boxed, through the dispatcher.

#include <fmt/format.h>

#include <map>

#include "opd/bind/binding.h"
#include "opd/error.h"
#include "opd/fx/graph.h"

namespace opd::fx {

namespace {

using Env = std::map<const Node*, IValue>;

// A list argument is a generic list here; binding converts it to the type the schema wants
// (Tensor[], Tensor?[], int[]), as it does for a Python list.
IValue value_of(const Arg& a, const Env& env) {
  switch (a.kind) {
    case Arg::Kind::Node:
      return env.at(a.node);
    case Arg::Kind::Constant:
      return a.constant;
    case Arg::Kind::List:
    case Arg::Kind::Tuple: {
      std::vector<IValue> items;
      items.reserve(a.items.size());
      for (const Arg& item : a.items) items.push_back(value_of(item, env));
      return a.kind == Arg::Kind::List ? IValue::make_generic_list(std::move(items))
                                       : IValue::make_tuple(std::move(items));
    }
  }
  return {};
}

// The index-th element of a node's value: a tuple of results, or a list result.
IValue element_of(const IValue& v, int64_t index) {
  if (v.is_tuple()) return v.to_tuple().at(index);
  if (v.is_tensor_list()) return IValue(v.to_tensor_list().at(index));
  if (v.is_generic_list()) return v.to_generic_list().at(index);
  throw Error(fmt::format("fx::Graph::run: getitem of a {}", v.tag_name()));
}

}  // namespace

IValue Graph::run(std::vector<IValue> inputs) const {
  size_t placeholders = 0, required = 0;
  for (const auto& n : nodes_) {
    if (n->op() != Node::Op::Placeholder) continue;
    ++placeholders;
    if (!n->default_value()) required = placeholders;
  }
  OPD_CHECK_T(TypeError, inputs.size() >= required && inputs.size() <= placeholders,
              "forward() takes {} positional arguments but {} were given", placeholders + 1,
              inputs.size() + 1);
  Env env;
  size_t next_input = 0;
  for (const auto& node : nodes_) {
    const Node& n = *node;
    switch (n.op()) {
      case Node::Op::Placeholder:
        env[&n] = next_input < inputs.size() ? std::move(inputs[next_input]) : *n.default_value();
        ++next_input;
        break;
      case Node::Op::GetAttr:
        env[&n] = IValue(attributes_.find(n.name())->second);
        break;
      case Node::Op::CallFunction: {
        if (n.getitem_index() >= 0) {
          env[&n] = element_of(env.at(n.args()[0].node), n.getitem_index());
          break;
        }
        bind::CallArgs call;
        for (const Arg& a : n.args()) call.positional.push_back(value_of(a, env));
        for (const auto& [name, a] : n.kwargs()) call.keywords.emplace_back(name, value_of(a, env));
        const FunctionSchema& schema = n.target()->schema();
        std::string why;
        std::optional<Stack> stack =
            bind::try_bind(schema, call, {}, &why, /*numbers_as_tensors=*/true);
        OPD_CHECK_T(TypeError, stack.has_value(), "fx::Graph::run: node {}: {}", n.name(), why);
        n.target()->call_boxed(&*stack);
        env[&n] =
            stack->size() == 1 ? std::move((*stack)[0]) : IValue::make_tuple(std::move(*stack));
        break;
      }
      case Node::Op::Output:
        return value_of(n.args()[0], env);
    }
  }
  return {};
}

}  // namespace opd::fx
