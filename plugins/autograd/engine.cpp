#include "autograd/engine.h"

#include <fmt/format.h>

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "autograd/accumulate_grad.h"
#include "autograd/autograd_meta.h"
#include "autograd/formulas.h"
#include "opd/ops.h"

namespace opd::autograd {

GradModeGuard::GradModeGuard(bool enabled)
    : previously_excluded_(tls_local_dispatch_key_set().excluded & kAutogradKeySet) {
  for (DispatchKey k : kAutogradKeySet) tls_set_dispatch_key_excluded(k, !enabled);
}

GradModeGuard::~GradModeGuard() {
  for (DispatchKey k : kAutogradKeySet) {
    tls_set_dispatch_key_excluded(k, previously_excluded_.has(k));
  }
}

namespace {

std::string shape(IntArrayRef s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

bool expandable(IntArrayRef from, IntArrayRef to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] != to[lead + i] && from[i] != 1) return false;
  }
  return true;
}

// PyTorch's validate_outputs: a gradient is summed to its input's shape and cast to its dtype
// and device; one that cannot be is the node's bug.
Tensor validate(const Node& node, size_t index, Tensor grad, const InputMetadata& m) {
  if (!grad.sizes().equals(m.shape())) {
    OPD_CHECK(expandable(m.shape(), grad.sizes()),
              "Function {} returned an invalid gradient at index {} - got {} but expected shape "
              "compatible with {}",
              node.name(), index, shape(grad.sizes()), shape(m.shape()));
    grad = sum_to(grad, m.shape());
  }
  if (grad.scalar_type() != m.dtype || grad.device() != m.device) {
    grad = _to_copy(grad, TensorOptions().dtype(m.dtype).device(m.device));
  }
  return grad;
}

void accumulate(variable_list& buffer, size_t nr, Tensor grad) {
  if (buffer.size() <= nr) buffer.resize(nr + 1);
  buffer[nr] = buffer[nr].defined() ? buffer[nr] + grad : std::move(grad);
}

struct ByRecency {
  bool operator()(const std::shared_ptr<Node>& a, const std::shared_ptr<Node>& b) const {
    return a->sequence_nr() < b->sequence_nr();
  }
};

// The nodes from which some captured edge can be reached (they must run); nodes are reached from
// `roots` in a DAG, so one post-order walk decides each once.
std::unordered_set<Node*> nodes_leading_to(const std::vector<Edge>& roots,
                                           const std::unordered_set<Node*>& targets) {
  std::unordered_map<Node*, bool> leads;  // decided nodes
  std::vector<std::pair<Node*, size_t>> stack;
  for (const Edge& r : roots) {
    if (r.function && !leads.count(r.function.get())) stack.push_back({r.function.get(), 0});
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next == 0) leads.emplace(node, false);
      if (next < node->next_edges().size()) {
        Node* child = node->next_edges()[next++].function.get();
        if (child && !leads.count(child)) stack.push_back({child, 0});
        continue;
      }
      bool any = false;
      for (const Edge& e : node->next_edges()) {
        if (e.function) any = any || targets.count(e.function.get()) || leads[e.function.get()];
      }
      leads[node] = any;
      stack.pop_back();
    }
  }
  std::unordered_set<Node*> out;
  for (const auto& [node, lead] : leads) {
    if (lead) out.insert(node);
  }
  return out;
}

}  // namespace

variable_list run_backward(const std::vector<Edge>& roots, variable_list grad_roots,
                           bool keep_graph, bool create_graph, const std::vector<Edge>& outputs) {
  OPD_INTERNAL_ASSERT(roots.size() == grad_roots.size());
  const bool accumulate_grad = outputs.empty();
  GradModeGuard grad_mode(create_graph);

  // Dependencies: how many edges of the reachable graph point at each node.
  std::unordered_map<Node*, size_t> dependencies;
  {
    std::unordered_set<Node*> seen;
    std::vector<Node*> stack;
    for (const Edge& r : roots) {
      if (r.function && seen.insert(r.function.get()).second) stack.push_back(r.function.get());
    }
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next_edges()) {
        if (!e.function) continue;
        ++dependencies[e.function.get()];
        if (seen.insert(e.function.get()).second) stack.push_back(e.function.get());
      }
    }
  }
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;
  std::unordered_set<Node*> targets, must_run;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].function) continue;
    captures[outputs[i].function.get()].push_back({outputs[i].input_nr, i});
    targets.insert(outputs[i].function.get());
  }
  if (!accumulate_grad) must_run = nodes_leading_to(roots, targets);

  std::unordered_map<Node*, variable_list> buffers;
  std::priority_queue<std::shared_ptr<Node>, std::vector<std::shared_ptr<Node>>, ByRecency> ready;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (!roots[i].function) continue;
    accumulate(buffers[roots[i].function.get()], roots[i].input_nr, std::move(grad_roots[i]));
  }
  {
    std::unordered_set<Node*> queued;
    for (const Edge& r : roots) {
      if (r.function && !dependencies.count(r.function.get()) &&
          queued.insert(r.function.get()).second) {
        ready.push(r.function);
      }
    }
  }

  variable_list captured(outputs.size());
  while (!ready.empty()) {
    std::shared_ptr<Node> node = ready.top();
    ready.pop();
    variable_list inputs = std::move(buffers[node.get()]);
    buffers.erase(node.get());
    inputs.resize(std::max(inputs.size(), node->num_inputs()));
    if (auto it = captures.find(node.get()); it != captures.end()) {
      for (auto [nr, index] : it->second)
        captured[index] = nr < inputs.size() ? inputs[nr] : Tensor();
    }
    if (accumulate_grad) {
      for (auto& [nr, weak] : node->retained_grads()) {
        auto meta = weak.lock();
        if (!meta || nr >= inputs.size() || !inputs[nr].defined()) continue;
        meta->grad = meta->grad.defined() ? meta->grad + inputs[nr]
                                          : inputs[nr].clone(MemoryFormat::Contiguous);
      }
    } else if (!must_run.count(node.get())) {
      continue;  // leads to no requested gradient (a leaf's AccumulateGrad among them)
    }
    bool any_defined = false;
    for (const Tensor& g : inputs) any_defined = any_defined || g.defined();
    variable_list grads;
    if (any_defined || node->runs_without_grads()) {
      // A formula may read every incoming gradient: missing ones are zeros (unless the node
      // takes them undefined: a custom function's set_materialize_grads(false)).
      for (size_t i = 0; i < node->num_inputs() && node->materializes_grads(); ++i) {
        const InputMetadata& m = node->input_metadata()[i];
        if (inputs[i].defined() || m.undefined) continue;
        inputs[i] = zeros(m.shape(), TensorOptions().dtype(m.dtype).device(m.device));
      }
      grads = run_node(node, std::move(inputs));
      if (!keep_graph) node->release_variables();
      OPD_CHECK(grads.size() == node->next_edges().size() || node->next_edges().empty(),
                "Function {} returned an incorrect number of gradients (expected {}, got {})",
                node->name(), node->next_edges().size(), grads.size());
    }
    grads.resize(node->next_edges().size());
    for (size_t i = 0; i < grads.size(); ++i) {
      const Edge& e = node->next_edges()[i];
      if (!e.function) continue;
      if (grads[i].defined()) {
        Tensor g =
            validate(*node, i, std::move(grads[i]), e.function->input_metadata()[e.input_nr]);
        accumulate(buffers[e.function.get()], e.input_nr, std::move(g));
      }
      if (--dependencies[e.function.get()] == 0) ready.push(e.function);
    }
  }
  return captured;
}

}  // namespace opd::autograd
