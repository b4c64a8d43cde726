// opdispatch.ops' C++ half: _C._OpPacket (every overload of a name) and _C._OpOverload (one),
// each caching its operator handles until an operator gains or loses its schema, and
// _C.FunctionSchema. A packet binds its arguments as opd eval does (one implementation:
// bind::bind_to_overloads, PyTorch's overload order and error texts), then calls boxed with the
// GIL released. Results that alias a written argument (add_'s self, add.out's out) are that
// argument's Python object; several named returns are a return_types named tuple.

#include "ops.h"

#include <pybind11/stl.h>
#include <structmember.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>

#include "bindings.h"
#include "convert.h"
#include "default_device.h"
#include "opd/bind/binding.h"
#include "opd/function_schema.h"
#include "slots.h"

namespace py = pybind11;

// Note [Operator handles from Python]
// A cached OperatorHandle points into the dispatcher's entry for the operator, which another
// thread's deregistration may erase and, once no dispatcher call is in flight, free. So every
// use of one happens inside a detail::CallScope entered before the cache is validated against
// the schema generation: an entry erased after that check is retired, and not freed until the
// scope ends (Note [Kernel reclamation] in core/src/dispatch/dispatcher.cpp). The caches are the
// state of Python objects: read and written with the GIL held only (the lookups themselves run
// without it, on a cache miss), and each call works on its own copy of them. The scope lasts until
// the results are converted, the GIL taken back included: a scope only delays reclamation, it never
// blocks anyone.

