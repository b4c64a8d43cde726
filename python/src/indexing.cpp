// Tensor.__getitem__ and __setitem__ with PyTorch's rules (torch/csrc/autograd/python_variable_
// indexing.cpp, applySlicing): ints, slices, None and `...` index as views (aten::select, slice,
// unsqueeze, sharing storage and version counter); tensors, lists of ints or bools and Python
// bools are advanced indices, gathered by aten::index (a copy) and written by aten::index_put_.
//
// Note [Advanced indices in Python]
// The basic items are applied first, left to right, each advanced index being recorded at the
// dimension of the partial result it stands at (a bool or byte mask covers as many dimensions as
// it has). aten::index then places the indexed dimensions (Note [Advanced indexing] in
// plugins/common/index_shape.h). A list is a single advanced index (x[[0, 1]]) unless it holds a
// slice, None, `...`, a tensor or another sequence, when it is read as a tuple of items (NumPy's
// legacy rule, as PyTorch's treatSequenceAsTuple). A Python bool adds a dimension of size 1
// (True) or 0 (False). Assignment drops the value's leading size-1 dimensions (PyTorch's
// slicePrefix1sSize) before copy_, fill_ or index_put_; a number takes self's dtype, a tensor keeps
// its own (index_put_ refuses another, as torch's).
//
// Also here: the properties x.T (dimensions reversed) and x.mT (the last two swapped).

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "convert.h"
#include "opd/ops.h"
#include "slots.h"

namespace py = pybind11;

