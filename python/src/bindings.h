#pragma once

// The parts of opdispatch._C (module.cpp calls each bind_*), and what they share.

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "opd/alias_analysis.h"
#include "opd/library.h"
#include "opd/tensor.h"

namespace opd::python {

// opdispatch.plugins: the plugin manager (plugins.cpp).
void bind_plugins(pybind11::module_& m);
// torch._C's _dispatch_* introspection functions, with torch's names (introspection.cpp).
void bind_introspection(pybind11::module_& m);
// dtype, device, layout, memory_format (types.cpp).
void bind_types(pybind11::module_& m);
// opdispatch.Generator and default_generator (generator.cpp).
void bind_generator(pybind11::module_& m);
// opdispatch.Tensor (tensor.cpp), its indexing (indexing.cpp).
void bind_tensor(pybind11::module_& m);
void bind_indexing(pybind11::class_<Tensor>& cls);
// x[index]: the Tensor type's mp_subscript slot (Note [Single indices] in indexing.cpp).
PyObject* tensor_subscript(PyObject* self, PyObject* index) noexcept;
// from_numpy, frombuffer, Tensor.numpy() (numpy.cpp).
void bind_numpy(pybind11::module_& m);
// DLPack 0.6 both ways (dlpack.cpp).
void bind_dlpack(pybind11::module_& m);
// opdispatch.ops' packets and overloads, FunctionSchema, DispatchKeySet (ops.cpp).
void bind_ops(pybind11::module_& m);
// opdispatch.library's Library with Python kernels (library.cpp, kernel.cpp).
void bind_library(pybind11::module_& m);
// Grad mode, autograd.grad, the TLS dispatch key functions (autograd.cpp).
void bind_autograd(pybind11::module_& m);
// opdispatch.autograd.Function's recording and backward (autograd_function.cpp).
void bind_autograd_function(pybind11::module_& m);
// opd::warn as Python's UserWarning (warnings.cpp): installed at import, removed at shutdown.
void install_warning_handler();
void remove_warning_handler();
// opdispatch.trace (trace.cpp).
void bind_trace(pybind11::module_& m);
// opdispatch.fx's graph and capture mode (fx.cpp).
void bind_fx(pybind11::module_& m);
// TorchDispatchMode's stack and tensor subclasses' __torch_dispatch__ (python_dispatch.cpp,
// python_dispatch_subclass.cpp).
void bind_python_dispatch(pybind11::module_& m);
// Helpers for the Python tests that need C++ threads (testing.cpp).
void bind_testing(pybind11::module_& m);
// torch._C._dispatch_library's testing handle (dispatch_library.cpp), and the alias analysis
// kind by name ("" is FROM_SCHEMA), or torch's RuntimeError "could not parse X".
void bind_dispatch_library(pybind11::module_& m);
AliasAnalysisKind parse_alias_analysis_as_torch(const std::string& alias);
// A dispatch key by name, or torch's RuntimeError "could not parse dispatch key: X"
// (introspection.cpp).
DispatchKey parse_dispatch_key_as_torch(const std::string& key);
// "DEF", "FRAGMENT", "IMPL" (torch's names), or nullopt: each handle raises its own error, as
// torch.library's Library and torch._C._dispatch_library do (library.cpp).
std::optional<Library::Kind> library_kind(const std::string& kind);
// torch.library's TypeError for a kernel that cannot be called, at registration rather than at
// its first call (library.cpp).
void check_callable(pybind11::handle fn);

// The address of `t`'s element 0 in `storage`, a copy of t's storage that an export holds:
// taken from that copy, so that the address is in the memory the export keeps alive. Null when
// the storage has no memory.
inline void* exported_data(const Storage& storage, const Tensor& t) {
  auto* base = static_cast<char*>(storage.data());
  return base ? base + t.storage_offset() * static_cast<int64_t>(t.element_size()) : nullptr;
}

// A Python buffer (numpy array, bytes, array.array) as a CPU tensor over the same memory
// (numpy.cpp); warns as torch when the buffer is read-only and `warn_readonly`.
Tensor tensor_from_buffer(pybind11::handle obj, bool warn_readonly);

}  // namespace opd::python
