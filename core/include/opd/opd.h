#pragma once

// Everything a host program uses, in one include (as torch/torch.h and mlx/mlx.h): tensors and
// the typed operator API, autograd, the dispatcher and registration, the plugin manager.
//
//   #include "opd/opd.h"
//   opd::plugins().load_default();
//   opd::Tensor y = opd::ones({2, 3}) * 2;
//
// Plugins include only what plugin_api/ holds (opd/plugin.h and the headers it names), never
// this header: it reaches host-side parts of the core.

#include "opd/autograd.h"
#include "opd/dispatcher.h"
#include "opd/function_schema.h"
#include "opd/generator.h"
#include "opd/library.h"
#include "opd/ops.h"
#include "opd/plugin_manager.h"
#include "opd/tensor.h"
#include "opd/version.h"