namespace opd::python {
namespace {

// The result of the basic items, and the advanced indices recorded against its dimensions.
struct Indexed {
  Tensor view;
  std::vector<std::optional<Tensor>> indices;
  bool advanced() const { return !indices.empty(); }
};

bool is_mask(const Tensor& t) {
  return t.scalar_type() == ScalarType::Bool || t.scalar_type() == ScalarType::UInt8;
}

// Note [0-dim tensor indices]
// As PyTorch's indexing: a 0-dim bool or uint8 tensor index is the Python bool of its value (a
// new dimension holding the one element or none: x[tensor(True)] is x[None], x[tensor(False)]
// has a dimension of 0), and a 0-dim integer tensor the Python int of its value (a select: the
// result is a view). aten::index itself is given no 0-dim index by this binding.
bool is_zero_dim_index(const Tensor& t) {
  return t.dim() == 0 && is_integral(t.scalar_type(), /*include_bool=*/true);
}

py::object zero_dim_index(const Tensor& t) {
  Scalar value;
  {
    py::gil_scoped_release r;
    value = t.item();
  }
  if (is_mask(t)) return py::bool_(value.to<int64_t>() != 0);
  return py::int_(value.to<int64_t>());
}

// A list (or other sequence) as an index tensor: opdispatch.tensor's reading; an empty one is a
// long tensor, as PyTorch's.
Tensor sequence_to_tensor(py::handle seq) {
  static PyObject* make = [] {
    py::object f = py::module_::import("opdispatch").attr("tensor");
    return f.release().ptr();  // kept for the process, as the module is
  }();
  py::object t = py::reinterpret_borrow<py::object>(make)(seq);
  Tensor result = *unwrap(t);
  if (result.numel() == 0 && !is_mask(result) && result.scalar_type() != ScalarType::Int64) {
    py::gil_scoped_release r;
    result = opd::empty({0}, TensorOptions(ScalarType::Int64));
  }
  return result;
}

bool is_sequence_index(py::handle h) {
  return !unwrap(h) && PySequence_Check(h.ptr()) && !PyUnicode_Check(h.ptr()) &&
         !PyBytes_Check(h.ptr());
}

// PyTorch's treatSequenceAsTuple.
bool sequence_is_tuple(py::handle index) {
  if (PyTuple_Check(index.ptr())) return true;
  if (unwrap(index) || !is_sequence_index(index)) return false;
  const Py_ssize_t n = PySequence_Size(index.ptr());
  if (n < 0) {
    PyErr_Clear();
    return false;
  }
  if (n >= 32) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    py::object item = py::reinterpret_steal<py::object>(PySequence_GetItem(index.ptr(), i));
    if (!item) {
      PyErr_Clear();
      return false;
    }
    PyObject* o = item.ptr();
    if (unwrap(item) || is_sequence_index(item) || PySlice_Check(o) || o == Py_Ellipsis ||
        o == Py_None) {
      return true;
    }
  }
  return false;
}

Indexed apply_index(const Tensor& self, py::handle index) {
  std::vector<py::object> items;
  if (sequence_is_tuple(index)) {
    py::object seq = py::reinterpret_steal<py::object>(PySequence_Fast(index.ptr(), "index"));
    if (!seq) throw py::error_already_set();
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq.ptr());
    for (Py_ssize_t i = 0; i < n; ++i) {
      items.push_back(py::reinterpret_borrow<py::object>(PySequence_Fast_GET_ITEM(seq.ptr(), i)));
    }
  } else {
    items.push_back(py::reinterpret_borrow<py::object>(index));
  }
  // Lists become tensors first: a mask's dimensions count towards those consumed.
  for (py::object& item : items) {
    if (is_sequence_index(item)) {
      item = wrap(sequence_to_tensor(item));
    } else if (const Tensor* t = unwrap(item); t != nullptr && is_zero_dim_index(*t)) {
      item = zero_dim_index(*t);
    }
  }
  int64_t consumed = 0;  // dimensions of self the items index
  bool ellipsis = false;
  for (const py::object& h : items) {
    PyObject* o = h.ptr();
    if (o == Py_Ellipsis) {
      OPD_CHECK_T(IndexError, !ellipsis, "an index can only have a single ellipsis ('...')");
      ellipsis = true;
    } else if (const Tensor* t = unwrap(h)) {
      consumed += is_mask(*t) ? t->dim() : 1;
    } else if (o != Py_None && !PyBool_Check(o)) {
      ++consumed;
    }
  }
  OPD_CHECK_T(IndexError, consumed <= self.dim(), "too many indices for tensor of dimension {}",
              self.dim());
  Indexed out{self, {}};
  Tensor& result = out.view;
  int64_t dim = 0;       // in result
  int64_t self_dim = 0;  // in self, as errors name it
  auto record = [&](const Tensor& t) {
    if (static_cast<int64_t>(out.indices.size()) < dim + 1) out.indices.resize(dim + 1);
    out.indices[dim] = t;
    const int64_t n = is_mask(t) ? t.dim() : 1;
    dim += n;
    self_dim += n;
  };
  for (const py::object& h : items) {
    PyObject* o = h.ptr();
    if (o == Py_Ellipsis) {
      dim += self.dim() - consumed;
      self_dim += self.dim() - consumed;
    } else if (o == Py_None) {
      py::gil_scoped_release r;
      result = opd::unsqueeze(result, dim);
      ++dim;
    } else if (PyBool_Check(o)) {
      {
        py::gil_scoped_release r;
        result = opd::unsqueeze(result, dim);
      }
      // True keeps the new dimension's one element, False none.
      Tensor t;
      {
        py::gil_scoped_release r;
        t = o == Py_True ? opd::zeros({1}, TensorOptions(ScalarType::Int64))
                         : opd::empty({0}, TensorOptions(ScalarType::Int64));
      }
      record(t);
      --self_dim;
    } else if (PySlice_Check(o)) {
      Py_ssize_t start = 0, stop = 0, step = 0;
      if (PySlice_Unpack(o, &start, &stop, &step) < 0) throw py::error_already_set();
      OPD_CHECK_T(ValueError, step > 0, "step must be greater than zero");
      py::gil_scoped_release r;
      // PySlice_Unpack gives PY_SSIZE_T_MIN/MAX for omitted bounds; aten::slice clamps them.
      result = opd::slice(result, dim, start, stop, step);
      ++dim;
      ++self_dim;
    } else if (const Tensor* t = unwrap(h)) {
      record(*t);
    } else if (PyIndex_Check(o)) {
      py::object index_int = py::reinterpret_steal<py::object>(PyNumber_Index(o));
      if (!index_int) throw py::error_already_set();
      int64_t i = 0;
      try {
        i = int64_of(index_int);
      } catch (const IntOverflowError& e) {
        // torch's RuntimeError, naming the index.
        throw IntOverflowError(e.value(), "the index of dimension " + std::to_string(self_dim));
      }
      int64_t size = result.size(dim);
      OPD_CHECK_T(IndexError, i >= -size && i < size,
                  "index {} is out of bounds for dimension {} with size {}", i, self_dim, size);
      ++self_dim;
      py::gil_scoped_release r;
      result = opd::select(result, dim, i < 0 ? i + size : i);
    } else {
      throw IndexError(
          "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
          "valid indices (got " +
          type_name(h) + ")");
    }
  }
  return out;
}

// The number assigned by x[i] = value; an int outside int64 is torch's overflow error, named.
std::optional<Scalar> value_scalar(py::handle value) {
  try {
    return as_scalar(value);
  } catch (const IntOverflowError& e) {
    throw IntOverflowError(e.value(), "the value assigned");
  }
}