namespace opd::python {
namespace {

// Bumped whenever an operator gains or loses its schema. Listeners run under the registration
// mutex: this one must never touch Python.
std::atomic<uint64_t> g_schema_generation{0};

class SchemaGeneration final : public OpRegistrationListener {
 public:
  void on_operator_registered(const OperatorHandle&) override { g_schema_generation.fetch_add(1); }
  void on_operator_deregistered(const OperatorHandle&) override {
    g_schema_generation.fetch_add(1);
  }
};

uint64_t schema_generation() { return g_schema_generation.load(std::memory_order_acquire); }

// The Python object passed for schema argument `index`, if it was passed.
py::object argument_object(const FunctionSchema& schema, size_t index, const PythonArgs& args) {
  if (index < static_cast<size_t>(args.size)) {
    return py::reinterpret_borrow<py::object>(args.positional[index]);
  }
  if (PyObject* v = args.keyword(schema.arguments()[index].name())) {
    return py::reinterpret_borrow<py::object>(v);
  }
  if (schema.arguments()[index].is_out()) {
    // One of several out= tensors, given as a tuple (Note [Several out= tensors]).
    PyObject* out = args.keyword("out");
    if (out != nullptr && (PyTuple_Check(out) || PyList_Check(out))) {
      const auto& arguments = schema.arguments();
      const auto k = std::count_if(arguments.begin(), arguments.begin() + index,
                                   [](const Argument& a) { return a.is_out(); });
      if (k < PySequence_Fast_GET_SIZE(out)) {
        return py::reinterpret_borrow<py::object>(PySequence_Fast_ITEMS(out)[k]);
      }
    }
  }
  return py::none();
}

bool same_alias_set(const AliasInfo& a, const AliasInfo& b) {
  return !a.before_set.empty() && a.before_set == b.before_set;
}

// torch.return_types' names: the operator's ("max"), "<name>_out" for an out= overload, whose
// results are the tensors given (torch.sort(x, out=(v, i)) is a return_types.sort_out).
py::object named_tuple(const FunctionSchema& schema, py::tuple values) {
  py::module_ rt = py::module_::import("opdispatch.return_types");
  std::vector<std::string> fields;
  for (const Argument& r : schema.returns()) fields.push_back(r.name());
  std::string name = schema.name().substr(schema.name().find("::") + 2);
  const auto& arguments = schema.arguments();
  if (std::any_of(arguments.begin(), arguments.end(),
                  [](const Argument& a) { return a.is_out(); })) {
    name += "_out";
  }
  py::object type = rt.attr("_get")(name, fields);
  return type(*values);
}

// The results of a call, left on `stack` by the kernel.
// `method`: a Tensor method call, whose Tensor[] result is a tuple, as torch's Tensor methods
// return (x.split(2), x.unbind()); torch.ops' overloads and packets return a list.
py::object call_result(const FunctionSchema& schema, Stack stack, const PythonArgs& args,
                       bool method) {
  const auto& returns = schema.returns();
  auto result = [&](size_t i) -> py::object {
    if (const AliasInfo* alias = returns[i].alias_info(); alias && alias->is_write) {
      for (size_t j = 0; j < schema.arguments().size(); ++j) {
        const AliasInfo* a = schema.arguments()[j].alias_info();
        if (a && a->is_write && same_alias_set(*a, *alias)) {
          py::object passed = argument_object(schema, j, args);
          if (unwrap(passed)) return passed;
        }
      }
    }
    return from_ivalue(std::move(stack[i]));
  };
  if (returns.empty()) return py::none();
  if (returns.size() == 1 && !schema.is_varret()) {
    py::object r = result(0);
    const Type& type = *returns[0].type();
    if (method && type.kind() == TypeKind::List &&
        type.contained()[0]->kind() == TypeKind::Tensor && PyList_CheckExact(r.ptr())) {
      PyObject* tuple = PyList_AsTuple(r.ptr());
      if (tuple == nullptr) throw py::error_already_set();
      return py::reinterpret_steal<py::object>(tuple);
    }
    return r;
  }
  py::tuple out(stack.size());
  for (size_t i = 0; i < stack.size(); ++i) {
    out[i] = i < returns.size() ? result(i) : from_ivalue(std::move(stack[i]));
  }
  bool named =
      !schema.is_varret() && std::all_of(returns.begin(), returns.end(),
                                         [](const Argument& r) { return !r.name().empty(); });
  return named ? named_tuple(schema, out) : py::object(out);
}

// Note [Simple calls]
// x.add(y), x.sum(), opd.relu(x), x.mul(2): tensors and numbers, passed by position, at least
// one tensor. bind::bind_to_overloads binds the first overload (Note [Overload order]) that takes
// the arguments as they are, and only when none does, numbers as tensors (Note [Numbers as
// tensors] in core/bind/binding.cpp). For such a call, each overload in that order is one of:
//   binds   the arguments fill its leading parameters, not keyword-only, a tensor a Tensor (or
//           Tensor?) parameter and a number (an exact int within int64, or float) a Scalar one,
//           and every other parameter has a default: the binder would make exactly the stack
//           built here (the tensor itself, the number's IValue, the defaults; no tensor-taking
//           schema is a factory, so FactoryDefaults play no part);
//   fails   a number stands where it takes a Tensor (or Tensor?), which the binder's first pass
//           refuses (x.mul(2) and mul.Tensor), or a parameter without default is not given
//           (mul.out's out);
//   unsure  anything else (an int for an int parameter, a list, too many arguments...).
// The first overload that binds, after only ones that fail, is the binder's choice; an unsure
// one hands the call to the binder. This skips its general machinery (CallArgs, the
// given-argument set, the varargs test): a sixth of x.add(y), a third of x.mul(2). The test reads
// the live schemas on every call: nothing is cached beyond what OpPacket and OpOverload already
// cache, so an operator defined, overridden or undone between two calls is seen as the binder
// sees it.
bool takes_tensor(const Type& type) {
  if (type.kind() == TypeKind::Optional) return type.contained()[0]->kind() == TypeKind::Tensor;
  return type.kind() == TypeKind::Tensor;
}

// A number as Note [Simple calls] takes it; bool, int subclasses and big ints are not.
bool is_simple_number(PyObject* o) {
  if (PyFloat_CheckExact(o)) return true;
  if (!PyLong_CheckExact(o)) return false;
  int overflow = 0;
  PyLong_AsLongLongAndOverflow(o, &overflow);
  return overflow == 0;
}

enum class Fit { kBinds, kFails, kUnsure };

// REQUIRES: `args` positional only; `given[i]` the tensor of positional[i], or null for a number.
Fit simple_fit(const FunctionSchema& schema, const PythonArgs& args, const Tensor* const* given) {
  const auto& params = schema.arguments();
  const size_t n = static_cast<size_t>(args.size);
  if (n > params.size()) return Fit::kUnsure;
  Fit fit = Fit::kBinds;
  for (size_t i = 0; i < params.size(); ++i) {
    const Argument& p = params[i];
    if (i >= n) {
      // A required argument not given: the binder fails (factories, which it gives a device
      // and dtype, take no tensor, and so no tensor argument binds them).
      if (!p.default_value()) fit = Fit::kFails;
      continue;
    }
    if (p.kwarg_only()) return Fit::kUnsure;
    const Type& type = *p.type();
    if (given[i] != nullptr) {
      if (!takes_tensor(type)) return Fit::kUnsure;
    } else if (takes_tensor(type)) {
      fit = Fit::kFails;  // unless something later is unsure
    } else if (type.kind() != TypeKind::Scalar) {
      return Fit::kUnsure;
    }
  }
  return fit;
}

std::optional<bind::BoundCall> bind_simple(std::span<const OperatorHandle> candidates,
                                           const PythonArgs& args) {
  if (args.kwnames != nullptr || (args.kwargs != nullptr && PyDict_GET_SIZE(args.kwargs) != 0)) {
    return std::nullopt;
  }
  const size_t n = static_cast<size_t>(args.size);
  constexpr size_t kMaxArgs = 8;
  if (n == 0 || n > kMaxArgs) return std::nullopt;
  const Tensor* given[kMaxArgs];
  bool any_tensor = false;
  for (size_t i = 0; i < n; ++i) {
    given[i] = unwrap(args.positional[i]);
    if (given[i] != nullptr) {
      any_tensor = true;
    } else if (!is_simple_number(args.positional[i])) {
      return std::nullopt;
    }
  }
  if (!any_tensor) return std::nullopt;
  for (const OperatorHandle& op : candidates) {
    const FunctionSchema* schema = op.entry().schema_or_null();
    if (schema == nullptr) continue;  // the binder skips it too
    const Fit fit = simple_fit(*schema, args, given);
    if (fit == Fit::kUnsure) return std::nullopt;
    if (fit == Fit::kFails) continue;
    const auto& params = schema->arguments();
    Stack stack;
    stack.reserve(params.size());
    for (size_t i = 0; i < n; ++i) {
      if (given[i] != nullptr) {
        stack.emplace_back(*given[i]);
      } else {
        stack.push_back(to_ivalue(args.positional[i]));
      }
    }
    for (size_t i = n; i < params.size(); ++i) {
      stack.push_back(bind::default_argument(*params[i].default_value(), *params[i].type()));
    }
    return bind::BoundCall{op, schema, std::move(stack)};
  }
  return std::nullopt;
}

// The GIL released for a call's scope: PyEval_SaveThread alone (pybind11's gil_scoped_release
// also looks up its internals on every use, a tenth of a small call's binding cost).
class ReleaseGil {
 public:
  ReleaseGil() : state_(PyEval_SaveThread()) {}
  ~ReleaseGil() { PyEval_RestoreThread(state_); }
  ReleaseGil(const ReleaseGil&) = delete;
  ReleaseGil& operator=(const ReleaseGil&) = delete;

