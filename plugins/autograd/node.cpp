#include "autograd/node.h"

#include <atomic>
#include <memory>
#include <vector>

namespace opd::autograd {
namespace {
std::atomic<uint64_t> next_sequence_nr{0};
}  // namespace

Node::Node() : sequence_nr_(next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

Node::~Node() = default;

// Note [Deep graphs]
// A node owns the nodes of its next edges, and through its saved tensors their grad_fns: freeing
// the head of a long chain from destructors would recurse once per node and overflow the stack
// (a loop that builds a graph of 200,000 operations and drops it). As PyTorch's deleteNode, the
// outermost deletion on a thread collects the nodes a node releases into a list, after freeing
// its saved variables, and frees them one by one; deletions they cause add to the same list.
void delete_node(void* p) {
  thread_local std::vector<std::shared_ptr<Node>>* pending = nullptr;
  auto* node = static_cast<Node*>(p);
  std::vector<std::shared_ptr<Node>> local;
  const bool outermost = pending == nullptr;
  if (outermost) pending = &local;
  node->release_variables();
  for (Edge& e : node->mutable_next_edges()) {
    if (e.function) pending->push_back(std::move(e.function));
  }
  delete node;
  if (outermost) {
    while (!local.empty()) {
      std::shared_ptr<Node> next = std::move(local.back());
      local.pop_back();
      next.reset();  // may run delete_node, which appends to `local`
    }
    pending = nullptr;
  }
}

uint32_t Node::add_input_metadata(const Tensor& t) {
  input_metadata_.push_back({t.sizes().vec(), t.scalar_type(), t.device()});
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

}  // namespace opd::autograd
