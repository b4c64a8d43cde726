// A vendor's device, built only against the installed package (issue 33 §4; CMakeLists.txt here)
// and, in the tree, as the fixture the CPU fallback's tests load (tests/plugins/CMakeLists.txt):
// the vendor backend "acme", which claims a free vendor slot at load (PrivateUse1 when it is the
// first; opd/privateuse.h, Note [Vendor slots]). Built twice, it is two devices: ACME_PLUGIN
// names the plugin and its operators' namespace, ACME_NAME the device ("acme" unless given; the
// second build is plugin acme_device2, device "acmetwo"). Its memory is host memory from its own
// allocator (std::malloc, counted: acme_device::live_blocks() and acme_device::allocations() read
// the counters), distinct from the CPU's, so a tensor on it is only reachable through its
// kernels. It has the kernels a device needs to exist (empty.memory_format, empty_strided, copy_
// to and from the CPU, resize_), native operators (add and mul, and those an MLP's training step
// runs most: sub, div, mm, addmm, sum.dim_IntList, relu, threshold_backward, fill_, the
// log_softmax and nll_loss pairs; native_batch_norm, updating the running statistics in place),
// and opd::cpu_fallback (Note [CPU fallback]) for the rest.
//   acme_device::alias_of(Tensor(a) self) -> Tensor(a)   a view operator, CPU and Meta only
//   acme_device::no_cpu(Tensor self) -> Tensor           an operator without any kernel
//   acme_device::native_calls() -> int                   calls of the native operators so far
//   acme_device::current_device() -> int, set_device(int index) -> ()
//                                                        the thread's current acme device, through
//                                                        the device guard (two devices)

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <tuple>
#include <vector>

#include "opd/cpu_fallback.h"
#include "opd/device_guard.h"
#include "opd/ops.h"
#include "opd/plugin.h"
#include "opd/privateuse.h"
#include "opd/tensor.h"

#ifndef ACME_PLUGIN
#define ACME_PLUGIN acme_device
#endif
#ifndef ACME_NAME
#define ACME_NAME "acme"
#endif
// The macros below take their first argument as written (#ns, ##): these expand ACME_PLUGIN.
#define ACME_ENTRY(plugin, version) OPD_PLUGIN(plugin, version)
#define ACME_LIBRARY(ns, m) OPD_LIBRARY(ns, m)
#define ACME_LIBRARY_IMPL(ns, key, m) OPD_LIBRARY_IMPL(ns, key, m)