 private:
  PyThreadState* state_;
};

void call_bound(bind::BoundCall& bound, std::optional<DispatchKeySet> keys) {
  ReleaseGil r;
  if (keys) {
    bound.op.redispatch_boxed(*keys, &bound.stack);
  } else {
    bound.op.call_boxed(&bound.stack);
  }
}

// The call of Note [Simple calls] when `args` make one, else nullopt (nothing called).
// REQUIRES: the GIL (nothing here releases it, so `candidates` may be a cache's) and a CallScope.
std::optional<py::object> call_simple(std::span<const OperatorHandle> candidates,
                                      const PythonArgs& args, std::optional<DispatchKeySet> keys,
                                      bool self_bound) {
  std::optional<bind::BoundCall> bound = bind_simple(candidates, args);
  if (!bound) return std::nullopt;
  call_bound(*bound, keys);
  return call_result(*bound->schema, std::move(bound->stack), args, self_bound);
}

class OpPacket {
 public:
  // `qualified`: "aten::add"; `name`: what errors call it ("add").
  OpPacket(std::string qualified, std::string name)
      : qualified_(std::move(qualified)), name_(std::move(name)) {}

  // Note [Overload order]'s order; empty when the name has no schema now. REQUIRES: the GIL
  // and a CallScope (Note [Operator handles from Python]). Shared, so that a call keeps its own
  // copy for the price of a reference count.
  std::shared_ptr<const std::vector<OperatorHandle>> overloads() {
    refresh();
    return handles_;
  }

