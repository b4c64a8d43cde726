// opd::cpu_fallback: Note [CPU fallback] in opd/cpu_fallback.h.

#include "opd/cpu_fallback.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/function_schema.h"
#include "opd/operator_entry.h"
#include "opd/ops.h"
#include "opd/tensor.h"
#include "opd/thread_annotations.h"
#include "opd/warning.h"

namespace opd {
namespace {

const Device kCpu(DeviceType::CPU);

// Whether the call writes argument `a`: Tensor(a!), or a list whose elements are Tensor(a!).
bool is_written(const Argument& a) {
  const AliasInfo* info = a.alias_info();
  if (info == nullptr) return false;
  if (info->is_write) return true;
  return std::any_of(info->contained.begin(), info->contained.end(),
                     [](const AliasInfo& c) { return c.is_write; });
}

// Note [Unannotated writes]
// PyTorch 1.13's native_batch_norm (and its out= overload) updates running_mean and running_var
// in place when training, but its schema does not mark them (a!); 2.0 fixed that with
// _native_batch_norm_legit. PyTorch's own CPU fallback loses those updates (a model's running
// statistics stay at their initial values); this one writes them back as it writes back the
// arguments the schema marks. Found by operator and argument name: the 1.13 schemas are kept.
bool written_without_annotation(const FunctionSchema& schema, const Argument& a) {
  return schema.name() == "aten::native_batch_norm" &&
         (a.name() == "running_mean" || a.name() == "running_var");
}

// The alias sets of an annotation: a list's are its elements' ("Tensor(a!)[]").
std::vector<std::string> alias_sets(const AliasInfo& info) {
  std::vector<std::string> sets = info.before_set;
  if (sets.empty() && !info.contained.empty()) sets = info.contained.front().before_set;
  std::sort(sets.begin(), sets.end());
  return sets;
}

Tensor to_cpu(const Tensor& t) {
  if (!t.defined() || t.is_cpu()) return t;
  return t.to(kCpu, t.scalar_type());
}

// Writes `cpu`, the CPU copy the kernel wrote, back into `original` (PyTorch's
// _copy_from_and_resize): resized first if the kernel resized its copy.
void write_back(const Tensor& cpu, const Tensor& original) {
  if (!original.defined() || cpu.is_same(original)) return;
  if (cpu.sizes() != original.sizes()) original.resize_(cpu.sizes());
  original.copy_(cpu);
}

// "The operator 'aten::X' ..." names the backend as devices print it ("acme", "cuda").
std::string backend_name(const std::optional<Device>& device) {
  return device ? device_type_name(device->type) : "<none>";
}

// The (operator, backend) pairs warned about, for the process (as TORCH_WARN_ONCE's flag).
struct Warned {
  Mutex mutex;
  std::set<std::pair<std::string, std::string>> pairs OPD_GUARDED_BY(mutex);
};

void warn_once(const OperatorHandle& op, const std::optional<Device>& device) {
  static Warned warned;
  std::string name = op.operator_name().to_string();
  std::string backend = backend_name(device);
  {
    MutexLock lock(warned.mutex);
    if (!warned.pairs.emplace(name, backend).second) return;
  }
  warn(fmt::format(
      "The operator '{}' is not currently supported on the {} backend and will fall back to run "
      "on the CPU. This may have performance implications.",
      name, backend));
}

// A tensor argument (or list element) moved to the CPU, remembered for the write-back.
struct Moved {
  size_t arg;
  Tensor original;
  Tensor cpu;
};

}  // namespace

void cpu_fallback_with(const OperatorHandle& op, Stack* stack, const CpuFallbackOptions& options) {
  const FunctionSchema& schema = op.schema();
  const auto& args = schema.arguments();
  const size_t n = args.size();
  OPD_INTERNAL_ASSERT(stack->size() >= n, "cpu_fallback: {} arguments on a stack of {}", n,
                      stack->size());
  const size_t begin = stack->size() - n;
  // The caller's arguments, for the results that are written arguments (a handle each).
  const std::vector<IValue> originals(stack->begin() + static_cast<std::ptrdiff_t>(begin),
                                      stack->end());

  // Step 1: tensors to the CPU; the target device is the first non-CPU tensor's, else a
  // Device argument's.
  std::optional<Device> target;
  std::optional<Device> device_arg;
  std::vector<Moved> moved;
  auto move = [&](size_t i, const Tensor& t) -> Tensor {
    if (!t.defined() || t.is_cpu()) return t;
    if (!target) target = t.device();
    // The device's own kernels refuse tensors of two of its devices; so does their fallback
    // (CPU tensors may join, as index tensors do).
    OPD_CHECK(t.device() == *target,
              "Expected all tensors to be on the same device, but found at least two devices, {} "
              "and {}!",
              *target, t.device());
    Tensor cpu = to_cpu(t);
    moved.push_back({i, t, cpu});
    return cpu;
  };
  for (size_t i = 0; i < n; ++i) {
    IValue& v = (*stack)[begin + i];
    if (v.is_tensor()) {
      v = IValue(move(i, v.to_tensor()));
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> cpu;
      for (const Tensor& t : v.to_tensor_list()) cpu.push_back(move(i, t));
      v = IValue(std::move(cpu));
    } else if (v.is_optional_tensor_list()) {
      std::vector<std::optional<Tensor>> cpu;
      for (const std::optional<Tensor>& t : v.to_optional_tensor_list()) {
        cpu.push_back(t ? std::optional<Tensor>(move(i, *t)) : std::nullopt);
      }
      v = IValue(std::move(cpu));
    } else if (v.is_device()) {
      if (!device_arg && !v.to_device().is_cpu()) device_arg = v.to_device();
      v = IValue(kCpu);
    }
  }
  if (!target) target = device_arg;

  // Step 2: the CPU kernel, through the dispatcher.
  try {
    op.redispatch_boxed(DispatchKeySet(DispatchKey::CPU), stack);
  } catch (const NotImplementedError&) {
    // Cold: was it this operator that has no CPU kernel, or something the kernel called?
    const KernelFunction& cpu = op.entry().lookup(DispatchKeySet(DispatchKey::CPU));
    if (std::string_view(op.entry().origin_of(DispatchKey::CPU, cpu).source) != "missing") throw;
    throw NotImplementedError(fmt::format(
        "The operator '{}' is not currently supported on the {} backend, and the CPU fallback "
        "cannot run it: it has no CPU kernel either. '{}' is only available for these backends: "
        "[{}].",
        op.operator_name().to_string(), backend_name(target), op.operator_name().to_string(),
        op.entry().available_keys()));
  }

  // After the kernel: an operator the CPU cannot run either, or a call it refuses, did not
  // fall back.
  if (options.warn) warn_once(op, target);

  // Step 3: written arguments get the CPU kernel's values.
  for (const Moved& m : moved) {
    if (is_written(args[m.arg]) || written_without_annotation(schema, args[m.arg])) {
      write_back(m.cpu, m.original);
    }
  }

  // Step 4: results.
  const auto& returns = schema.returns();
  OPD_INTERNAL_ASSERT(stack->size() >= returns.size(), "cpu_fallback: {} results on a stack of {}",
                      returns.size(), stack->size());
  const size_t rbegin = stack->size() - returns.size();
  for (size_t r = 0; r < returns.size(); ++r) {
    IValue& v = (*stack)[rbegin + r];
    const AliasInfo* info = returns[r].alias_info();
    if (is_written(returns[r])) {
      // The original argument of the same alias set: the object the caller passed.
      bool found = false;
      for (size_t i = 0; i < n && !found; ++i) {
        const AliasInfo* a = args[i].alias_info();
        if (a == nullptr || !is_written(args[i]) || alias_sets(*a) != alias_sets(*info)) continue;
        v = originals[i];
        found = true;
      }
      OPD_CHECK(found,
                "The operator {} appears to have invalid alias information. Found a return tensor "
                "argument with a mismatched mutable alias: {}",
                op.operator_name().to_string(), returns[r].to_string());
      continue;
    }
    if (info != nullptr) {
      std::string message = fmt::format(
          "The operator {} appears to be a view operator, but it has no implementation for the "
          "backend \"{}\". View operators don't support falling back to run on the CPU, since "
          "the tensor's storage cannot be shared across devices.",
          op.operator_name().to_string(), target ? target->str() : "<none>");
      OPD_CHECK(!options.error_on_views, "{}", message);
      warn(message);
    }
    if (!target) continue;
    if (v.is_tensor() && v.to_tensor().defined()) {
      v = IValue(v.to_tensor().to(*target, v.to_tensor().scalar_type()));
    } else if (v.is_tensor_list()) {
      std::vector<Tensor> out;
      for (const Tensor& t : v.to_tensor_list()) {
        out.push_back(t.defined() ? t.to(*target, t.scalar_type()) : t);
      }
      v = IValue(std::move(out));
    }
  }
}

void cpu_fallback(const OperatorHandle& op, Stack* stack) {
  cpu_fallback_with(op, stack, CpuFallbackOptions{});
}

void cpu_fallback_quiet(const OperatorHandle& op, Stack* stack) {
  cpu_fallback_with(op, stack, CpuFallbackOptions{.warn = false});
}

}  // namespace opd
