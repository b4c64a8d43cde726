#pragma once

// A tensor a backward node keeps for its formula, with the version it had when saved: unpacking
// it after an in-place change, or after the graph was freed, fails with PyTorch's messages.

#include <optional>
#include <string>

#include "autograd/node.h"

namespace opd::autograd {

class SavedVariable {
 public:
  SavedVariable() = default;
  // `is_output`: t is an output of the node saving it. It is then kept without its history
  // (which is that node: keeping it would make a cycle) and given the node back when unpacked.
  SavedVariable(const Tensor& t, bool is_output);

  // The saved tensor. `node` is the node unpacking it (the grad_fn of a saved output).
  // Throws Error when released (ERR_BACKWARD_TWICE) or modified in place since saved.
  Tensor unpack(const std::shared_ptr<Node>& node = nullptr) const;
  std::optional<Tensor> unpack_opt(const std::shared_ptr<Node>& node = nullptr) const {
    Tensor t = unpack(node);
    return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
  }
  // Frees the tensor; a later unpack throws.
  void reset_data();

 private:
  Tensor data_;
  bool defined_ = false;
  bool released_ = false;
  bool is_output_ = false;
  bool requires_grad_ = false;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  std::string grad_fn_name_;  // of the saved tensor's history, for the version error
};

// PyTorch's text for a second backward through a freed graph.
extern const char* const kErrBackwardTwice;

}  // namespace opd::autograd
