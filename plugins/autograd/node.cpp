#include "autograd/node.h"

#include <memory>
#include <vector>

#include "autograd/thread_state.h"

namespace opd::autograd {

// This thread's state lives in the core (Note [Thread state of plugins]). Sequence numbers are
// per thread, as PyTorch's at::sequence_number: the engine only orders the nodes of one graph,
// which one thread records, and a shared counter would cost every node an atomic increment.
constinit PluginThreadState<ThreadState> state_slot;

void claim_thread_state() { state_slot.claim("autograd"); }
ThreadState& thread_state() { return state_slot.get(); }

namespace {
// The node run_node is running on this thread (innermost), for Node::shared().
const std::shared_ptr<Node>* running_node() {
  return static_cast<const std::shared_ptr<Node>*>(thread_state().running_node);
}
}  // namespace

Node::Node() : sequence_nr_(thread_state().next_sequence_nr++) {}

Node::~Node() = default;

const std::shared_ptr<Node>& Node::shared() const {
  const std::shared_ptr<Node>* running = running_node();
  OPD_INTERNAL_ASSERT(running != nullptr && running->get() == this,
                      "{}: shared() called outside its own run_node", name());
  return *running;
}

variable_list run_node(const std::shared_ptr<Node>& node, variable_list&& grads) {
  struct Restore {
    const void* outer;
    ~Restore() { thread_state().running_node = outer; }
  } restore{thread_state().running_node};
  thread_state().running_node = &node;
  return node->apply(std::move(grads));
}

// Note [Deep graphs]
// A node owns the nodes of its next edges, and through its saved tensors their grad_fns: freeing
// the head of a long chain from destructors would recurse once per node and overflow the stack
// (a loop that builds a graph of 200,000 operations and drops it). As PyTorch's deleteNode, the
// outermost deletion on a thread collects the nodes a node releases into a list, after freeing
// its saved variables, and frees them one by one; deletions they cause add to the same list.
void destroy_node(Node* node) noexcept {
  using List = boost::container::small_vector_base<std::shared_ptr<Node>>;
  // Room for a short chain, so that freeing an ordinary graph does not allocate.
  boost::container::small_vector<std::shared_ptr<Node>, 8> local;
  ThreadState& state = thread_state();
  const bool outermost = state.pending_deletions == nullptr;
  if (outermost) state.pending_deletions = static_cast<List*>(&local);
  List& pending = *static_cast<List*>(state.pending_deletions);
  node->release_variables();
  for (Edge& e : node->mutable_next_edges()) {
    if (e.function) pending.push_back(std::move(e.function));
  }
  node->~Node();
  if (outermost) {
    while (!local.empty()) {
      std::shared_ptr<Node> next = std::move(local.back());
      local.pop_back();
      next.reset();  // may run destroy_node, which appends to `local`
    }
    state.pending_deletions = nullptr;
  }
}

uint32_t Node::add_undefined_input() {
  input_metadata_.emplace_back().undefined = true;
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

uint32_t Node::add_input_metadata(const Tensor& t) {
  const IntArrayRef sizes = t.sizes();
  InputMetadata& m = input_metadata_.emplace_back();
  m.sizes.assign(sizes.begin(), sizes.end());
  m.dtype = t.scalar_type();
  m.device = t.device();
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

}  // namespace opd::autograd