 private:
  // Brings handles_ up to date. REQUIRES: as overloads().
  void refresh() {
    uint64_t g = schema_generation();
    if (g != generation_) {
      // Looked up without the GIL (a registration listener may be waiting for it under the
      // registration mutex), stored with it: the cache is only written with the GIL held.
      std::vector<OperatorHandle> fresh;
      bool settled = true;
      {
        py::gil_scoped_release r;
        try {
          fresh = bind::resolve_operator(qualified_);
        } catch (const ValueError&) {
          // No overload has a schema now.
        } catch (const Error&) {
          // A def undone during the lookup (sorting read a schema just unpublished): nothing
          // is cached, and the next call looks again.
          settled = false;
        }
      }
      handles_ = std::make_shared<const std::vector<OperatorHandle>>(std::move(fresh));
      if (settled) generation_ = g;
    }
  }

 public:
  std::vector<std::string> overload_names() {
    detail::CallScope scope;
    std::vector<std::string> out;
    for (const OperatorHandle& h : *overloads()) {
      // Null when another thread undid the def since the lookup.
      const FunctionSchema* schema = h.entry().schema_or_null();
      if (!schema) continue;
      const std::string& o = schema->overload_name();
      out.push_back(o.empty() ? "default" : o);
    }
    return out;
  }

  // `args`: a tuple; `kwargs`: a dict or null.
  py::object call(py::handle args, py::handle kwargs) {
    return call_with(PythonArgs::of_tuple(args, kwargs), /*self_bound=*/false);
  }
  // x.name(...): the first positional argument is x.
  py::object call_method(const PythonArgs& args) { return call_with(args, /*self_bound=*/true); }

 private:
  py::object call_with(const PythonArgs& args, bool self_bound) {
    detail::CallScope scope;
    refresh();
    OPD_CHECK(!handles_->empty(), "opdispatch: operator {} is not defined (any more)", qualified_);
    // A simple call (Note [Simple calls]) copies the handle it calls while the GIL is held, so
    // handles_ needs no copy of its own for it.
    if (auto result = call_simple(*handles_, args, std::nullopt, self_bound)) {
      return std::move(*result);
    }
    const auto handles = handles_;  // this call's own copy: the binder runs without the GIL
    return call_overloads(*handles, name_, args, std::nullopt, self_bound);
  }

  std::string qualified_;
  std::string name_;
  uint64_t generation_ = ~uint64_t{0};
  std::shared_ptr<const std::vector<OperatorHandle>> handles_ =
      std::make_shared<const std::vector<OperatorHandle>>();
};

class OpOverload {
 public:
  explicit OpOverload(const std::string& name) : name_(parse_operator_name(name)) {
    if (name_.overload_name == "default") name_.overload_name.clear();
    display_ = name_.to_string();
  }

  // REQUIRES: the GIL and a CallScope (Note [Operator handles from Python]).
  OperatorHandle handle() {
    uint64_t g = schema_generation();
    if (g != generation_ || !handle_) {
      std::optional<OperatorHandle> fresh;
      {
        py::gil_scoped_release r;  // as in OpPacket::overloads()
        fresh = Dispatcher::singleton().find_schema(name_);
      }
      handle_ = fresh;
      generation_ = g;
    }
    OPD_CHECK(handle_.has_value(), "opdispatch: operator {} is not defined (any more)",
              name_.to_string());
    return *handle_;
  }

  // `args`: a tuple; `kwargs`: a dict or null.
  py::object call(py::handle args, py::handle kwargs) {
    detail::CallScope scope;
    OperatorHandle h = handle();
    return call_overloads({&h, 1}, display_, PythonArgs::of_tuple(args, kwargs));
  }
  py::object redispatch(DispatchKeySet keys, const py::args& args, const py::kwargs& kwargs) {
    detail::CallScope scope;
    OperatorHandle h = handle();
    return call_overloads({&h, 1}, display_, PythonArgs::of_tuple(args, kwargs), keys);
  }
  FunctionSchema schema() {
    detail::CallScope scope;
    const FunctionSchema* schema = handle().entry().schema_or_null();
    OPD_CHECK(schema != nullptr, "opdispatch: operator {} is not defined (any more)", display_);
    return *schema;
  }
  // The definition's tags, in opd::Tag's order (torch's OpOverload.tags).
  std::vector<Tag> tags() {
    detail::CallScope scope;
    return handle().tags().list();
  }
  bool has_kernel_for_dispatch_key(const std::string& key) {
    detail::CallScope scope;
    OperatorHandle h = handle();
    DispatchKey k = parse_dispatch_key(key);
    py::gil_scoped_release r;
    return h.has_kernel_for_dispatch_key(k);
  }

