#pragma once

// The backward graph: a Node is one backward function (AddBackward0, AccumulateGrad); its next
// edges point at the nodes that receive its outputs, one per differentiable input of the forward
// operator. As PyTorch's torch::autograd::Node.

#include <boost/container/small_vector.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "opd/plugin.h"
#include "opd/plugin_object.h"
#include "opd/tensor.h"

namespace opd::autograd {

using variable_list = std::vector<Tensor>;
class Node;
struct AutogradMeta;

// Input `input_nr` of `function`; invalid (no function) for an input that needs no gradient.
struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool valid() const { return function != nullptr; }
};

// What a gradient arriving at a node's input must look like: the forward output it stands for.
// The engine sums a broadcast gradient to `sizes` and casts it to `dtype`.
struct InputMetadata {
  boost::container::small_vector<int64_t, 6> sizes;  // no allocation for an ordinary tensor
  IntArrayRef shape() const { return IntArrayRef(sizes.data(), sizes.size()); }
  ScalarType dtype = ScalarType::Float32;
  Device device{DeviceType::CPU};
  // Stands for an undefined forward output (a backward operator's output_mask left it out):
  // its gradient stays undefined, never materialized as zeros (PyTorch's undefined_input).
  bool undefined = false;
};

// A node's next edges: most operators have one or two differentiable inputs, kept inside the node.
using edge_list = boost::container::small_vector<Edge, 2>;

// A half-open range of next-edge indices (the elements of a Tensor[] input).
struct IndexRange {
  size_t begin = 0;
  size_t end = 0;
  size_t size() const { return end - begin; }
};

class Node {
 public:
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  virtual ~Node();

  virtual std::string name() const = 0;
  // Frees what the backward pass needs (saved tensors), after it ran without retain_graph.
  virtual void release_variables() {}
  // Whether apply receives zeros for the inputs that got no gradient (true) or undefined tensors.
  virtual bool materializes_grads() const { return true; }
  // Whether apply runs when no input got a gradient (a custom function's backward, as PyTorch
  // calls it) rather than being skipped, its outputs undefined (a formula's result would be).
  virtual bool runs_without_grads() const { return false; }

  const edge_list& next_edges() const { return next_edges_; }
  edge_list& mutable_next_edges() { return next_edges_; }
  void set_next_edges(edge_list edges) { next_edges_ = std::move(edges); }
  bool should_compute_output(size_t i) const {
    return i < next_edges_.size() && next_edges_[i].valid();
  }
  bool should_compute_any_output(IndexRange r) const {
    for (size_t i = r.begin; i < r.end; ++i) {
      if (should_compute_output(i)) return true;
    }
    return false;
  }

  // Adds an input standing for forward output `t`; returns its number.
  uint32_t add_input_metadata(const Tensor& t);
  // Adds an input standing for an undefined forward output; returns its number.
  uint32_t add_undefined_input();
  // Usually one (a node per forward output): kept inside the node.
  using InputMetadataList = boost::container::small_vector<InputMetadata, 1>;
  const InputMetadataList& input_metadata() const { return input_metadata_; }
  size_t num_inputs() const { return input_metadata_.size(); }

  // Creation order on the thread that made the node: the engine runs the most recent ready node
  // first, as PyTorch does.
  uint64_t sequence_nr() const { return sequence_nr_; }
  // This node as a shared_ptr, while run_node runs it (a saved output unpacks with it as
  // grad_fn). REQUIRES: called from this node's apply.
  const std::shared_ptr<Node>& shared() const;

  // Tensors whose .grad() receives the gradient of input `input_nr` (retain_grad()).
  std::vector<std::pair<uint32_t, std::weak_ptr<AutogradMeta>>>& retained_grads() {
    return retained_grads_;
  }

 protected:
  Node();

  // The gradients of the node's inputs (the forward outputs) in, the gradients of its next
  // edges out (undefined where none is needed). Run through run_node.
  virtual variable_list apply(variable_list&& grads) = 0;

 private:
  friend variable_list run_node(const std::shared_ptr<Node>& node, variable_list&& grads);

  edge_list next_edges_;
  InputMetadataList input_metadata_;
  std::vector<std::pair<uint32_t, std::weak_ptr<AutogradMeta>>> retained_grads_;
  uint64_t sequence_nr_;
};

// Runs node's backward function (its apply), during which node->shared() gives `node`. A node
// holds no reference to itself (a weak one would cost each node three atomic operations; the
// caller of its backward function always holds a strong one).
variable_list run_node(const std::shared_ptr<Node>& node, variable_list&& grads);

// Ends a node's life without recursing into the nodes it alone keeps alive (Note [Deep graphs]).
// Its memory belongs to the control block that make_node made.
void destroy_node(Node* node) noexcept;

// A node owned so that it keeps this plugin mapped while it lives (see opd/plugin_object.h), in
// one allocation with its control block, and ended by destroy_node.
template <class T, class... Args>
std::shared_ptr<T> make_node(Args&&... args) {
  auto destroy = [](void* p) { destroy_node(static_cast<T*>(p)); };
  return allocate_plugin_shared<T>(destroy, this_plugin_reference(), std::forward<Args>(args)...);
}

}  // namespace opd::autograd
