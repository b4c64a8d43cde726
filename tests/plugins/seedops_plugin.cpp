// The registration seed's C++ example: a custom operator myops::my_add with a CPU kernel,
// called from Python as opdispatch.ops.myops.my_add(x, y) (tests/python/test_seeds.py). A
// FRAGMENT, so that the Python examples may still DEF the namespace myops.

#include "opd/ops.h"
#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {

opd::Tensor my_add(const opd::Tensor& self, const opd::Tensor& other) {
  return opd::add(self, other);
}

}  // namespace

OPD_PLUGIN(seedops, "1.0.0") {}

OPD_LIBRARY_FRAGMENT(myops, m) { m.def("my_add(Tensor self, Tensor other) -> Tensor"); }

OPD_LIBRARY_IMPL(myops, CPU, m) { m.impl("my_add", &my_add); }
