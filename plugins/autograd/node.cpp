#include "autograd/node.h"

#include <atomic>

namespace opd::autograd {
namespace {
std::atomic<uint64_t> next_sequence_nr{0};
}  // namespace

Node::Node() : sequence_nr_(next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

Node::~Node() = default;

uint32_t Node::add_input_metadata(const Tensor& t) {
  input_metadata_.push_back({t.sizes().vec(), t.scalar_type(), t.device()});
  return static_cast<uint32_t>(input_metadata_.size() - 1);
}

}  // namespace opd::autograd