 private:
  OperatorName name_;
  std::string display_;  // "aten::add.Tensor", as errors name it
  uint64_t generation_ = ~uint64_t{0};
  std::optional<OperatorHandle> handle_;
};

// The tp_call of OpPacket's and OpOverload's classes: `self` is an instance (CPython checks).
template <class Op>
PyObject* call_slot(PyObject* self, PyObject* args, PyObject* kwargs) noexcept {
  return slot_call([&] { return self_as<Op>(self, "__call__").call(args, kwargs); });
}

// Note [Tensor methods]
// x.add(y) is an operator packet called with x first (OpPacket::call_method). Written as a
// Python function calling a pybind11 method, that call cost a Python frame, an argument tuple
// and pybind11's dispatcher: as much again as opd.add(x, y). A TensorMethod is a C method
// descriptor instead: Py_TPFLAGS_METHOD_DESCRIPTOR lets CPython's method-call opcodes call it
// with x prepended and no bound method made, through vectorcall. Anywhere else (getattr(x,
// "add")) its __get__ makes an ordinary bound method. It holds the packet, whose caches it uses.
// Its type is immutable: CPython 3.11 specialises LOAD_METHOD (LOAD_METHOD_NO_DICT) only for a
// descriptor whose type is (specialize.c's analyze_descriptor), and only while Tensor has no
// __getattr__ (Note [Tensor methods in the class dict] in python/opdispatch/_tensor.py).
struct TensorMethod {
  PyObject_HEAD vectorcallfunc vectorcall;
  PyObject* packet;  // an OpPacket
  PyObject* name;    // str: __name__ and __qualname__
};

PyObject* tensor_method_call(PyObject* self, PyObject* const* args, size_t nargsf,
                             PyObject* kwnames) noexcept {
  auto* method = reinterpret_cast<TensorMethod*>(self);
  return slot_call([&] {
    const Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (n < 1) {
      throw py::type_error(std::string("descriptor '") + PyUnicode_AsUTF8(method->name) +
                           "' of 'Tensor' object needs an argument");
    }
    // The arguments as vectorcall passed them: no tuple or dict made (Note [Tensor methods]).
    PythonArgs call_args{args, n,
                         kwnames != nullptr && PyTuple_GET_SIZE(kwnames) > 0 ? kwnames : nullptr};
    return self_as<OpPacket>(method->packet, "_call_method").call_method(call_args);
  });
}

PyObject* tensor_method_get(PyObject* self, PyObject* obj, PyObject* /*type*/) noexcept {
  if (obj == nullptr || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

void tensor_method_dealloc(PyObject* self) noexcept {
  auto* method = reinterpret_cast<TensorMethod*>(self);
  PyTypeObject* type = Py_TYPE(self);
  Py_XDECREF(method->packet);
  Py_XDECREF(method->name);
  type->tp_free(self);
  Py_DECREF(type);  // a heap type's instances own a reference to it
}

PyTypeObject* tensor_method_type() {
  static PyTypeObject* type = [] {
    static PyMemberDef members[] = {
        {"__vectorcalloffset__", T_PYSSIZET, offsetof(TensorMethod, vectorcall), READONLY, nullptr},
        {"__name__", T_OBJECT_EX, offsetof(TensorMethod, name), READONLY, nullptr},
        {"__qualname__", T_OBJECT_EX, offsetof(TensorMethod, name), READONLY, nullptr},
        {"_packet", T_OBJECT_EX, offsetof(TensorMethod, packet), READONLY, nullptr},
        {nullptr, 0, 0, 0, nullptr}};
    static PyType_Slot slots[] = {{Py_tp_members, members},
                                  {Py_tp_call, reinterpret_cast<void*>(&PyVectorcall_Call)},
                                  {Py_tp_descr_get, reinterpret_cast<void*>(&tensor_method_get)},
                                  {Py_tp_dealloc, reinterpret_cast<void*>(&tensor_method_dealloc)},
                                  {0, nullptr}};
    static PyType_Spec spec = {"opdispatch._C._TensorMethod", sizeof(TensorMethod), 0,
                               Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL |
                                   Py_TPFLAGS_METHOD_DESCRIPTOR | Py_TPFLAGS_IMMUTABLETYPE,
                               slots};
    PyObject* t = PyType_FromSpec(&spec);
    if (t == nullptr) throw py::error_already_set();
    return reinterpret_cast<PyTypeObject*>(t);
  }();
  return type;
}

// x.<name>(...) as `packet`'s method call: see Note [Tensor methods].
py::object make_tensor_method(py::handle packet, py::str name) {
  self_as<OpPacket>(packet, "_tensor_method");
  PyTypeObject* type = tensor_method_type();
  auto* method = PyObject_New(TensorMethod, type);
  if (method == nullptr) throw py::error_already_set();
  method->vectorcall = &tensor_method_call;
  method->packet = Py_NewRef(packet.ptr());
  method->name = Py_NewRef(name.ptr());
  return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(method));
}

}  // namespace

PyObject* PythonArgs::keyword(const std::string& name) const {
  if (kwnames != nullptr) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); ++i) {
      if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), name.c_str()) == 0) {
        return positional[size + i];
      }
    }
  } else if (kwargs != nullptr) {
    return PyDict_GetItemString(kwargs, name.c_str());
  }
  return nullptr;
}

