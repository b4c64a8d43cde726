// copy_ and fill_ on the CPU: every dtype, any strides, src broadcast into self.

#include <complex>
#include <cstring>
#include <type_traits>

#include "common/elementwise.h"
#include "cpu/convert.h"
#include "cpu/elementwise_loops.h"
#include "opd/half.h"
#include "opd/native/CPU.h"

namespace opd::native {
namespace {

using common::TensorIterator;

using cpu::convert;

void copy_kernel(const TensorIterator& iter) {
  const ScalarType dst = iter.dtype(0), src = iter.dtype(1);
  if (dst == src && iter.is_contiguous()) {
    const auto item = static_cast<int64_t>(iter.tensor(0).element_size());
    char* out = static_cast<char*>(iter.tensor(0).data_ptr());
    const char* in = static_cast<const char*>(iter.tensor(1).data_ptr());
    cpu::parallel_for(0, iter.numel(), common::kGrainSize, [&](int64_t begin, int64_t end) {
      std::memcpy(out + begin * item, in + begin * item, (end - begin) * item);
    });
    return;
  }
  OPD_DISPATCH_EVERY_TYPE(dst, "copy_", [&] {
    using dst_t = scalar_t;
    OPD_DISPATCH_EVERY_TYPE(src, "copy_", [&] {
      cpu::cpu_kernel(iter, [](scalar_t v) -> dst_t { return convert<dst_t>(v); });
    });
  });
}

}  // namespace

Tensor& copy_(Tensor& self, const Tensor& src, bool non_blocking) {
  std::optional<TensorIterator> iter = common::copy_meta(self, src);
  if (iter) {
    OPD_CHECK(self.is_cpu() && src.is_cpu(),
              "copy_: the CPU plugin copies between CPU tensors only, not from {} to {}",
              src.device(), self.device());
    copy_kernel(*iter);
  }
  self.bump_version();
  return self;
}

Tensor& fill__Scalar(Tensor& self, const Scalar& value) {
  TensorIterator iter = common::fill_meta(self, value);
  if (iter.numel() > 0) {
    OPD_DISPATCH_EVERY_TYPE(iter.dtype(), "fill_cpu", [&] {
      const auto v = common::scalar_to<scalar_t>(value);
      cpu::cpu_kernel(iter, [v]() -> scalar_t { return v; });
    });
  }
  self.bump_version();
  return self;
}

}  // namespace opd::native
