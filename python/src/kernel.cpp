// Note [Python kernels]
// A Python callable registered as a boxed kernel may be called on any thread: the thread that
// dispatched from Python (which released the GIL around the call), a host program's thread, a
// plugin's worker, the autograd engine. In order it: refuses to nest more than kMaxDepth Python
// kernels on one thread (a kernel that calls its own operator on its own key would otherwise
// recurse through C++ frames past the C stack); takes the GIL (CallbackGil: an error once the
// interpreter is shutting down); converts the schema's arguments to Python (kwarg-only ones as
// keywords); calls the function, below autograd when its key is a backend's (as PyTorch's
// kernels run under AutoDispatchBelowADInplaceOrView); converts what it returns by the schema's
// returns with the rules of opd eval's arguments (bind::convert_argument); and replaces the
// arguments on the stack with the results. The GIL is released again around every call the
// function makes into C++ (every binding releases it), so the rule of Note [The GIL and the
// dispatcher's locks] holds inside kernels too. A Python exception leaves as PythonKernelError,
// with a note naming the operator, key and site added to the exception itself.

#include "kernel.h"

#include <fmt/format.h>
#include <pybind11/stl.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "convert.h"
#include "gil.h"
#include "opd/autograd.h"
#include "opd/bind/binding.h"
#include "opd/function_schema.h"
#include "opd/operator_entry.h"
#include "opd/operator_handle.h"

namespace py = pybind11;

namespace opd::python {

PythonKernelError::~PythonKernelError() = default;

PythonCallable::~PythonCallable() { release_pyobject(fn_); }

std::string python_error_text(const py::error_already_set& e) {
  std::string type = "an exception";
  if (e.type() && PyType_Check(e.type().ptr())) {
    type = reinterpret_cast<PyTypeObject*>(e.type().ptr())->tp_name;
  }
  PyObject* text = e.value() ? PyObject_Str(e.value().ptr()) : nullptr;
  Py_ssize_t size = 0;
  const char* utf8 = text ? PyUnicode_AsUTF8AndSize(text, &size) : nullptr;
  std::string out = utf8 ? type + ": " + std::string(utf8, static_cast<size_t>(size))
                         : type + " (its str() failed)";
  if (!utf8) PyErr_Clear();
  Py_XDECREF(text);
  return out;
}

std::vector<IValue> results_from_python(const FunctionSchema& schema,
                                        const std::function<std::string()>& what,
                                        py::handle result) {
  const auto& returns = schema.returns();
  std::vector<IValue> out;
  if (returns.empty() && !schema.is_varret()) {
    OPD_CHECK_T(TypeError, result.is_none(), "{} returned {}, but the schema declares no result",
                what(), type_name(result));
    return out;
  }
  std::vector<py::handle> items;
  if (returns.size() == 1 && !schema.is_varret()) {
    items.push_back(result);
  } else {
    OPD_CHECK_T(TypeError, PyTuple_Check(result.ptr()) || PyList_Check(result.ptr()),
                "{} returned {}, but the schema declares {} results", what(), type_name(result),
                returns.size());
    for (py::handle h : py::reinterpret_borrow<py::sequence>(result)) items.push_back(h);
    OPD_CHECK_T(TypeError, schema.is_varret() || items.size() == returns.size(),
                "{} returned {} results, but the schema declares {}", what(), items.size(),
                returns.size());
  }
  for (size_t i = 0; i < items.size(); ++i) {
    // None for a Tensor result is an undefined tensor, as torch takes it (convolution_backward's
    // gradients that output_mask did not ask for).
    if (items[i].is_none() && i < returns.size() && returns[i].type()->kind() == TypeKind::Tensor) {
      out.emplace_back(Tensor());
      continue;
    }
    IValue v;
    try {
      v = to_ivalue(items[i]);
    } catch (const IntOverflowError& e) {
      throw Error(fmt::format(
          "{} returned {} in result {}, which does not fit in int64 (the "
          "schema declares {})",
          what(), e.value(), i, i < returns.size() ? returns[i].type()->str() : "a vararg"));
    }
    if (i >= returns.size()) {
      out.push_back(std::move(v));
      continue;
    }
    auto converted = bind::convert_argument(v, *returns[i].type(), returns[i].N());
    OPD_CHECK_T(TypeError, converted.has_value(),
                "{} returned {} for result {}, which the schema declares {}", what(),
                type_name(items[i]), i, returns[i].type()->str());
    out.push_back(std::move(*converted));
  }
  return out;
}

namespace {

constexpr int kMaxDepth = 64;
thread_local int t_depth = 0;

bool is_backend_key(std::optional<DispatchKey> key) {
  if (!key) return false;
  DispatchKeySet keys = runtime_keys_for(*key);
  return keys.has_any(kBackendKeySet) && !keys.has_any(kAutogradKeySet);
}

class PyKernel final : public OperatorKernel {
 public:
  PyKernel(std::shared_ptr<PythonCallable> fn, std::optional<DispatchKey> key, std::string site,
           bool with_keyset, bool fallback)
      : fn_(std::move(fn)),
        key_name_(key ? to_string(*key) : "CompositeImplicitAutograd"),
        below_autograd_(is_backend_key(key)),
        site_(std::move(site)),
        with_keyset_(with_keyset),
        fallback_(fallback) {}

