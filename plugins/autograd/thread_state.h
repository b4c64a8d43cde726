#pragma once

// The autograd plugin's per-thread state, in the core's slot for plugin "autograd" (Note
// [Thread state of plugins] in opd/plugin_thread_state.h).

#include <cstdint>

#include "opd/plugin_thread_state.h"

namespace opd::autograd {

struct ThreadState {
  uint64_t next_sequence_nr;  // as PyTorch's at::sequence_number
  // Set only while a call of this plugin runs on the thread, so a reload never finds them
  // dangling.
  const void* running_node;  // const std::shared_ptr<Node>*: Node::shared()
  void* pending_deletions;   // the outermost destroy_node's work list (Note [Deep graphs])
};

// Takes the plugin's thread-state slot; called by its OPD_PLUGIN block, before any kernel runs.
void claim_thread_state();
// This thread's autograd state.
ThreadState& thread_state();

}  // namespace opd::autograd
