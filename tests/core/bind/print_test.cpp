// PyTorch's repr and JSON of tensors (opd/bind/print.h) without plugins: small, empty, meta,
// long and strided tensors. Moved from tests/tools/eval_parser_test.cpp with the binder
// (issue #30).

#include "opd/bind/print.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/bind/host_tensors.h"

namespace opd::bind {
namespace {

using test_util::filled;
using test_util::floats;

// ---- PyTorch's repr ---------------------------------------------------------------------------

TEST(EvalRepr, SmallTensorsAsPyTorchPrintsThem) {
  EXPECT_EQ(tensor_repr(floats({2, 3, 4, 2, 3, 4}, {2, 3})),
            "tensor([[2., 3., 4.],\n        [2., 3., 4.]])");
  EXPECT_EQ(tensor_repr(filled<int64_t>({1, 2}, {2})), "tensor([1, 2])");
  EXPECT_EQ(tensor_repr(filled<bool>({true, false}, {2})), "tensor([ True, False])");
  EXPECT_EQ(tensor_repr(filled<double>({1, 2}, {2})), "tensor([1., 2.], dtype=torch.float64)");
  EXPECT_EQ(tensor_repr(filled<int32_t>({-1, 20}, {2})), "tensor([-1, 20], dtype=torch.int32)");
  EXPECT_EQ(tensor_repr(floats({1.5f, 2.25f}, {2})), "tensor([1.5000, 2.2500])");
  EXPECT_EQ(tensor_repr(floats({-1.5f, 2}, {2})), "tensor([-1.5000,  2.0000])");
  EXPECT_EQ(tensor_repr(floats({1e-5f, 1}, {2})), "tensor([1.0000e-05, 1.0000e+00])");
  EXPECT_EQ(tensor_repr(floats({1, 1e9f}, {2})), "tensor([1.0000e+00, 1.0000e+09])");
  float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(tensor_repr(floats({nan, -inf, 1}, {3})), "tensor([nan, -inf, 1.])");
  EXPECT_EQ(tensor_repr(floats({0, 0}, {2})), "tensor([0., 0.])");
  EXPECT_EQ(tensor_repr(floats({3.5f}, {})), "tensor(3.5000)");
  EXPECT_EQ(tensor_repr(filled<int64_t>({3}, {})), "tensor(3)");
  EXPECT_EQ(tensor_repr(filled<std::complex<float>>({{1, 2}, {3, -1}}, {2})),
            "tensor([1.+2.j, 3.-1.j])");
}

TEST(EvalRepr, EmptyAndMetaTensorsShowTheirSize) {
  EXPECT_EQ(tensor_repr(floats({}, {0})), "tensor([])");
  EXPECT_EQ(tensor_repr(floats({}, {0, 3})), "tensor([], size=(0, 3))");
  EXPECT_EQ(tensor_repr(filled<int64_t>({}, {0})), "tensor([], dtype=torch.int64)");
  Device meta(DeviceType::Meta);
  EXPECT_EQ(tensor_repr(from_blob(nullptr, {2, 3}, kFloat, meta)),
            "tensor(..., device='meta', size=(2, 3))");
  EXPECT_EQ(tensor_repr(from_blob(nullptr, {4}, kLong, meta)),
            "tensor(..., device='meta', size=(4,), dtype=torch.int64)");
}

TEST(EvalRepr, LongTensorsWrapAndSummarize) {
  std::vector<float> range(2000);
  for (size_t i = 0; i < range.size(); ++i) range[i] = static_cast<float>(i);
  EXPECT_EQ(tensor_repr(floats(range, {2000})),
            "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
            "        1.9990e+03])");
  std::vector<int64_t> ints(1001);
  for (size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<int64_t>(i);
  EXPECT_EQ(tensor_repr(filled<int64_t>(ints, {1001})),
            "tensor([   0,    1,    2,  ...,  998,  999, 1000])");
  EXPECT_EQ(tensor_repr(floats(std::vector<float>(1600, 1), {40, 40})),
            "tensor([[1., 1., 1.,  ..., 1., 1., 1.],\n"
            "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
            "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
            "        ...,\n"
            "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
            "        [1., 1., 1.,  ..., 1., 1., 1.],\n"
            "        [1., 1., 1.,  ..., 1., 1., 1.]])");
  std::vector<float> halves(20);
  for (size_t i = 0; i < halves.size(); ++i) halves[i] = 0.5f + static_cast<float>(i);
  EXPECT_EQ(tensor_repr(floats(halves, {20})),
            "tensor([ 0.5000,  1.5000,  2.5000,  3.5000,  4.5000,  5.5000,  6.5000,  7.5000,\n"
            "         8.5000,  9.5000, 10.5000, 11.5000, 12.5000, 13.5000, 14.5000, 15.5000,\n"
            "        16.5000, 17.5000, 18.5000, 19.5000])");
  EXPECT_EQ(tensor_repr(filled<double>(std::vector<double>(12, 1.25), {3, 2, 2})),
            "tensor([[[1.2500, 1.2500],\n         [1.2500, 1.2500]],\n\n"
            "        [[1.2500, 1.2500],\n         [1.2500, 1.2500]],\n\n"
            "        [[1.2500, 1.2500],\n         [1.2500, 1.2500]]], dtype=torch.float64)");
}

TEST(EvalRepr, StridedViewsPrintInLogicalOrder) {
  Tensor t = floats({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor transposed = make_view(t, std::vector<int64_t>{3, 2}, std::vector<int64_t>{1, 3}, 0);
  EXPECT_EQ(tensor_repr(transposed), "tensor([[1., 4.],\n        [2., 5.],\n        [3., 6.]])");
  EXPECT_EQ(to_json(IValue(transposed)).dump(),
            R"({"dtype":"float32","shape":[3,2],"strides":[1,3],"device":"cpu",)"
            R"("data":[1.0,4.0,2.0,5.0,3.0,6.0]})");
}

}  // namespace
}  // namespace opd::bind
