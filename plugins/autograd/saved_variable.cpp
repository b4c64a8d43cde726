#include "autograd/saved_variable.h"

#include <fmt/format.h>

#include "autograd/autograd_meta.h"

namespace opd::autograd {

const char* const kErrBackwardTwice =
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward.";

namespace {

// PyTorch's tensor type names ("torch.FloatTensor", "torch.cuda.DoubleTensor").
std::string type_name(const Tensor& t) {
  std::string dtype;
  switch (t.scalar_type()) {
    case ScalarType::Float32:
      dtype = "Float";
      break;
    case ScalarType::Float64:
      dtype = "Double";
      break;
    case ScalarType::Float16:
      dtype = "Half";
      break;
    case ScalarType::BFloat16:
      dtype = "BFloat16";
      break;
    default:
      dtype = to_string(t.scalar_type());
      break;
  }
  std::string device = t.is_cpu() ? "" : t.device().str() + ".";
  if (auto colon = device.find(':'); colon != std::string::npos)
    device = device.substr(0, colon) + ".";
  return fmt::format("torch.{}{}Tensor", device, dtype);
}

// An alias of t without autograd state: same storage, geometry and version counter.
Tensor alias_without_history(const Tensor& t) {
  return make_view(t, t.sizes(), t.strides(), t.storage_offset());
}

}  // namespace

SavedVariable::SavedVariable(const Tensor& t, bool is_output) {
  if (!t.defined()) return;
  defined_ = true;
  is_output_ = is_output;
  saved_version_ = t.version();
  requires_grad_ = autograd::requires_grad(t);
  if (const AutogradMeta* m = get_meta(t); m && m->grad_fn) {
    output_nr_ = m->output_nr;
    grad_fn_name_ = m->grad_fn->name();
  }
  data_ = is_output ? alias_without_history(t) : t;
}

Tensor SavedVariable::unpack(const std::shared_ptr<Node>& node) const {
  if (!defined_) return Tensor();
  OPD_CHECK(!released_, "{}", kErrBackwardTwice);
  const uint32_t current = data_.version();
  if (current != saved_version_) {
    std::string which = grad_fn_name_.empty()
                            ? std::string()
                            : fmt::format(", which is output {} of {}", output_nr_, grad_fn_name_);
    std::string sizes = fmt::format("[{}]", fmt::join(data_.sizes(), ", "));
    throw Error(fmt::format(
        "one of the variables needed for gradient computation has been modified by an inplace "
        "operation: [{} {}]{}, is at version {}; expected version {} instead. Hint: the "
        "operation that failed to compute its gradient is the one that saved this tensor; it was "
        "changed there or anywhere later.",
        type_name(data_), sizes, which, current, saved_version_));
  }
  if (!is_output_ || !requires_grad_ || !node) return data_;
  // A saved output comes back with its history, so that a formula using it is differentiable.
  Tensor t = alias_without_history(data_);
  AutogradMeta& m = materialize_meta(t);
  m.grad_fn = node;
  m.output_nr = output_nr_;
  return t;
}

void SavedVariable::reset_data() {
  data_ = Tensor();
  released_ = defined_;
}

}  // namespace opd::autograd