namespace {

using opd::Device;
using opd::DeviceType;
using opd::IntArrayRef;
using opd::ScalarType;
using opd::Tensor;

// The vendor slot this device claimed at load (PrivateUse1..3).
std::atomic<DeviceType> slot{DeviceType::PrivateUse1};
bool on_this_device(const Device& d) { return d.type == slot.load(); }

std::atomic<int64_t> live_blocks{0};
std::atomic<int64_t> allocations{0};
std::atomic<int64_t> native_calls{0};

void release(void* data, void*) {
  std::free(data);
  live_blocks.fetch_sub(1);
}

size_t nbytes_for(IntArrayRef size, IntArrayRef stride, ScalarType dtype) {
  int64_t last = 0;
  for (size_t i = 0; i < size.size(); ++i) {
    OPD_CHECK(size[i] >= 0, "Trying to create tensor with negative dimension {}", size[i]);
    if (size[i] == 0) return 0;
    last += (size[i] - 1) * stride[i];
  }
  return static_cast<size_t>(last + 1) * opd::element_size(dtype);
}

opd::Storage allocate(size_t nbytes, Device device) {
  void* data = std::malloc(std::max<size_t>(nbytes, 1));
  OPD_CHECK(data != nullptr, "{}: out of memory allocating {} bytes", ACME_NAME, nbytes);
  live_blocks.fetch_add(1);
  allocations.fetch_add(1);
  return opd::Storage::create(data, nbytes, device, &release, nullptr,
                              opd::this_plugin_reference());
}

// Two devices, acme:0 and acme:1 (host memory both), and a current one per thread: the device
// guard (opd/device_guard.h) that resolves "acme" without an index.
constexpr int8_t kDevices = 2;
thread_local int8_t thread_device = 0;

void check_device_index(int64_t index) {
  OPD_CHECK_T(opd::IndexError, index >= 0 && index < kDevices,
              "{}: device index {} is out of range: there are {} {} devices", ACME_NAME, index,
              static_cast<int>(kDevices), ACME_NAME);
}

struct AcmeGuard final : opd::DeviceGuardImpl {
  int8_t current_device() const override { return thread_device; }
  void set_device(int8_t index) const override {
    check_device_index(index);
    thread_device = index;
  }
  int8_t device_count() const noexcept override { return kDevices; }
};

Device acme_device(std::optional<Device> device) {
  const Device d = opd::ensure_has_index(device.value_or(Device(slot.load())));
  check_device_index(d.index);
  return d;
}

Tensor empty_acme(IntArrayRef size, IntArrayRef stride, ScalarType dtype, Device device) {
  opd::Storage storage = allocate(nbytes_for(size, stride, dtype), device);
  return opd::make_tensor(std::move(storage), size, stride, 0, dtype, device);
}

// The same memory seen as a CPU tensor, for the CPU plugin's kernels to compute on (this device
// is host memory). A CPU tensor is itself.
Tensor host_alias(const Tensor& t) {
  if (!t.defined() || t.is_cpu()) return t;
  OPD_CHECK(on_this_device(t.device()), "{}: expected an {} or CPU tensor, got {}", ACME_NAME,
            ACME_NAME, t.device());
  return opd::from_blob(t.data_ptr(), t.sizes(), t.strides(), t.scalar_type());
}

Tensor empty_memory_format(IntArrayRef size, std::optional<ScalarType> dtype,
                           std::optional<opd::Layout>, std::optional<Device> device,
                           std::optional<bool>, std::optional<opd::MemoryFormat> memory_format) {
  OPD_CHECK(!memory_format || *memory_format == opd::MemoryFormat::Contiguous ||
                *memory_format == opd::MemoryFormat::Preserve,
            "{}: empty supports contiguous tensors only", ACME_NAME);
  return empty_acme(size, opd::contiguous_strides(size), dtype.value_or(ScalarType::Float32),
                    acme_device(device));
}

Tensor empty_strided(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype,
                     std::optional<opd::Layout>, std::optional<Device> device,
                     std::optional<bool>) {
  OPD_CHECK(size.size() == stride.size(), "mismatch in length of strides and shape");
  return empty_acme(size, stride, dtype.value_or(ScalarType::Float32), acme_device(device));
}

// Either side may be on the CPU: the CPU plugin copies between the host views (broadcasting
// and converting as copy_ does).
Tensor& copy_(Tensor& self, const Tensor& src, bool non_blocking) {
  Tensor dst = host_alias(self);
  dst.copy_(host_alias(src), non_blocking);
  if (!dst.is_same(self)) self.bump_version();
  return self;
}

// Contiguous geometry for `size`; a new block when the storage is too small.
Tensor& resize_(Tensor& self, IntArrayRef size, std::optional<opd::MemoryFormat>) {
  std::vector<int64_t> strides = opd::contiguous_strides(size);
  const size_t item = opd::element_size(self.scalar_type());
  const size_t needed =
      nbytes_for(size, strides, self.scalar_type()) + self.storage_offset() * item;
  opd::TensorImpl& impl = *self.unsafe_get_impl();
  if (needed <= self.storage().nbytes()) {
    impl.set_sizes_and_strides(size, strides, self.storage_offset());
    return self;
  }
  opd::Storage grown = allocate(needed, self.device());
  std::memcpy(grown.data(), self.storage().data(), self.storage().nbytes());
  impl.set_storage_and_geometry(std::move(grown), size, strides, self.storage_offset());
  return self;
}

// The native operators: the CPU plugin computes on the host views, the result moves into a
// block of this device.
Tensor to_acme(const Tensor& cpu, Device device) {
  Tensor out = empty_acme(cpu.sizes(), cpu.strides(), cpu.scalar_type(), device);
  if (cpu.numel() > 0) {
    std::memcpy(out.data_ptr(), cpu.data_ptr(),
                nbytes_for(cpu.sizes(), cpu.strides(), cpu.scalar_type()));
  }
  return out;
}

// The device of a call's tensors, checked as PyTorch's TensorIterator checks them: all on one
// device, except CPU scalars (0-dim; a wrapped number is one). The dispatcher came here because
// one is on acme.
template <typename... Ts>
Device device_of(const Ts&... tensors) {
  std::optional<Device> found;
  auto visit = [&](const Tensor& t) {
    if (!t.defined() || (t.is_cpu() && t.dim() == 0)) return;
    if (!found) {
      found = t.device();
      return;
    }
    OPD_CHECK(t.device() == *found,
              "Expected all tensors to be on the same device, but found at least two devices, {} "
              "and {}!",
              *found, t.device());
  };
  (visit(tensors), ...);
  OPD_CHECK(found && on_this_device(*found), "{}: no {} tensor among the arguments", ACME_NAME,
            ACME_NAME);
  return *found;
}

Tensor add_Tensor(const Tensor& self, const Tensor& other, const opd::Scalar& alpha) {
  native_calls.fetch_add(1);
  return to_acme(opd::add(host_alias(self), host_alias(other), alpha), device_of(self, other));
}

Tensor mul_Tensor(const Tensor& self, const Tensor& other) {
  native_calls.fetch_add(1);
  return to_acme(opd::mul(host_alias(self), host_alias(other)), device_of(self, other));
}

Tensor sub_Tensor(const Tensor& self, const Tensor& other, const opd::Scalar& alpha) {
  native_calls.fetch_add(1);
  return to_acme(opd::sub(host_alias(self), host_alias(other), alpha), device_of(self, other));
}

Tensor div_Tensor(const Tensor& self, const Tensor& other) {
  native_calls.fetch_add(1);
  return to_acme(opd::div(host_alias(self), host_alias(other)), device_of(self, other));
}

Tensor mm(const Tensor& self, const Tensor& mat2) {
  native_calls.fetch_add(1);
  return to_acme(opd::mm(host_alias(self), host_alias(mat2)), device_of(self, mat2));
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const opd::Scalar& beta,
             const opd::Scalar& alpha) {
  native_calls.fetch_add(1);
  return to_acme(opd::addmm(host_alias(self), host_alias(mat1), host_alias(mat2), beta, alpha),
                 device_of(self, mat1, mat2));
}

Tensor sum_dim_IntList(const Tensor& self, opd::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<ScalarType> dtype) {
  native_calls.fetch_add(1);
  return to_acme(opd::sum(host_alias(self), dim, keepdim, dtype), self.device());
}

Tensor relu(const Tensor& self) {
  native_calls.fetch_add(1);
  return to_acme(opd::relu(host_alias(self)), self.device());
}

Tensor threshold_backward(const Tensor& grad_output, const Tensor& self,
                          const opd::Scalar& threshold) {
  native_calls.fetch_add(1);
  return to_acme(opd::threshold_backward(host_alias(grad_output), host_alias(self), threshold),
                 device_of(grad_output, self));
}

// In place on the device's memory: its host view is the same bytes.
Tensor& fill_Scalar(Tensor& self, const opd::Scalar& value) {
  native_calls.fetch_add(1);
  host_alias(self).fill_(value);
  self.bump_version();
  return self;
}

Tensor log_softmax(const Tensor& self, int64_t dim, bool half_to_float) {
  native_calls.fetch_add(1);
  return to_acme(opd::_log_softmax(host_alias(self), dim, half_to_float), self.device());
}

Tensor log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim,
                                 ScalarType input_dtype) {
  native_calls.fetch_add(1);
  return to_acme(opd::_log_softmax_backward_data(host_alias(grad_output), host_alias(output), dim,
                                                 input_dtype),
                 device_of(grad_output, output));
}