namespace {

// Note [Several out= tensors]
// torch's Python signatures show the out= tensors of an overload that has several (sort.values's
// values and indices, max.dim_max's max and max_values) as one argument, `tuple of Tensors
// out`: torch.sort(x, out=(v, i)), which returns a return_types.sort_out of v and i themselves.
// So when `out` is a tuple or list and some candidates have several out= tensors, those
// candidates alone are bound, with `out` given as their own out= arguments (call_result finds
// the tensors' objects again through argument_object). The tuple's length and elements are
// checked first, with torch's TypeErrors. Tensor methods have no out= (as torch's), and an
// operator with one out= tensor takes a tensor, not a tuple, as before.
// Returns whether `call_args` and `selected` were so rewritten.
bool select_several_outs(std::span<const OperatorHandle> candidates, PyObject* out,
                         bind::CallArgs& call_args, std::vector<OperatorHandle>& selected) {
  if (!PyTuple_Check(out) && !PyList_Check(out)) return false;
  std::vector<std::string> names;  // the first such candidate's out= arguments
  size_t position = 0;             // where torch's signature has `out`: after the others
  for (const OperatorHandle& h : candidates) {
    const FunctionSchema* schema = h.entry().schema_or_null();
    if (schema == nullptr) continue;
    std::vector<std::string> outs;
    size_t others = 0;
    for (const Argument& a : schema->arguments()) {
      if (a.is_out()) {
        outs.push_back(a.name());
      } else {
        ++others;
      }
    }
    if (outs.size() < 2 || (!names.empty() && outs != names)) continue;
    if (names.empty()) {
      names = std::move(outs);
      position = others;
    }
    selected.push_back(h);
  }
  if (selected.empty()) return false;
  const Py_ssize_t given = PySequence_Fast_GET_SIZE(out);
  OPD_CHECK_T(TypeError, static_cast<size_t>(given) == names.size(),
              "expected tuple of {} elements but got {}", names.size(), given);
  std::vector<std::pair<std::string, IValue>> keywords;
  for (auto& [k, v] : call_args.keywords) {
    if (k != "out") keywords.emplace_back(std::move(k), std::move(v));
  }
  for (Py_ssize_t i = 0; i < given; ++i) {
    PyObject* item = PySequence_Fast_ITEMS(out)[i];
    const Tensor* t = unwrap(item);
    OPD_CHECK_T(TypeError, t != nullptr, "expected Tensor as element {} in argument {}, but got {}",
                i, position, type_name(item));
    keywords.emplace_back(names[static_cast<size_t>(i)], IValue(*t));
  }
  call_args.keywords = std::move(keywords);
  return true;
}

}  // namespace

