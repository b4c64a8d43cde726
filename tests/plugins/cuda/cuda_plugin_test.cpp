// The CUDA plugin as a user meets it (issue #6). Without a device it reports itself unavailable
// with the driver's words and everything else goes on; those tests run here. With a device the
// rest run: copies in every direction, CPU scalars, the allocator's statistics, the device
// guard, random numbers equal to the CPU's, autograd, and unloading while device memory lives.
// Each device test skips with the reason the plugin gave when there is no device.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "opd/autograd.h"
#include "opd/cuda.h"
#include "opd/device_guard.h"
#include "opd/generator.h"
#include "opd/ops.h"
#include "opd/plugin_manager.h"
#include "opd/tensor_operators.h"
#include "plugins/fixtures.h"
#include "plugins/ops/op_test_util.h"

namespace opd {
namespace {

using test::error_of;
using test::tensor;
using test::tensors_equal;
using test::values;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const char* const kLibrary = OPD_CUDA_PLUGIN_LIBRARY;

std::string why_no_device() {
  const PluginStatus s = plugins().status("cuda");
  return std::string("no CUDA device: the cuda plugin is ") + to_string(s.state) + ": " + s.reason;
}

#define REQUIRE_CUDA_DEVICE()                                   \
  do {                                                          \
    if (!cuda::is_available()) GTEST_SKIP() << why_no_device(); \
  } while (0)

class CudaPlugin : public ::testing::Test {
 protected:
  void SetUp() override { test::load_default_plugins(); }
  static Device gpu() { return Device(kCUDA, 0); }
};

// ---- Without a device ------------------------------------------------------------------------

TEST_F(CudaPlugin, WithoutADeviceItIsUnavailableWithTheDriversReason) {
  if (cuda::is_available()) GTEST_SKIP() << "a CUDA device is present: the plugin is loaded";
  const PluginStatus s = plugins().status("cuda");
  EXPECT_EQ(s.state, PluginState::Unavailable);
  EXPECT_THAT(s.reason, StartsWith("cudaGetDeviceCount"));
  EXPECT_EQ(s.registrations, 0u);
  // Nothing of it stays in the process.
  EXPECT_FALSE(fixtures::is_mapped(kLibrary));
}

TEST_F(CudaPlugin, WithoutADeviceTheHostApiSaysWhy) {
  if (cuda::is_available()) GTEST_SKIP() << "a CUDA device is present: the plugin is loaded";
  EXPECT_EQ(cuda::device_count(), 0);
  const std::string reason = plugins().status("cuda").reason;
  EXPECT_EQ(error_of([] { cuda::memory_stats(); }),
            "CUDA is not available (the cuda plugin is unavailable: " + reason + ")");
  EXPECT_THAT(error_of([] { cuda::empty_cache(); }), StartsWith("CUDA is not available"));
}

TEST_F(CudaPlugin, WithoutADeviceCudaTensorsAreAMissingKernelAndCpuGoesOn) {
  if (cuda::is_available()) GTEST_SKIP() << "a CUDA device is present: the plugin is loaded";
  EXPECT_THAT(error_of([] { empty({2}, TensorOptions().device(Device(kCUDA))); }),
              StartsWith("Could not run 'aten::empty.memory_format' with arguments from the "
                         "'CUDA' backend."));
  EXPECT_THAT(error_of([] { ones({2}).to(Device(kCUDA), kFloat); }),
              HasSubstr("from the 'CUDA' backend"));
  EXPECT_EQ(add(ones({2}), ones({2})).sum().item<double>(), 4.0);
}

TEST_F(CudaPlugin, WithoutADeviceNothingIsPinnedAndPinningSaysWhy) {
  if (cuda::is_available()) GTEST_SKIP() << "a CUDA device is present: the plugin is loaded";
  const std::string why =
      "cannot pin memory for cuda: no loaded plugin allocates pinned memory for that device type "
      "(is its plugin loaded and available? see `opd plugins`)";
  Tensor t = ones({2});
  EXPECT_FALSE(t.is_pinned());
  EXPECT_FALSE(t.is_pinned(Device(kCUDA)));
  EXPECT_EQ(error_of([&] { t.pin_memory(); }), why);
  EXPECT_EQ(error_of([] { empty({2}, TensorOptions().pinned_memory(true)); }), why);
  EXPECT_EQ(error_of([] { zeros({2}, TensorOptions().pinned_memory(true)); }), why);
  // A device-to-host copy asked not to block needs no pinned memory without a device.
  EXPECT_FALSE(t.to(Device(kCPU), kDouble, /*non_blocking=*/true).is_pinned());
}

// Whether or not a device is present.
TEST_F(CudaPlugin, OnlyDenseCpuTensorsCanBePinned) {
  Tensor m = empty({2}, TensorOptions().device(kMeta));
  EXPECT_FALSE(m.is_pinned());
  EXPECT_EQ(error_of([&] { m.pin_memory(); }),
            "cannot pin 'torch.meta.FloatTensor' only dense CPU tensors can be pinned");
  EXPECT_EQ(error_of([] { empty({2}, TensorOptions().device(kMeta).pinned_memory(true)); }),
            "empty: Only dense CPU tensors can be pinned (pin_memory=True on the meta plugin)");
}

// ---- With a device ---------------------------------------------------------------------------

TEST_F(CudaPlugin, TensorsLiveOnAnIndexedDevice) {
  REQUIRE_CUDA_DEVICE();
  EXPECT_GE(cuda::device_count(), 1);
  Tensor t = zeros({2, 3}, TensorOptions().device(Device(kCUDA)));
  EXPECT_EQ(t.device(), gpu());
  EXPECT_TRUE(t.is_cuda());
  const int n = cuda::device_count();
  EXPECT_THAT(
      error_of([n] { empty({1}, TensorOptions().device(Device(kCUDA, static_cast<int8_t>(n)))); }),
      StartsWith("CUDA error: invalid device ordinal"));
  cuda::synchronize();
}

// The plugin registers opd::cpu_fallback (Note [CPU fallback]): operators it has no kernel of
// (cumsum, erf_, topk) run on the CPU and come back to the GPU, in-place ones written back.
TEST_F(CudaPlugin, OperatorsWithoutACudaKernelFallBackToTheCpu) {
  REQUIRE_CUDA_DEVICE();
  Tensor cpu = tensor({0, 1, 2, 3, 4, 5}, {2, 3});
  Tensor g = cpu.to(gpu(), kFloat);
  Tensor sums = cumsum(g, 1);
  EXPECT_EQ(sums.device(), gpu());
  EXPECT_EQ(values(sums), (std::vector<double>{0, 1, 3, 3, 7, 12}));
  Tensor h = g.clone();
  const Tensor& same = h.erf_();
  EXPECT_TRUE(same.is_same(h));
  EXPECT_EQ(h.device(), gpu());
  EXPECT_TRUE(allclose(h.to(Device(kCPU), kFloat), erf(cpu)));
  auto [top, index] = topk(g, 2);
  EXPECT_EQ(top.device(), gpu());
  EXPECT_EQ(values(top), (std::vector<double>{2, 1, 5, 4}));
  EXPECT_EQ(values(index), (std::vector<double>{2, 1, 2, 1}));
  cuda::synchronize();
}

// Its device guard (opd/device_guard.h): "cuda" without an index is the thread's current device.
TEST_F(CudaPlugin, ADeviceWithoutIndexIsTheCurrentOne) {
  REQUIRE_CUDA_DEVICE();
  EXPECT_EQ(ensure_has_index(Device(kCUDA)), gpu());
  Tensor g = ones({2}).to(gpu(), kFloat);
  EXPECT_TRUE(g.to(Device(kCUDA), kFloat).is_same(g));
  const int n = cuda::device_count();
  EXPECT_THAT(error_of([n] { DeviceGuard guard(Device(kCUDA, static_cast<int8_t>(n))); }),
              StartsWith("CUDA error: invalid device ordinal"));
}

TEST_F(CudaPlugin, CopiesGoBothWaysForEveryDtype) {
  REQUIRE_CUDA_DEVICE();
  const std::vector<double> v = {0, 1, 2, 3, 4, 5};
  for (ScalarType dtype : {kBool, kByte, kChar, kShort, kInt, kLong, kHalf, kBFloat16, kFloat,
                           kDouble, kComplexFloat, kComplexDouble}) {
    Tensor cpu = tensor(v, {2, 3}, dtype);
    Tensor gpu_t = cpu.to(gpu(), dtype);
    EXPECT_TRUE(gpu_t.is_cuda());
    EXPECT_TRUE(tensors_equal(gpu_t.to(Device(kCPU), dtype), cpu)) << to_string(dtype);
  }
}

TEST_F(CudaPlugin, CopiesHandleStridesBroadcastingAndConversion) {
  REQUIRE_CUDA_DEVICE();
  Tensor cpu = tensor({0, 1, 2, 3, 4, 5}, {2, 3});
  // A transposed source, into a transposed destination, on both sides.
  Tensor g = cpu.t().to(gpu(), kFloat);
  EXPECT_EQ(values(g), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  Tensor back = empty({3, 2}).t();
  back.copy_(g.t());
  EXPECT_EQ(values(back), values(cpu));
  // Broadcast from the host, converting Long to Double on the way.
  Tensor dst = zeros({2, 3}, TensorOptions().dtype(kDouble).device(gpu()));
  dst.copy_(tensor({7, 8, 9}, kLong));
  EXPECT_EQ(values(dst), (std::vector<double>{7, 8, 9, 7, 8, 9}));
  // Within the device, into a column.
  Tensor col = zeros({3, 2}, TensorOptions().device(gpu()));
  col.select(1, 1).copy_(tensor({1, 2, 3}, kFloat, gpu()));
  EXPECT_EQ(values(col), (std::vector<double>{0, 1, 0, 2, 0, 3}));
}

TEST_F(CudaPlugin, ACpuScalarJoinsCudaTensorsButNotACpuVector) {
  REQUIRE_CUDA_DEVICE();
  Tensor x = tensor({1, 2, 3}, kFloat, gpu());
  EXPECT_EQ(values(add(x, scalar_tensor(10))), (std::vector<double>{11, 12, 13}));
  EXPECT_EQ(values(x * 2), (std::vector<double>{2, 4, 6}));
  // Passed by value to the kernel, in either operand position, of any dtype, with strides.
  // ({7, 9, 11}: stride 2)
  EXPECT_EQ(values(where(tensor({1, 0, 1}, kBool, gpu()), scalar_tensor(-1, kDouble).to(kFloat),
                         tensor({7, 8, 9, 10, 11, 12}, {3, 2}, kFloat, gpu()).select(1, 0))),
            (std::vector<double>{-1, 9, -1}));
  EXPECT_EQ(values(sub(scalar_tensor(1, kLong), tensor({1, 2, 3}, kLong, gpu()))),
            (std::vector<double>{0, -1, -2}));
  EXPECT_EQ(values(add(tensor({1, 2}, kDouble, gpu()), scalar_tensor(0.5, kDouble))),
            (std::vector<double>{1.5, 2.5}));
  EXPECT_EQ(error_of([&] {
              add(x, tensor({1, 1, 1}));
            }),
            "Expected all tensors to be on the same device, but found at least two devices, "
            "cuda:0 and cpu!");
}

TEST_F(CudaPlugin, HalfAndBFloat16ComputeInFloatWhereTheCpuRefuses) {
  REQUIRE_CUDA_DEVICE();
  for (ScalarType dtype : {kHalf, kBFloat16}) {
    Tensor x = tensor({1, 2.5, -3}, dtype, gpu());
    EXPECT_TRUE(tensors_equal(mul(add(x, x), x), tensor({2, 12.5, 18}, dtype))) << to_string(dtype);
    EXPECT_TRUE(tensors_equal(relu(x), tensor({1, 2.5, 0}, dtype))) << to_string(dtype);
    EXPECT_TRUE(tensors_equal(lt(x, scalar_tensor(2)), tensor({1, 0, 1}, kBool)));
    Tensor m = tensor({1, 2, 3, 4}, {2, 2}, dtype, gpu());
    EXPECT_TRUE(tensors_equal(mm(m, m), tensor({7, 10, 15, 22}, {2, 2}, dtype)));
  }
  // The CPU computes Half too since issue 31 (in float, rounded once, as PyTorch's CPU kernel).
  EXPECT_TRUE(tensors_equal(add(ones({1}, kHalf), ones({1}, kHalf)), tensor({2}, kHalf)));
}

TEST_F(CudaPlugin, RandomNumbersAreTheCpusForTheSameSeed) {
  REQUIRE_CUDA_DEVICE();
  for (ScalarType dtype : {kFloat, kDouble, kHalf}) {
    manual_seed(7);
    Tensor on_gpu = randn({1000}, TensorOptions().dtype(dtype).device(gpu()));
    manual_seed(7);
    Tensor on_cpu = randn({1000}, TensorOptions().dtype(dtype));
    // The same Philox draws; CUDA's double log and cos may differ from glibc's in the last bit.
    EXPECT_TRUE(tensors_equal(on_gpu, on_cpu, dtype == kDouble ? 1e-14 : 0)) << to_string(dtype);
  }
}

TEST_F(CudaPlugin, TheAllocatorReusesFreedBlocksAndCountsThem) {
  REQUIRE_CUDA_DEVICE();
  cuda::empty_cache();
  const cuda::MemoryStats before = cuda::memory_stats();
  {
    Tensor a = empty({1 << 18}, TensorOptions().device(gpu()));  // 1 MiB
    const cuda::MemoryStats during = cuda::memory_stats();
    EXPECT_EQ(during.allocated_bytes - before.allocated_bytes, 1 << 20);
    EXPECT_GE(during.reserved_bytes - before.reserved_bytes, 1 << 20);
    EXPECT_EQ(during.num_device_allocs - before.num_device_allocs, 1);
  }
  const cuda::MemoryStats freed = cuda::memory_stats();
  EXPECT_EQ(freed.allocated_bytes, before.allocated_bytes);
  EXPECT_GE(freed.peak_allocated_bytes, before.allocated_bytes + (1 << 20));
  {
    Tensor b = empty({1 << 18}, TensorOptions().device(gpu()));
    EXPECT_EQ(cuda::memory_stats().num_device_allocs, freed.num_device_allocs);  // reused
  }
  cuda::empty_cache();
  const cuda::MemoryStats emptied = cuda::memory_stats();
  EXPECT_EQ(emptied.reserved_bytes, before.reserved_bytes);
  EXPECT_GT(emptied.num_device_frees, before.num_device_frees);
}

TEST_F(CudaPlugin, ReductionsAndMatrixProductsMatchTheCpu) {
  REQUIRE_CUDA_DEVICE();
  manual_seed(3);
  Tensor a = randn({257, 129}, TensorOptions().dtype(kDouble));
  Tensor b = randn({129, 65}, TensorOptions().dtype(kDouble));
  Tensor ga = a.to(gpu(), kDouble), gb = b.to(gpu(), kDouble);
  EXPECT_TRUE(tensors_equal(mm(ga, gb), mm(a, b), 1e-10));
  EXPECT_TRUE(tensors_equal(sum(ga), sum(a), 1e-10));
  EXPECT_TRUE(tensors_equal(sum(ga, {1}, false), sum(a, {1}, false), 1e-10));
  EXPECT_TRUE(tensors_equal(amax(ga, {0}, true), amax(a, {0}, true), 0));
  EXPECT_TRUE(tensors_equal(argmax(ga, 1, false), argmax(a, 1, false), 0));
  EXPECT_TRUE(tensors_equal(_log_softmax(ga, 1, false), _log_softmax(a, 1, false), 1e-10));
}

TEST_F(CudaPlugin, AutogradGivesTheCpusGradients) {
  REQUIRE_CUDA_DEVICE();
  manual_seed(5);
  Tensor x = randn({8, 4}, TensorOptions().dtype(kDouble));
  Tensor w = randn({3, 4}, TensorOptions().dtype(kDouble));
  Tensor target = tensor({0, 1, 2, 1, 0, 2, 1, 0}, kLong);
  auto grad_on = [&](Device d) {
    Tensor wd = w.to(d, kDouble).detach().requires_grad_(true);
    Tensor loss = cross_entropy_loss(relu(linear(x.to(d, kDouble), wd)), target.to(d, kLong));
    loss.backward();
    return wd.grad();
  };
  EXPECT_TRUE(tensors_equal(grad_on(gpu()), grad_on(Device(kCPU)), 1e-10));
}

TEST_F(CudaPlugin, PinMemoryCopiesIntoPinnedMemoryKeepingDenseStrides) {
  REQUIRE_CUDA_DEVICE();
  Tensor t = tensor({0, 1, 2, 3, 4, 5}, {2, 3}).t();
  EXPECT_FALSE(t.is_pinned());
  Tensor p = t.pin_memory();
  EXPECT_TRUE(p.is_cpu());
  EXPECT_TRUE(p.is_pinned());
  EXPECT_FALSE(p.storage().is_same(t.storage()));
  EXPECT_EQ(p.strides().vec(), t.strides().vec());
  EXPECT_TRUE(tensors_equal(p, t));
  EXPECT_TRUE(p.pin_memory().is_same(p)) << "pinned already";
  EXPECT_TRUE(p.select(1, 1).is_pinned()) << "a view of pinned memory is pinned";
  // An expanded tensor overlaps itself: its pinned copy is contiguous.
  Tensor e = tensor({7, 8}, {2, 1}).expand({2, 3});
  Tensor pe = e.pin_memory();
  EXPECT_EQ(pe.strides().vec(), (std::vector<int64_t>{3, 1}));
  EXPECT_TRUE(tensors_equal(pe, e));
  // Factories pin on request.
  EXPECT_TRUE(empty({4}, TensorOptions().pinned_memory(true)).is_pinned());
  Tensor z = zeros({3}, TensorOptions().pinned_memory(true));
  EXPECT_TRUE(z.is_pinned());
  EXPECT_EQ(values(z), (std::vector<double>{0, 0, 0}));
  // Gradients flow through pinning (_pin_memory's derivative is the identity).
  Tensor leaf = tensor({1, 2, 3}, kDouble).requires_grad_(true);
  Tensor pinned_leaf = leaf.pin_memory();
  EXPECT_TRUE(pinned_leaf.is_pinned());
  pinned_leaf.sum().backward();
  EXPECT_EQ(values(leaf.grad()), (std::vector<double>{1, 1, 1}));
  // Device memory is not pinned host memory.
  Tensor g = ones({2}, TensorOptions().device(gpu()));
  EXPECT_FALSE(g.is_pinned());
  EXPECT_EQ(error_of([&] { g.pin_memory(); }),
            "cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors can be pinned");
  EXPECT_THAT(
      error_of([] { empty({2}, TensorOptions().device(Device(kCUDA)).pinned_memory(true)); }),
      StartsWith("empty: Only dense CPU tensors can be pinned"));
}

TEST_F(CudaPlugin, NonBlockingCopiesThroughPinnedMemoryArriveIntact) {
  REQUIRE_CUDA_DEVICE();
  constexpr int64_t n = int64_t{1} << 22;  // 16 MiB: a copy that takes a while
  Tensor expected = arange(0, n, 1, TensorOptions().dtype(kFloat));
  Tensor p = expected.pin_memory();
  Tensor g = p.to(gpu(), kFloat, /*non_blocking=*/true);
  // Device to host without blocking lands in pinned memory (PyTorch's pin_out).
  Tensor back = g.to(Device(kCPU), kFloat, /*non_blocking=*/true);
  EXPECT_TRUE(back.is_pinned());
  cuda::synchronize();
  EXPECT_TRUE(tensors_equal(back, expected, 0));
  // copy_ into a pinned destination, and from a pinned view with an offset.
  Tensor dst = empty({n}, TensorOptions().pinned_memory(true));
  dst.copy_(g, /*non_blocking=*/true);
  Tensor tail = empty({n - 1}, TensorOptions().device(gpu()));
  tail.copy_(p.slice(0, 1, n), /*non_blocking=*/true);
  cuda::synchronize();
  EXPECT_TRUE(tensors_equal(dst, expected, 0));
  EXPECT_TRUE(tensors_equal(tail.to(Device(kCPU), kFloat), expected.slice(0, 1, n), 0));
}

TEST_F(CudaPlugin, APinnedBlockIsNotReusedWhileACopyFromItIsQueued) {
  REQUIRE_CUDA_DEVICE();
  constexpr int64_t n = int64_t{1} << 24;  // 64 MiB
  Tensor g = empty({n}, TensorOptions().device(gpu()));
  {
    Tensor source = full({n}, 1.0, TensorOptions().pinned_memory(true));
    g.copy_(source, /*non_blocking=*/true);
  }  // freed while the copy may still be running
  // Had the block come back here, this fill would race with the copy above.
  Tensor next = empty({n}, TensorOptions().pinned_memory(true));
  next.fill_(2.0);
  cuda::synchronize();
  EXPECT_EQ(g.sum().item<double>(), static_cast<double>(n));
}

TEST_F(CudaPlugin, ElementwiseKernelsTakeUpTo25DimsThatDoNotMerge) {
  REQUIRE_CUDA_DEVICE();
  // Strides 1, 0, 1, 0, ...: no two neighbouring dims merge.
  auto alternating = [](int nd, Device d) {
    std::vector<int64_t> sizes(nd, 2), strides(nd);
    for (int i = 0; i < nd; ++i) strides[i] = i % 2 == 0 ? 1 : 0;
    return arange(0, 16, 1, TensorOptions().dtype(kFloat).device(d)).as_strided(sizes, strides);
  };
  Tensor on_gpu = alternating(20, gpu()), on_cpu = alternating(20, Device(kCPU));
  EXPECT_TRUE(tensors_equal(add(on_gpu, on_gpu), add(on_cpu, on_cpu), 0));
  Tensor too_many = alternating(26, gpu());
  EXPECT_EQ(error_of([&] { add(too_many, too_many); }),
            "add: CUDA elementwise kernels take at most 25 dims after merging, got 26");
}

// Last: it unloads the plugin while device memory is alive, then loads it again.
TEST_F(CudaPlugin, DeviceMemoryKeepsThePluginMappedUntilItIsFreed) {
  REQUIRE_CUDA_DEVICE();
  {
    Tensor t = ones({16}, TensorOptions().device(gpu()));
    EXPECT_EQ(plugins().unload("cuda").state, PluginState::Unloading);
    EXPECT_TRUE(fixtures::is_mapped(kLibrary));
    EXPECT_FALSE(cuda::is_available());
  }
  EXPECT_EQ(fixtures::wait_for_state("cuda", PluginState::Unloaded).state, PluginState::Unloaded);
  EXPECT_FALSE(fixtures::is_mapped(kLibrary));
  ASSERT_EQ(plugins().load("cuda").state, PluginState::Loaded);
  EXPECT_EQ(ones({4}, TensorOptions().device(gpu())).sum().item<double>(), 4.0);
}

}  // namespace
}  // namespace opd
