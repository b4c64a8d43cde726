#pragma once

// The autograd plugin's per-thread state, kept in libopd_core.so as PyTorch keeps autograd's
// thread state in c10 (AutogradState) and ATen (the sequence number) rather than in a loadable
// library.
//
// Note [Thread state of plugins]
// A plugin is dlopen'ed, so a thread_local of its own lives in dynamic TLS: every access is a
// __tls_get_addr call, and LeakSanitizer, which tracks dynamic TLS blocks by intercepting that
// call, was seen to crash at exit on its record of the autograd plugin's block (`opd demo` under
// ASan, depending on the working directory). The initial-exec model avoids both, but a plugin's
// initial-exec TLS takes room in the static TLS block that glibc does not always give back at
// dlclose, so that reloading the plugin a few hundred times fails with "cannot allocate memory
// in static TLS block". The core is linked by the executable, never unloaded: its thread-locals
// are in the static block, read with one %fs-relative load, and survive plugin reloads.

#include <cstdint>

#include "opd/export.h"

namespace opd::detail {

// Owned by the autograd plugin (plugins/autograd/node.cpp); its pointers are set only while a
// call of that plugin runs on the thread, so a reload never finds them dangling.
struct AutogradThreadState {
  uint64_t next_sequence_nr = 0;       // as PyTorch's at::sequence_number
  const void* running_node = nullptr;  // const std::shared_ptr<Node>*: Node::shared()
  void* pending_deletions = nullptr;   // the outermost destroy_node's work list (Deep graphs)
};

extern OPD_API constinit thread_local AutogradThreadState tls_autograd_state
    __attribute__((tls_model("initial-exec")));

}  // namespace opd::detail