  void operator()(const OperatorHandle& op, DispatchKeySet keys, Stack* stack) {
    // Read once: a def undone while this call runs leaves this schema valid until it returns
    // (OperatorEntry::schema_ is retired, not destroyed), but unpublished for later readers.
    const FunctionSchema* published = op.entry().schema_or_null();
    OPD_CHECK(published != nullptr,
              "{}: the operator's definition was removed while a call was on its way to its "
              "Python kernel for {} (registered at {})",
              op.operator_name().to_string(), key_name_, site_);
    const FunctionSchema& schema = *published;
    // The kernel's name in errors, made only for one.
    auto what = [&] {
      return schema.operator_name().to_string() + ": the Python kernel for " + key_name_ +
             " (registered at " + site_ + ")";
    };
    OPD_CHECK(t_depth < kMaxDepth,
              "{} re-entered itself {} times on one thread: it calls its own operator on the "
              "same key; redispatch below its key instead",
              what(), kMaxDepth);
    struct Depth {
      Depth() { ++t_depth; }
      ~Depth() { --t_depth; }
    } depth;
    std::optional<ExcludeDispatchKeyGuard> below;
    if (below_autograd_)
      below.emplace(kAutogradKeySet | DispatchKeySet(DispatchKey::ADInplaceOrView));

    const size_t n = schema.is_vararg() ? stack->size() : schema.arguments().size();
    OPD_INTERNAL_ASSERT(stack->size() >= n, "{}: {} arguments on a stack of {}", what(), n,
                        stack->size());
    const size_t first = stack->size() - n;
    std::vector<IValue> results;
    {
      CallbackGil gil(what);
      py::object result;
      try {
        // PyObject_Vectorcall's arguments: the positional ones, then the kwarg-only ones, named
        // by `kwnames`. Slot 0 of `argv` is the callee's (PY_VECTORCALL_ARGUMENTS_OFFSET).
        std::vector<py::object> owned;
        owned.reserve(n + 2);
        if (fallback_) {
          owned.push_back(py::module_::import("opdispatch.ops")
                              .attr("_overload_for")(schema.operator_name().to_string()));
        }
        if (with_keyset_) owned.push_back(py::cast(keys));
        auto keyword = [&](size_t i) {
          return i < schema.arguments().size() && schema.arguments()[i].kwarg_only();
        };
        size_t n_keywords = 0;
        for (size_t i = 0; i < n; ++i) {
          if (keyword(i)) {
            ++n_keywords;
          } else {
            owned.push_back(from_ivalue((*stack)[first + i]));
          }
        }
        const size_t n_positional = owned.size();
        py::object kwnames;
        if (n_keywords > 0) {
          py::tuple names(n_keywords);
          for (size_t i = 0, k = 0; i < n; ++i) {
            if (!keyword(i)) continue;
            owned.push_back(from_ivalue((*stack)[first + i]));
            names[k++] = py::str(schema.arguments()[i].name());
          }
          kwnames = std::move(names);
        }
        std::vector<PyObject*> argv(owned.size() + 1, nullptr);
        for (size_t i = 0; i < owned.size(); ++i) argv[i + 1] = owned[i].ptr();
        result = py::reinterpret_steal<py::object>(
            PyObject_Vectorcall(fn_->get(), argv.data() + 1,
                                n_positional | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames.ptr()));
        if (!result) throw py::error_already_set();
      } catch (py::error_already_set& e) {
        std::string message = what() + " raised " + python_error_text(e);
        try {
          if (py::hasattr(e.value(), "add_note")) {
            e.value().attr("add_note")("opdispatch: raised in the Python kernel of " +
                                       schema.operator_name().to_string() + " for " + key_name_ +
                                       ", registered at " + site_);
          }
        } catch (py::error_already_set&) {
          // No note (at the recursion limit, say): the exception itself still goes up.
        }
        throw PythonKernelError(std::move(message), std::move(e));
      }
      results = results_from_python(schema, what, result);
    }
    stack->erase(stack->begin() + static_cast<std::ptrdiff_t>(first), stack->end());
    for (IValue& r : results) stack->push_back(std::move(r));
  }

 private:
  std::shared_ptr<PythonCallable> fn_;  // shared with the Library that registered this kernel
  std::string key_name_;
  bool below_autograd_;
  std::string site_;
  bool with_keyset_;
  bool fallback_;
};

}  // namespace

PythonKernel make_python_kernel(py::object fn, std::optional<DispatchKey> key, std::string site,
                                bool with_keyset, bool fallback) {
  auto callable = std::make_shared<PythonCallable>(std::move(fn));
  return PythonKernel{KernelFunction::make_from_boxed_functor(std::make_unique<PyKernel>(
                          callable, key, std::move(site), with_keyset, fallback)),
                      callable};
}

}  // namespace opd::python
