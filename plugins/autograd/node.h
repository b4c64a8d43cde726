#pragma once

// The backward graph: a Node is one backward function (AddBackward0, AccumulateGrad); its next
// edges point at the nodes that receive its outputs, one per differentiable input of the forward
// operator. As PyTorch's torch::autograd::Node.

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
  std::vector<int64_t> sizes;
  ScalarType dtype = ScalarType::Float32;
  Device device{DeviceType::CPU};
};

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

  // The gradients of the node's inputs (the forward outputs) in, the gradients of its next
  // edges out (undefined where none is needed).
  virtual variable_list apply(variable_list&& grads) = 0;
  virtual std::string name() const = 0;
  // Frees what the backward pass needs (saved tensors), after it ran without retain_graph.
  virtual void release_variables() {}

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  std::vector<Edge>& mutable_next_edges() { return next_edges_; }
  void set_next_edges(std::vector<Edge> edges) { next_edges_ = std::move(edges); }
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
  const std::vector<InputMetadata>& input_metadata() const { return input_metadata_; }
  size_t num_inputs() const { return input_metadata_.size(); }

  // Creation order: the engine runs the most recent ready node first, as PyTorch does.
  uint64_t sequence_nr() const { return sequence_nr_; }
  // This node as a shared_ptr (a saved output unpacks with it as grad_fn).
  std::shared_ptr<Node> shared() const { return weak_self_.lock(); }

  // Tensors whose .grad() receives the gradient of input `input_nr` (retain_grad()).
  std::vector<std::pair<uint32_t, std::weak_ptr<AutogradMeta>>>& retained_grads() {
    return retained_grads_;
  }

 protected:
  Node();

 private:
  template <class T, class... Args>
  friend std::shared_ptr<T> make_node(Args&&... args);

  std::vector<Edge> next_edges_;
  std::vector<InputMetadata> input_metadata_;
  std::vector<std::pair<uint32_t, std::weak_ptr<AutogradMeta>>> retained_grads_;
  uint64_t sequence_nr_;
  std::weak_ptr<Node> weak_self_;
};

// Destroys a node without recursing into the nodes it alone keeps alive (Note [Deep graphs]).
void delete_node(void* node);

// A node owned so that it keeps this plugin mapped while it lives (see opd/plugin_object.h), and
// freed by delete_node.
template <class T, class... Args>
std::shared_ptr<T> make_node(Args&&... args) {
  T* raw = new T(std::forward<Args>(args)...);
  std::shared_ptr<T> node(
      make_plugin_object(static_cast<Node*>(raw), &delete_node, this_plugin_reference()), raw);
  node->weak_self_ = node;
  return node;
}

}  // namespace opd::autograd
