// CPU kernels of masked_fill_ (Scalar and Tensor value): self's elements where the mask,
// broadcast to self's shape, is true, are set to the value. The functional forms are
// composites (plugins/composite/scatter_composites.cpp), as PyTorch's.

#include <array>

#include "common/scatter_gather_shape.h"
#include "common/type_dispatch.h"
#include "cpu/index_lines.h"
#include "opd/native/CPU.h"

namespace opd::native {

namespace {

void masked_fill_cpu(const Tensor& self, const Tensor& mask, const Scalar& value) {
  if (self.numel() == 0) return;
  const Tensor m = mask.expand(self.sizes());
  const int64_t dim = self.dim() == 0 ? 0 : self.dim() - 1;
  const int64_t n = self.dim() == 0 ? 1 : self.size(dim);
  const int64_t ss = self.dim() == 0 ? 0 : self.stride(dim);
  const int64_t ms = self.dim() == 0 ? 0 : m.stride(dim);
  const uint8_t* mp = static_cast<const uint8_t*>(m.data_ptr());  // Bool and UInt8: one byte
  common::visit_dtype(self.scalar_type(), "masked_fill", [&](auto t) {
    using T = decltype(t);
    const T v = common::scalar_to<T>(value);
    T* s = static_cast<T*>(self.data_ptr());
    cpu::for_each_line<2>(self.sizes(), dim, {self.strides(), m.strides()}, true,
                          [&](const std::array<int64_t, 2>& off) {
                            T* sp = s + off[0];
                            const uint8_t* p = mp + off[1];
                            for (int64_t j = 0; j < n; ++j) {
                              if (p[j * ms]) sp[j * ss] = v;
                            }
                          });
  });
  self.bump_version();
}

}  // namespace

Tensor& masked_fill__Scalar(Tensor& self, const Tensor& mask, const Scalar& value) {
  common::masked_fill_check(self, mask, nullptr);
  masked_fill_cpu(self, mask, value);
  return self;
}

Tensor& masked_fill__Tensor(Tensor& self, const Tensor& mask, const Tensor& value) {
  common::masked_fill_check(self, mask, &value);
  masked_fill_cpu(self, mask, value.item());
  return self;
}

}  // namespace opd::native
