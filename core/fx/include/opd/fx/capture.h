#pragma once

// Graph capture: a dispatch mode (opd/dispatch_mode.h) that runs every operator below the
// Python key, on the real tensors (make_fx's tracing_mode="real"), and records it as a node of
// a Graph. Since the Python key is below Autograd, the operators recorded are those the
// backends run: composite operators decomposed, and the backward's operators when the traced
// program runs a backward (the joint graph). See Note [Graph capture] in capture.cpp.

#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "opd/dispatch_mode.h"
#include "opd/fx/graph.h"

namespace opd::fx {

// Use on one thread: make it and push it (DispatchModeGuard) on the thread that runs the
// program. Operators other threads run are not recorded; a dispatch through it on another thread
// (the mode popped and pushed there) is refused, since the graph has no lock.
class CaptureMode : public DispatchMode {
 public:
  CaptureMode();

  // A placeholder for an input of the program; a tensor input becomes that node wherever an
  // operator takes it. Call for each input, in order, before running the program.
  const Node& add_input(std::string_view name, const IValue& value,
                        std::optional<IValue> default_value = std::nullopt);
  // The output node: the program's result, tensors that operators made (or inputs) as their
  // nodes, other tensors as attributes, the rest as constants; tuples and lists keep their
  // structure (generic lists print as lists).
  void set_output(const IValue& result);

  void dispatch(const OperatorHandle& op, DispatchKeySet keys, Stack* stack) override;

  Graph& graph() { return *graph_; }
  // The graph, for a GraphModule; the mode records nothing afterwards.
  std::shared_ptr<Graph> take_graph();

 private:
  // `v` as an argument: a tensor the graph knows as its node, a wrapped number as the number,
  // a detached copy of a node's tensor (the same view of its storage) as that node, another
  // tensor as a new get_attr node `_tensor_constantN`; lists item by item.
  Arg arg_for(const IValue& v);
  const Node* node_of_alias(const Tensor& t) const;
  void record_result(const Node& node, const IValue& v);

  const std::thread::id owner_ = std::this_thread::get_id();
  std::shared_ptr<Graph> graph_;
  // Tensors with a node, by TensorImpl; the tensors are kept alive in `kept_` so that their
  // addresses are not reused by a new tensor while the capture lasts.
  std::unordered_map<const TensorImpl*, const Node*> nodes_of_;
  std::vector<Tensor> kept_;
  int tensor_constants_ = 0;
};

// Captures `program` (which runs operators and returns its result) with the inputs given, as
// make_fx does: placeholders named `<name>_1`, the operators, the output.
std::shared_ptr<Graph> capture(const std::vector<std::pair<std::string, IValue>>& inputs,
                               const std::function<IValue()>& program);

}  // namespace opd::fx