std::optional<Tensor> host_alias(const std::optional<Tensor>& t) {
  return t ? std::optional<Tensor>(host_alias(*t)) : std::nullopt;
}

std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction,
                                            int64_t ignore_index) {
  native_calls.fetch_add(1);
  auto [output, total_weight] = opd::nll_loss_forward(host_alias(self), host_alias(target),
                                                      host_alias(weight), reduction, ignore_index);
  const Device device = device_of(self, target);
  return {to_acme(output, device), to_acme(total_weight, device)};
}

Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                         const std::optional<Tensor>& weight, int64_t reduction,
                         int64_t ignore_index, const Tensor& total_weight) {
  native_calls.fetch_add(1);
  return to_acme(
      opd::nll_loss_backward(host_alias(grad_output), host_alias(self), host_alias(target),
                             host_alias(weight), reduction, ignore_index, host_alias(total_weight)),
      device_of(grad_output, self, target));
}

// The CPU kernel updates running_mean and running_var in place on their host views, which are
// this device's memory: no copy and no write-back (the CPU fallback writes them back, Note
// [Unannotated writes], since PyTorch 1.13's schema does not mark them as written).
std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias,
                                                     const std::optional<Tensor>& running_mean,
                                                     const std::optional<Tensor>& running_var,
                                                     bool training, double momentum, double eps) {
  native_calls.fetch_add(1);
  auto [output, save_mean, save_invstd] = opd::native_batch_norm(
      host_alias(input), host_alias(weight), host_alias(bias), host_alias(running_mean),
      host_alias(running_var), training, momentum, eps);
  const Device device = device_of(input, weight.value_or(input), running_mean.value_or(input));
  return {to_acme(output, device), to_acme(save_mean, device), to_acme(save_invstd, device)};
}

