#pragma once

// Everything the generated nodes and kernels (opd-gen --derivatives) use.

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/activation_formulas.h"
#include "autograd/autograd_meta.h"
#include "autograd/conv_formulas.h"
#include "autograd/formulas.h"
#include "autograd/kernel_support.h"
#include "autograd/loss_formulas.h"
#include "autograd/node.h"
#include "autograd/norm_formulas.h"
#include "autograd/pad_formulas.h"
#include "autograd/pool_formulas.h"
#include "autograd/saved_variable.h"
#include "autograd/scatter_scan_formulas.h"
#include "opd/library.h"
#include "opd/local_dispatch_key_set.h"
#include "opd/ops.h"

namespace opd::autograd::generated {
void register_autograd_kernels(Library& m);
}  // namespace opd::autograd::generated
