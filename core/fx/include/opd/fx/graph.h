#pragma once

// A graph of operator calls, as torch.fx's Graph holds what make_fx traced: placeholder nodes
// (the inputs), get_attr nodes (tensors the program used that no input or operator gave:
// `_tensor_constant0`), call_function nodes (an operator, or the i-th result of an earlier
// node with several results: torch's operator.getitem), and one output node. Nodes refer to
// earlier nodes only. The graph prints itself as torch.fx's Python source (code()) and runs
// again through the dispatcher, boxed (run()). Built by the capture mode (opd/fx/capture.h).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "opd/ivalue.h"
#include "opd/operator_handle.h"
#include "opd/tensor.h"

namespace opd::fx {

class Node;

// An argument of a node, or the output's structure: a reference to an earlier node, a constant
// (a number, a list of numbers, None, a dtype, a device...), or a list or tuple of arguments
// (cat([x_1, mul]), index.Tensor(x_1, [None, idx]), return (view, ones)).
struct Arg {
  enum class Kind { Node, Constant, List, Tuple };
  Kind kind = Kind::Constant;
  const Node* node = nullptr;  // Kind::Node
  IValue constant;             // Kind::Constant
  std::vector<Arg> items;      // Kind::List, Kind::Tuple

  static Arg of(const Node& n) { return {Kind::Node, &n, {}, {}}; }
  static Arg of(IValue v) { return {Kind::Constant, nullptr, std::move(v), {}}; }
  static Arg list(std::vector<Arg> items) { return {Kind::List, nullptr, {}, std::move(items)}; }
  static Arg tuple(std::vector<Arg> items) { return {Kind::Tuple, nullptr, {}, std::move(items)}; }
};

class Node {
 public:
  enum class Op { Placeholder, GetAttr, CallFunction, Output };
  // torch.fx's node.op: "placeholder", "get_attr", "call_function", "output".
  static const char* op_name(Op op);

  Op op() const { return op_; }
  // Unique in its graph, a Python identifier that shadows no builtin (torch.fx's _Namespace).
  const std::string& name() const { return name_; }
  // Its position in the graph's nodes().
  size_t index() const { return index_; }
  // call_function of an operator: the operator. Null for getitem and the other ops.
  const OperatorHandle* target() const { return target_ ? &*target_ : nullptr; }
  // call_function of operator.getitem: the index (args are (node, index)); -1 otherwise.
  int64_t getitem_index() const { return getitem_index_; }
  // Positional arguments (for getitem: the node and the index; for output: the result).
  const std::vector<Arg>& args() const { return args_; }
  // Keyword arguments, in schema order.
  const std::vector<std::pair<std::string, Arg>>& kwargs() const { return kwargs_; }
  // A placeholder's default value (def forward(self, x_1, y_1 = 2)), if any.
  const std::optional<IValue>& default_value() const { return default_value_; }
  // The target as torch.fx prints it: "opdispatch.ops.aten.add.Tensor", "getitem", the
  // placeholder's or attribute's name, "output".
  std::string target_string() const;

 private:
  friend class Graph;
  Op op_ = Op::CallFunction;
  std::string name_;
  size_t index_ = 0;
  std::optional<OperatorHandle> target_;
  int64_t getitem_index_ = -1;
  std::vector<Arg> args_;
  std::vector<std::pair<std::string, Arg>> kwargs_;
  std::optional<IValue> default_value_;
};

// Not thread-safe: one thread builds and reads a graph at a time (running it is const).
class Graph {
 public:
  Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Each returns the node it appended. `candidate` is the name wanted; the node gets it, or
  // the first of candidate_1, candidate_2... that is free and no Python keyword or builtin
  // (torch.fx's rules: `sum` becomes sum_1).
  const Node& placeholder(std::string_view candidate,
                          std::optional<IValue> default_value = std::nullopt);
  // A tensor attribute of the module (`_tensor_constant0 = self._tensor_constant0`).
  const Node& get_attr(std::string_view candidate, Tensor value);
  // Named after the operator's base name ("add", "sum_1", "add_", "_to_copy").
  // REQUIRES: every node the arguments refer to belongs to this graph.
  const Node& call_function(const OperatorHandle& op, std::vector<Arg> args,
                            std::vector<std::pair<std::string, Arg>> kwargs = {});
  // The index-th result of `of`, which has several: `getitem = max_1[0]`.
  const Node& getitem(const Node& of, int64_t index);
  // The output node; at most one, the last node. Throws opd::Error when there is one already.
  const Node& output(Arg result);

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  // The get_attr nodes' tensors, by name.
  const std::map<std::string, Tensor, std::less<>>& attributes() const { return attributes_; }

  // torch.fx's pytree code generation (_PyTreeCodeGen), which make_fx uses when an input is a
  // list, tuple or dict: forward takes the program's own arguments (`names`), flattens them
  // into the placeholders (`xs_1, xs_2, y_1, = fx_pytree.tree_flatten_spec([xs, y],
  // self._in_spec)`) and returns the output's leaves through pytree.tree_unflatten. run() still
  // takes the placeholders' values (the leaves) and returns the output's structure.
  void set_pytree_arguments(std::vector<std::string> names) { pytree_args_ = std::move(names); }
  const std::vector<std::string>& pytree_arguments() const { return pytree_args_; }

  // torch.fx's GraphModule.code: "\n\n\ndef forward(self, x_1):\n    neg = ..." with each
  // value freed after its last use (`;  x_1 = None`). Operators print as
  // opdispatch.ops.<namespace>.<name>.<overload> ("default" for the unnamed overload),
  // dtypes as opdispatch.float32, devices as device(type='cpu').
  std::string code() const;
  // torch.fx's print_readable(): the code as the forward method of `class <class_name>`.
  std::string readable(std::string_view class_name) const;

  // Calls the operators again, boxed through the dispatcher, with `inputs` for the
  // placeholders (a missing trailing input takes its placeholder's default), and returns the
  // output's value (a tuple for a Tuple, a generic list for a List). Throws opd::TypeError
  // for a wrong number of inputs, and whatever the operators throw.
  IValue run(std::vector<IValue> inputs) const;

 private:
  Node& append(Node::Op op, std::string_view candidate);
  std::string create_name(std::string_view candidate);

  std::vector<std::unique_ptr<Node>> nodes_;
  std::map<std::string, Tensor, std::less<>> attributes_;
  std::set<std::string, std::less<>> used_names_;
  bool has_output_ = false;
  std::vector<std::string> pytree_args_;  // empty: the plain code generation
};

// The Python source of a constant as torch.fx prints it: 2, 1.5, 1e-05, inf, nan, True, None,
// [3, 1], opdispatch.float64, opdispatch.strided, device(type='cpu'), 'str'.
std::string constant_repr(const IValue& v);

}  // namespace opd::fx