Tensor alias_of(const Tensor& self) {
  return opd::make_view(self, self.sizes(), self.strides(), self.storage_offset());
}

}  // namespace

ACME_ENTRY(ACME_PLUGIN, "0.1.0") { slot = opd::register_privateuse_backend(ACME_NAME); }

ACME_LIBRARY(ACME_PLUGIN, m) {
  m.def("live_blocks() -> int");
  m.def("allocations() -> int");
  m.def("native_calls() -> int");
  m.def("alias_of(Tensor(a) self) -> Tensor(a)");
  m.def("no_cpu(Tensor self) -> Tensor");
  m.def("current_device() -> int");
  m.def("set_device(int index) -> ()");
}

ACME_LIBRARY_IMPL(ACME_PLUGIN, CompositeExplicitAutograd, m) {
  m.impl("live_blocks", [] { return live_blocks.load(); });
  m.impl("allocations", [] { return allocations.load(); });
  m.impl("native_calls", [] { return native_calls.load(); });
  // Through the registered guard, as a user's torch.acme.current_device() would.
  m.impl("current_device", [] {
    return static_cast<int64_t>(opd::device_guard_impl(slot.load())->current_device());
  });
  m.impl("set_device", [](int64_t index) {
    check_device_index(index);  // before narrowing: 257 is no device, not device 1
    opd::device_guard_impl(slot.load())->set_device(static_cast<int8_t>(index));
  });
}

ACME_LIBRARY_IMPL(ACME_PLUGIN, CPU, m) { m.impl("alias_of", &alias_of); }

ACME_LIBRARY_IMPL(ACME_PLUGIN, Meta, m) { m.impl("alias_of", &alias_of); }

// On the slot the plugin body claimed, whichever it is.
OPD_LIBRARY_IMPL_PRIVATEUSE(aten, m) {
  m.impl("empty.memory_format", &empty_memory_format);
  m.impl("empty_strided", &empty_strided);
  m.impl("copy_", &copy_);
  m.impl("resize_", &resize_);
  m.impl("add.Tensor", &add_Tensor);
  m.impl("mul.Tensor", &mul_Tensor);
  m.impl("sub.Tensor", &sub_Tensor);
  m.impl("div.Tensor", &div_Tensor);
  m.impl("mm", &mm);
  m.impl("addmm", &addmm);
  m.impl("sum.dim_IntList", &sum_dim_IntList);
  m.impl("relu", &relu);
  m.impl("threshold_backward", &threshold_backward);
  m.impl("fill_.Scalar", &fill_Scalar);
  m.impl("_log_softmax", &log_softmax);
  m.impl("_log_softmax_backward_data", &log_softmax_backward_data);
  m.impl("nll_loss_forward", &nll_loss_forward);
  m.impl("nll_loss_backward", &nll_loss_backward);
  m.impl("native_batch_norm", &native_batch_norm);
}

OPD_LIBRARY_IMPL_PRIVATEUSE(_, m) {
  m.fallback(&opd::cpu_fallback);
  m.device_guard(opd::make_device_guard<AcmeGuard>());
}
