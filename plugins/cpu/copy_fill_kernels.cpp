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

// Note [Contiguous copy]
// The common copy_ (_to_copy's, clone's, contiguous's: into a fresh result) is between two
// contiguous CPU tensors of the same shape whose memory does not overlap. Element i of each then
// lies i elements after its data pointer, so no broadcasting, no iterator and no overlap check
// is needed: setting up the TensorIterator cost more than converting a few elements. Nothing can
// differ from the iterator's path: a contiguous tensor has no internal overlap, disjoint memory
// no partial overlap, each element goes through the same convert<dst_t>, and the pool splits
// the range at the same grain. Anything else (broadcasting, strides, shared memory, a device)
// takes the TensorIterator path below.
bool copy_contiguous(Tensor& self, const Tensor& src) {
  if (!self.is_cpu() || !src.is_cpu() || !self.is_contiguous() || !src.is_contiguous() ||
      !self.sizes().equals(src.sizes())) {
    return false;
  }
  const int64_t n = self.numel();
  if (n == 0) return true;
  const ScalarType dst = self.scalar_type(), src_type = src.scalar_type();
  const auto out_item = static_cast<int64_t>(element_size(dst));
  const auto in_item = static_cast<int64_t>(element_size(src_type));
  char* out = static_cast<char*>(self.data_ptr());
  const char* in = static_cast<const char*>(src.data_ptr());
  if (out < in + n * in_item && in < out + n * out_item) return false;  // overlapping memory
  if (dst == src_type) {
    cpu::parallel_for(0, n, common::kGrainSize, [&](int64_t begin, int64_t end) {
      std::memcpy(out + begin * out_item, in + begin * in_item, (end - begin) * out_item);
    });
    return true;
  }
  OPD_DISPATCH_EVERY_TYPE(dst, "copy_", [&] {
    using dst_t = scalar_t;
    auto* d = reinterpret_cast<dst_t*>(out);
    OPD_DISPATCH_EVERY_TYPE(src_type, "copy_", [&] {
      const auto* s = reinterpret_cast<const scalar_t*>(in);
      cpu::parallel_for(0, n, common::kGrainSize, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) d[i] = convert<dst_t>(s[i]);
      });
    });
  });
  return true;
}

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
  if (copy_contiguous(self, src)) {  // Note [Contiguous copy]
    self.bump_version();
    return self;
  }
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
