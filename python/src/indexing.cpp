// Basic indexing, as PyTorch's applySlicing: x[0], x[:, 1:3], x[..., None], x[0] = 1, each a
// view made by aten::select, aten::slice and aten::unsqueeze (sharing storage and version
// counter); assignment copies into that view (copy_ broadcasts, fill_ for a number). Advanced
// indexing (tensors, lists, bools) needs aten::index, which no plugin defines: IndexError.

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "bindings.h"
#include "convert.h"
#include "opd/ops.h"

namespace py = pybind11;

namespace opd::python {
namespace {

Tensor apply_index(const Tensor& self, py::handle index) {
  std::vector<py::handle> items;
  if (PyTuple_Check(index.ptr())) {
    for (py::handle h : py::reinterpret_borrow<py::tuple>(index)) items.push_back(h);
  } else {
    items.push_back(index);
  }
  int64_t consumed = 0;  // dimensions of self an item indexes (ints and slices)
  bool ellipsis = false;
  for (py::handle h : items) {
    if (h.ptr() == Py_Ellipsis) {
      OPD_CHECK_T(IndexError, !ellipsis, "an index can only have a single ellipsis ('...')");
      ellipsis = true;
    } else if (!h.is_none()) {
      ++consumed;
    }
  }
  OPD_CHECK_T(IndexError, consumed <= self.dim(), "too many indices for tensor of dimension {}",
              self.dim());
  Tensor result = self;
  int64_t dim = 0;       // in result
  int64_t self_dim = 0;  // in self, as errors name it
  for (py::handle h : items) {
    PyObject* o = h.ptr();
    if (o == Py_Ellipsis) {
      dim += self.dim() - consumed;
      self_dim += self.dim() - consumed;
    } else if (o == Py_None) {
      py::gil_scoped_release r;
      result = opd::unsqueeze(result, dim);
      ++dim;
    } else if (PySlice_Check(o)) {
      Py_ssize_t start = 0, stop = 0, step = 0;
      if (PySlice_Unpack(o, &start, &stop, &step) < 0) throw py::error_already_set();
      OPD_CHECK_T(ValueError, step > 0, "step must be greater than zero");
      py::gil_scoped_release r;
      // PySlice_Unpack gives PY_SSIZE_T_MIN/MAX for omitted bounds; aten::slice clamps them.
      result = opd::slice(result, dim, start, stop, step);
      ++dim;
      ++self_dim;
    } else if (!PyBool_Check(o) && unwrap(h) == nullptr && PyIndex_Check(o)) {
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
          "opdispatch: only integers, slices (`:`), ellipsis (`...`) and None are valid "
          "indices (advanced indexing needs aten::index, which no loaded plugin defines); got " +
          type_name(h));
    }
  }
  return result;
}

// The number assigned by x[i] = value; an int outside int64 is torch's overflow error, named.
std::optional<Scalar> value_scalar(py::handle value) {
  try {
    return as_scalar(value);
  } catch (const IntOverflowError& e) {
    throw IntOverflowError(e.value(), "the value assigned");
  }
}

}  // namespace

void bind_indexing(py::class_<Tensor>& cls) {
  cls.def("__getitem__",
          [](const Tensor& self, py::handle index) { return wrap(apply_index(self, index)); })
      .def("__setitem__", [](const Tensor& self, py::handle index, py::handle value) {
        Tensor view = apply_index(self, index);
        if (const Tensor* v = unwrap(value)) {
          py::gil_scoped_release r;
          view.copy_(*v);
        } else if (auto s = value_scalar(value)) {
          py::gil_scoped_release r;
          view.fill_(*s);
        } else {
          throw TypeError("can't assign a " + type_name(value) + " to a Tensor");
        }
      });
}

}  // namespace opd::python
