#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "opd/warning.h"

namespace opd::test_util {

// Collects the warnings opd::warn gives while it lives (PyTorch's TORCH_WARN texts), instead
// of logging them; the handler before it comes back at its end. One at a time, on the test's
// thread: the handler is the process's.
class WarningCapture {
 public:
  WarningCapture() : previous_(set_warning_handler(&WarningCapture::collect)) { current_ = this; }
  ~WarningCapture() {
    set_warning_handler(previous_);
    current_ = nullptr;
  }
  WarningCapture(const WarningCapture&) = delete;
  WarningCapture& operator=(const WarningCapture&) = delete;

  const std::vector<std::string>& messages() const { return messages_; }

 private:
  static void collect(std::string_view message) { current_->messages_.emplace_back(message); }

  static inline WarningCapture* current_ = nullptr;
  WarningHandler previous_;
  std::vector<std::string> messages_;
};

// PyTorch 1.13's warning for an out= tensor with elements resized (resize_output).
inline std::string resized_out_warning(std::string_view had, std::string_view wanted) {
  return "An output with one or more elements was resized since it had shape " + std::string(had) +
         ", which does not match the required output shape " + std::string(wanted) +
         ". This behavior is deprecated, and in a future PyTorch release outputs will not be "
         "resized unless they have zero elements. You can explicitly reuse an out tensor t by "
         "resizing it, inplace, to zero elements with t.resize_(0).";
}

}  // namespace opd::test_util
