#pragma once

// cpu_kernel for the CPU plugin: common/loops.h's loop, split across the plugin's thread pool.

#include "common/loops.h"
#include "cpu/parallel.h"

namespace opd::cpu {

// Runs out = op(inputs...) over `iter` on the pool (see opd::common::host_kernel).
template <class Op>
void cpu_kernel(const common::TensorIterator& iter, const Op& op) {
  common::host_kernel(iter, op, &parallel_for);
}

}  // namespace opd::cpu