py::object call_overloads(std::span<const OperatorHandle> candidates, std::string_view name,
                          const PythonArgs& args, std::optional<DispatchKeySet> keys,
                          bool self_bound) {
  if (auto result = call_simple(candidates, args, keys, self_bound)) {
    return std::move(*result);
  }
  bind::CallArgs call_args;
  call_args.self_bound = self_bound;
  const Py_ssize_t n = args.size;
  call_args.positional.reserve(n);
  // An int outside int64 is refused before binding (an IValue cannot hold it), naming where it
  // was: torch's "Overflow when unpacking long", with the value and the argument.
  auto overflow = [&](const IntOverflowError& e, const std::string& argument) {
    return IntOverflowError(e.value(), std::string(name) + "(), " + argument);
  };
  for (Py_ssize_t i = 0; i < n; ++i) {
    try {
      call_args.positional.push_back(to_ivalue(args.positional[i]));
    } catch (const IntOverflowError& e) {
      // Positions count from 1, after self in a method call, as torch's argument errors do.
      throw overflow(e, "argument at position " + std::to_string(self_bound ? i : i + 1));
    }
  }
  auto keyword = [&](py::handle k, py::handle v) {
    OPD_CHECK_T(TypeError, PyUnicode_Check(k.ptr()), "keywords must be strings");
    std::string keyword = k.cast<std::string>();
    try {
      call_args.keywords.emplace_back(keyword, to_ivalue(v));
    } catch (const IntOverflowError& e) {
      throw overflow(e, "argument '" + keyword + "'");
    }
  };
  if (args.kwnames != nullptr) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args.kwnames); ++i) {
      keyword(PyTuple_GET_ITEM(args.kwnames, i), args.positional[n + i]);
    }
  } else if (args.kwargs != nullptr) {
    for (auto [k, v] : py::reinterpret_borrow<py::dict>(args.kwargs)) keyword(k, v);
  }
  std::vector<OperatorHandle> several_outs;
  if (!self_bound) {
    if (PyObject* out = args.keyword("out")) {
      if (select_several_outs(candidates, out, call_args, several_outs)) candidates = several_outs;
    }
  }
  bind::FactoryDefaults defaults;
  defaults.device = default_device();
  std::optional<bind::BoundCall> bound;
  {
    ReleaseGil r;
    bound.emplace(bind::bind_to_overloads(candidates, name, call_args, defaults));
    call_args = {};  // drop the argument references before the call, as a C++ caller would
    if (keys) {
      bound->op.redispatch_boxed(*keys, &bound->stack);
    } else {
      bound->op.call_boxed(&bound->stack);
    }
  }
  return call_result(*bound->schema, std::move(bound->stack), args, self_bound);
}