// `v` without its leading size-1 dimensions (PyTorch's slicePrefix1sSize).
Tensor without_leading_ones(Tensor v) {
  int64_t drop = 0;
  while (drop < v.dim() && v.size(drop) == 1) ++drop;
  if (drop == 0) return v;
  return v.view(std::vector<int64_t>(v.sizes().begin() + drop, v.sizes().end()));
}

void set_item(const Tensor& self, py::handle index, py::handle value) {
  Indexed target = apply_index(self, index);
  const Tensor* v = unwrap(value);
  std::optional<Scalar> s;
  if (!v) {
    s = value_scalar(value);
    if (!s) throw TypeError("can't assign a " + type_name(value) + " to a Tensor");
  }
  py::gil_scoped_release r;
  const Tensor& view = target.view;
  if (!target.advanced()) {
    if (v) {
      view.copy_(without_leading_ones(*v));
    } else {
      view.fill_(*s);
    }
    return;
  }
  // A number takes self's dtype; a tensor keeps its own, which index_put_ checks (as torch).
  const Tensor values =
      v ? without_leading_ones(*v)
        : opd::scalar_tensor(*s, TensorOptions(view.scalar_type()).device(view.device()));
  Tensor written = view;
  opd::index_put_(written, target.indices, values, false);
}

// Note [Single indices]
// x[1] and x[idx] are most of the indexing a program does, and small tensors' indexing is call
// overhead. So __getitem__ is the type's mp_subscript slot (Note [Type slots]), and an int or a
// lone tensor skips apply_index's item list and sequence tests: each does what apply_index does
// for that one item (aten::select after the bounds check; aten::index with the tensor at
// dimension 0), errors included.
std::optional<Tensor> get_single_item(const Tensor& self, py::handle index) {
  PyObject* o = index.ptr();
  if (PyLong_CheckExact(o) && self.dim() >= 1) {  // (a bool is not exactly an int)
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0) return std::nullopt;  // apply_index's error, naming the dimension
    const int64_t size = self.size(0);
    OPD_CHECK_T(IndexError, i >= -size && i < size,
                "index {} is out of bounds for dimension {} with size {}", i, 0, size);
    py::gil_scoped_release r;
    return opd::select(self, 0, i < 0 ? i + size : i);
  }
  if (const Tensor* t = unwrap(index); t != nullptr && !is_zero_dim_index(*t)) {
    OPD_CHECK_T(IndexError, (is_mask(*t) ? t->dim() : 1) <= self.dim(),
                "too many indices for tensor of dimension {}", self.dim());
    std::vector<std::optional<Tensor>> indices{*t};
    py::gil_scoped_release r;
    return opd::index(self, indices);
  }
  return std::nullopt;
}

Tensor get_item(const Tensor& self, py::handle index) {
  if (std::optional<Tensor> single = get_single_item(self, index)) return std::move(*single);
  Indexed target = apply_index(self, index);
  if (!target.advanced()) return target.view;
  py::gil_scoped_release r;
  return opd::index(target.view, target.indices);
}

}  // namespace

PyObject* tensor_subscript(PyObject* self, PyObject* index) noexcept {
  return slot_call([&] { return wrap(get_item(unwrap_or_throw(self, "self"), index)); });
}

void bind_indexing(py::class_<Tensor>& cls) {
  // __getitem__ is tensor_subscript, the mp_subscript slot (Note [Single indices]).
  cls.def("__setitem__", &set_item)
      .def_property_readonly(
          "T",
          [](const Tensor& self) {
            if (self.dim() > 2) {
              static bool warned = false;
              if (!warned) {
                warned = true;
                if (PyErr_WarnEx(PyExc_UserWarning,
                                 "The use of `x.T` on tensors of dimension other than 2 to reverse "
                                 "their shape is deprecated and it will throw an error in a future "
                                 "release. Consider `x.mT` to transpose batches of matrices or "
                                 "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the "
                                 "dimensions of a tensor.",
                                 1) < 0) {
                  throw py::error_already_set();
                }
              }
            }
            std::vector<int64_t> dims;
            for (int64_t d = self.dim() - 1; d >= 0; --d) dims.push_back(d);
            Tensor t;
            {
              py::gil_scoped_release r;
              t = opd::permute(self, dims);
            }
            return wrap(std::move(t));
          })
      .def_property_readonly("mT", [](const Tensor& self) {
        OPD_CHECK(self.dim() >= 2,
                  "tensor.mT is only supported on matrices or batches of matrices. Got {}-D "
                  "tensor.",
                  self.dim());
        Tensor t;
        {
          py::gil_scoped_release r;
          t = opd::transpose(self, -2, -1);
        }
        return wrap(std::move(t));
      });
}

}  // namespace opd::python
