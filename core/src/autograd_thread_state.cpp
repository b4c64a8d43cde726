#include "opd/autograd_thread_state.h"

namespace opd::detail {

OPD_API constinit thread_local AutogradThreadState tls_autograd_state
    __attribute__((tls_model("initial-exec")));

}  // namespace opd::detail