void bind_ops(py::module_& m) {
  // Never undone: _C is never unloaded, and the listener must outlive every registration. (A
  // static pointer, so that LeakSanitizer sees it reachable; volatile, so that an optimising
  // build keeps the store it never reads.)
  static RegistrationHandle* volatile listener = new RegistrationHandle(
      Dispatcher::singleton().add_registration_listener(std::make_unique<SchemaGeneration>()));
  (void)listener;
  m.def("_schema_generation", &schema_generation);

  py::class_<Argument>(m, "Argument", py::module_local())
      .def_property_readonly("name", &Argument::name)
      .def_property_readonly("type", [](const Argument& a) { return a.type()->str(); })
      .def_property_readonly("N", &Argument::N)
      .def_property_readonly("default_value",
                             [](const Argument& a) -> py::object {
                               if (!a.default_value()) return py::none();
                               return py::str(a.default_value_text());
                             })
      .def_property_readonly("kwarg_only", &Argument::kwarg_only)
      .def_property_readonly("is_out", &Argument::is_out)
      .def_property_readonly("is_write", &Argument::is_write)
      .def_property_readonly("alias_info",
                             [](const Argument& a) -> py::object {
                               if (!a.alias_info()) return py::none();
                               return py::str(a.alias_info()->to_string());
                             })
      .def("__str__", &Argument::to_string)
      .def("__repr__", &Argument::to_string);
  py::class_<FunctionSchema>(m, "FunctionSchema", py::module_local())
      .def_property_readonly("name", &FunctionSchema::name)
      .def_property_readonly("overload_name", &FunctionSchema::overload_name)
      .def_property_readonly("arguments", &FunctionSchema::arguments)
      .def_property_readonly("returns", &FunctionSchema::returns)
      .def_property_readonly("is_vararg", &FunctionSchema::is_vararg)
      .def_property_readonly("is_varret", &FunctionSchema::is_varret)
      .def_property_readonly("is_mutable", &FunctionSchema::is_mutable)
      .def("to_json", [](const FunctionSchema& s) { return schema_to_json(s); })
      .def("__str__", &FunctionSchema::to_string)
      .def("__repr__", &FunctionSchema::to_string);
  m.def(
      "parse_schema", [](const std::string& text) { return parse_schema(text); },
      py::arg("schema"));

  // opdispatch.Tag, as torch.Tag (Note [Operator tags]).
  py::enum_<Tag> tag(m, "Tag", py::module_local());
  for (size_t i = 0; i < kTagNames.size(); ++i) {
    tag.value(std::string(kTagNames[i]).c_str(), static_cast<Tag>(i));
  }

  // Subclassed by opdispatch.ops' OpOverloadPacket and OpOverload: a call reaches C++ without a
  // Python frame, and finds its object without a type lookup (Note [Fast pybind11 instances]).
  // __call__ is the types' tp_call slot (Note [Type slots]).
  py::class_<OpPacket>(m, "_OpPacket", py::module_local(),
                       py::custom_type_setup([](PyHeapTypeObject* type) {
                         type->ht_type.tp_call = &call_slot<OpPacket>;
                       }))
      .def(py::init<std::string, std::string>())
      .def("overloads",
           [](py::handle self) { return self_as<OpPacket>(self, "overloads").overload_names(); })
      .def("_call_method", [](py::handle self, const py::args& args, const py::kwargs& kwargs) {
        return self_as<OpPacket>(self, "_call_method")
            .call_method(PythonArgs::of_tuple(args, kwargs));
      });
  m.attr("_TensorMethod") = py::handle(reinterpret_cast<PyObject*>(tensor_method_type()));
  m.def("_tensor_method", &make_tensor_method, py::arg("packet"), py::arg("name"));
  py::class_<OpOverload>(m, "_OpOverload", py::module_local(),
                         py::custom_type_setup([](PyHeapTypeObject* type) {
                           type->ht_type.tp_call = &call_slot<OpOverload>;
                         }))
      .def(py::init<const std::string&>())
      // (self_as, not member pointers: pybind11 would call them on the null object of an
      // instance made by __new__ alone.)
      .def_property_readonly(
          "schema", [](py::handle self) { return self_as<OpOverload>(self, "schema").schema(); })
      .def_property_readonly(
          "tags", [](py::handle self) { return self_as<OpOverload>(self, "tags").tags(); })
      .def(
          "redispatch",
          [](py::handle self, DispatchKeySet keys, const py::args& args, const py::kwargs& kwargs) {
            return self_as<OpOverload>(self, "redispatch").redispatch(keys, args, kwargs);
          })
      .def("has_kernel_for_dispatch_key", [](py::handle self, const std::string& key) {
        return self_as<OpOverload>(self, "has_kernel_for_dispatch_key")
            .has_kernel_for_dispatch_key(key);
      });

  py::class_<DispatchKeySet>(m, "DispatchKeySet", py::module_local())
      .def(py::init([](const std::string& key) { return DispatchKeySet(parse_dispatch_key(key)); }))
      .def("__or__", [](DispatchKeySet a, DispatchKeySet b) { return a | b; })
      .def("__and__", [](DispatchKeySet a, DispatchKeySet b) { return a & b; })
      .def("__sub__", [](DispatchKeySet a, DispatchKeySet b) { return a - b; })
      .def("__eq__", [](DispatchKeySet a, DispatchKeySet b) { return a == b; })
      .def("__hash__", [](DispatchKeySet a) { return a.raw(); })
      .def("has",
           [](DispatchKeySet a, const std::string& k) { return a.has(parse_dispatch_key(k)); })
      .def("add",
           [](DispatchKeySet a, const std::string& k) { return a.add(parse_dispatch_key(k)); })
      .def("remove",
           [](DispatchKeySet a, const std::string& k) { return a.remove(parse_dispatch_key(k)); })
      .def("highest_priority_type_id",
           [](DispatchKeySet a) { return std::string(to_string(a.highest_priority_key())); })
      .def("raw_repr", &DispatchKeySet::raw)
      .def("__repr__", &DispatchKeySet::to_string)
      .def("__str__", &DispatchKeySet::to_string);
  m.def("_dispatch_keys", [](py::handle t) {
    return unwrap_or_throw(t, "_dispatch_keys(): argument 'tensor'").key_set();
  });
}

}  // namespace opd::python
