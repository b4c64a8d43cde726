// opd::cpu_fallback (Note [CPU fallback]) on a real second device: the acme_device fixture
// (tests/vendor_device/acme_device.cpp), a PrivateUse1 backend named "acme" with host memory of
// its own, native add.Tensor and mul.Tensor, and the fallback for the rest.

#include "opd/cpu_fallback.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "error_text.h"
#include "opd/dispatcher.h"
#include "opd/ops.h"
#include "opd/plugin_manager.h"
#include "opd/warning.h"
#include "plugins/fixtures.h"

namespace opd {
namespace {

using fixtures::is_mapped;
using fixtures::manifest;
using fixtures::plugin_dir;
using fixtures::wait_for_state;
using test_util::error_text;

const Device kCpu(DeviceType::CPU);
const Device kAcme(DeviceType::PrivateUse1, 0);

// The warnings of the calls under test.
std::mutex warnings_mutex;
std::vector<std::string> warnings;
void record_warning(std::string_view message) {
  std::lock_guard<std::mutex> lock(warnings_mutex);
  warnings.emplace_back(message);
}
size_t count_warnings(std::string_view needle) {
  std::lock_guard<std::mutex> lock(warnings_mutex);
  size_t n = 0;
  for (const std::string& w : warnings) n += w.find(needle) != std::string::npos;
  return n;
}

std::string fallback_warning(std::string_view op) {
  return "The operator '" + std::string(op) +
         "' is not currently supported on the acme backend and will fall back to run on the "
         "CPU. This may have performance implications.";
}

int64_t counter(const char* name) {
  return find_operator_or_throw(std::string("acme_device::") + name).call_as<int64_t>();
}

Tensor acme(const Tensor& cpu) { return cpu.to(kAcme, cpu.scalar_type()); }
Tensor cpu(const Tensor& t) { return t.to(kCpu, t.scalar_type()); }
// 0, 1, ... as float32, in `sizes`.
Tensor iota(std::vector<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return arange(0, n, 1, TensorOptions().dtype(ScalarType::Float32)).reshape(sizes);
}

class CpuFallback : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    plugins().load_default();
    previous_handler_ = set_warning_handler(&record_warning);
  }
  static void TearDownTestSuite() { set_warning_handler(previous_handler_); }
  void SetUp() override {
    bool loaded = false;
    try {
      loaded = plugins().status("acme_device").state == PluginState::Loaded;
    } catch (const Error&) {  // not known until first loaded
    }
    if (!loaded) {
      ASSERT_EQ(plugins().load(manifest("acme_device")).state, PluginState::Loaded);
    }
  }
  static WarningHandler previous_handler_;
};
WarningHandler CpuFallback::previous_handler_ = nullptr;

TEST_F(CpuFallback, TensorsMoveToTheDeviceAndBack) {
  EXPECT_EQ(privateuse1_backend_name(), "acme");
  const int64_t before = counter("allocations");
  Tensor x = acme(iota({2, 3}));
  EXPECT_EQ(x.device(), kAcme);
  EXPECT_EQ(x.device().str(), "acme:0");
  EXPECT_EQ(counter("allocations"), before + 1);
  EXPECT_TRUE(equal(cpu(x), iota({2, 3})));
}

TEST_F(CpuFallback, ANativeKernelWinsOverTheFallback) {
  Tensor x = acme(iota({2, 3}));
  const int64_t calls = counter("native_calls");
  Tensor y = x + x;
  Tensor z = mul(x, x);
  EXPECT_EQ(counter("native_calls"), calls + 2);
  EXPECT_EQ(y.device(), kAcme);
  EXPECT_TRUE(equal(cpu(y), iota({2, 3}) * 2));
  EXPECT_TRUE(equal(cpu(z), iota({2, 3}) * iota({2, 3})));
  EXPECT_EQ(count_warnings("'aten::add.Tensor'"), 0u);
  EXPECT_EQ(count_warnings("'aten::mul.Tensor'"), 0u);
}

// Operators acme has no kernel of (acme_device.cpp lists its native ones: not sum, tanh, bmm).
TEST_F(CpuFallback, OperatorsWithoutANativeKernelRunOnTheCpu) {
  Tensor a = iota({2, 3}) - 2;
  Tensor b = iota({3, 2});
  const int64_t calls = counter("native_calls");
  Tensor s = sum(acme(a));
  EXPECT_EQ(s.device(), kAcme);
  EXPECT_TRUE(equal(cpu(s), sum(a)));
  Tensor r = tanh(acme(a));
  EXPECT_EQ(r.device(), kAcme);
  EXPECT_TRUE(equal(cpu(r), tanh(a)));
  Tensor m = bmm(acme(a.unsqueeze(0)), acme(b.unsqueeze(0)));
  EXPECT_EQ(m.device(), kAcme);
  EXPECT_TRUE(equal(cpu(m), bmm(a.unsqueeze(0), b.unsqueeze(0))));
  EXPECT_EQ(counter("native_calls"), calls);
  // Tensor[]: each element moves.
  Tensor c = cat({acme(a), acme(b.t())}, 0);
  EXPECT_EQ(c.device(), kAcme);
  EXPECT_TRUE(equal(cpu(c), cat({a, b.t()}, 0)));
  // A Scalar result (item): nothing to move back.
  EXPECT_EQ(s.item<double>(), 3.0);
}

TEST_F(CpuFallback, OptionalTensorListsAndDeviceArgumentsMove) {
  // Tensor?[]: index and index_put_ with acme indices (and a None).
  Tensor a = iota({3, 2});
  Tensor rows = arange(2, -1, -1, TensorOptions().dtype(ScalarType::Int64));
  Tensor picked = index(acme(a), {acme(rows)});
  EXPECT_EQ(picked.device(), kAcme);
  EXPECT_TRUE(equal(cpu(picked), index(a, {rows})));
  Tensor x = acme(a);
  const Tensor& same = x.index_put_({std::nullopt, acme(rows.slice(0, 1, 3))}, acme(zeros({3, 2})));
  EXPECT_TRUE(same.is_same(x));
  EXPECT_TRUE(equal(cpu(x), zeros({3, 2})));
  // A factory with device=acme runs on the CPU and moves its result to the Device argument's.
  Tensor r = arange(0, 4, 1, TensorOptions().dtype(ScalarType::Float32).device(kAcme));
  EXPECT_EQ(r.device(), kAcme);
  EXPECT_TRUE(equal(cpu(r), iota({4})));
}

TEST_F(CpuFallback, GradientsFlowOnTheDevice) {
  Tensor x = acme(iota({2, 3}) - 2).requires_grad_(true);
  relu(x * x).sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().device(), kAcme);
  EXPECT_TRUE(equal(cpu(x.grad()), (iota({2, 3}) - 2) * 2));
}

TEST_F(CpuFallback, WrittenArgumentsAreWrittenBackAndReturned) {
  Tensor a = iota({2, 3});
  Tensor x = acme(a);
  const uint32_t version = x.version();
  const Tensor& same = x.add_(acme(a), 2);
  EXPECT_TRUE(same.is_same(x));
  EXPECT_EQ(x.device(), kAcme);
  EXPECT_TRUE(equal(cpu(x), a * 3));
  EXPECT_GT(x.version(), version);

  // out=: the out tensor is resized, written and returned.
  Tensor out = acme(iota({0}));
  Tensor& result = add_out(out, acme(a), acme(a), 1);
  EXPECT_TRUE(result.is_same(out));
  EXPECT_EQ(out.sizes(), a.sizes());
  EXPECT_EQ(out.device(), kAcme);
  EXPECT_TRUE(equal(cpu(out), a * 2));
}

// 1.13's native_batch_norm updates running_mean and running_var in place without marking them
// (a!) (Note [Unannotated writes]): the fallback writes them back too. acme runs the operator
// natively, so the fallback is called here as the boxed kernel it is.
TEST_F(CpuFallback, BatchNormRunningStatisticsAreWrittenBack) {
  const TensorOptions f32 = TensorOptions().dtype(ScalarType::Float32);
  Tensor mean = acme(zeros({2}, f32));
  Tensor var = acme(ones({2}, f32));
  OperatorHandle op = Dispatcher::singleton().find_schema_or_throw("aten::native_batch_norm", "");
  Stack stack{IValue(acme(iota({4, 2}))),
              IValue(),
              IValue(),
              IValue(mean),
              IValue(var),
              IValue(true),
              IValue(0.5),
              IValue(1e-5)};
  cpu_fallback_quiet(op, &stack);
  ASSERT_EQ(stack.size(), 3u);
  Tensor expected_mean = zeros({2}, f32);
  Tensor expected_var = ones({2}, f32);
  Tensor expected_out = std::get<0>(native_batch_norm(
      iota({4, 2}), std::nullopt, std::nullopt, expected_mean, expected_var, true, 0.5, 1e-5));
  EXPECT_FALSE(equal(expected_mean, zeros({2}, f32)));  // training moved them
  EXPECT_EQ(mean.device(), kAcme);
  EXPECT_TRUE(allclose(cpu(mean), expected_mean));
  EXPECT_TRUE(allclose(cpu(var), expected_var));
  EXPECT_EQ(stack[0].to_tensor().device(), kAcme);
  EXPECT_TRUE(allclose(cpu(stack[0].to_tensor()), expected_out));
}

TEST_F(CpuFallback, ViewsOfTheDeviceStayViews) {
  // View operators are CompositeExplicitAutograd: they run on acme itself, without the fallback.
  Tensor x = acme(iota({2, 3}));
  Tensor t = x.t();
  EXPECT_EQ(t.device(), kAcme);
  EXPECT_EQ(t.data_ptr(), x.data_ptr());
  EXPECT_TRUE(equal(cpu(t), iota({2, 3}).t()));
  // A view of an in-place write (transpose_ is an inplace view) returns the argument.
  Tensor y = acme(iota({2, 3}));
  const Tensor& y2 = y.transpose_(0, 1);
  EXPECT_TRUE(y2.is_same(y));
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{3, 2}));
}

TEST_F(CpuFallback, AViewResultThroughTheFallbackIsACopyWithAWarning) {
  Tensor x = acme(iota({2, 3}));
  OperatorHandle op = find_operator_or_throw("acme_device::alias_of");
  Tensor v = op.call_as<Tensor>(x);
  EXPECT_EQ(v.device(), kAcme);
  EXPECT_NE(v.data_ptr(), x.data_ptr());
  EXPECT_TRUE(equal(cpu(v), iota({2, 3})));
  EXPECT_GE(count_warnings("The operator acme_device::alias_of appears to be a view operator, "
                           "but it has no implementation for the backend \"acme:0\""),
            1u);

  // error_on_views refuses it.
  Stack stack{IValue(x)};
  try {
    cpu_fallback_with(op, &stack, CpuFallbackOptions{.warn = false, .error_on_views = true});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.msg().find("appears to be a view operator"), std::string::npos) << e.msg();
  }
}

// acme has two devices: its native kernels and the fallback refuse tensors of both in one call,
// as PyTorch's device kernels do; a CPU scalar may join, a CPU tensor may not join a native
// kernel.
TEST_F(CpuFallback, TensorsOnTwoDevicesAreRefused) {
  Tensor a = acme(iota({2}));
  Tensor b = iota({2}).to(Device(DeviceType::PrivateUse1, 1), ScalarType::Float32);
  ASSERT_EQ(b.device().str(), "acme:1");
  const std::string two =
      "Expected all tensors to be on the same device, but found at least two devices, acme:0 "
      "and acme:1!";
  EXPECT_EQ(error_text<Error>([&] { (void)add(a, b); }), two);      // native
  EXPECT_EQ(error_text<Error>([&] { (void)maximum(a, b); }), two);  // the fallback
  EXPECT_EQ(error_text<Error>([&] { (void)add(a, iota({2})); }),
            "Expected all tensors to be on the same device, but found at least two devices, "
            "acme:0 and cpu!");
  Tensor scaled = mul(a, scalar_tensor(2.0, TensorOptions().dtype(ScalarType::Float32)));
  EXPECT_EQ(scaled.device(), kAcme);
  EXPECT_TRUE(equal(cpu(scaled), iota({2}) * 2));
}

TEST_F(CpuFallback, WarnsOncePerOperator) {
  Tensor x = acme(iota({2, 3}));
  (void)neg(x);
  (void)neg(x);
  (void)exp(x);
  EXPECT_EQ(count_warnings(fallback_warning("aten::neg")), 1u);
  EXPECT_EQ(count_warnings(fallback_warning("aten::exp")), 1u);

  // The quiet fallback, called directly, says nothing.
  Stack stack{IValue(x)};
  cpu_fallback_quiet(find_operator_or_throw("aten::abs"), &stack);
  ASSERT_EQ(stack.size(), 1u);
  EXPECT_EQ(stack[0].to_tensor().device(), kAcme);
  EXPECT_EQ(count_warnings("'aten::abs'"), 0u);
}

TEST_F(CpuFallback, AnOperatorWithoutACpuKernelNamesTheOperatorAndTheDevice) {
  Tensor x = acme(iota({2}));
  OperatorHandle op = find_operator_or_throw("acme_device::no_cpu");
  try {
    (void)op.call_as<Tensor>(x);
    ADD_FAILURE() << "no error";
  } catch (const NotImplementedError& e) {
    EXPECT_NE(e.msg().find("The operator 'acme_device::no_cpu' is not currently supported on "
                           "the acme backend, and the CPU fallback cannot run it"),
              std::string::npos)
        << e.msg();
  }
}

TEST_F(CpuFallback, UnloadingWhileTensorsLiveKeepsThePluginMapped) {
  const std::filesystem::path library = plugin_dir() / "acme_device";
  const int64_t live = counter("live_blocks");
  {
    Tensor x = acme(iota({4}));
    Tensor s = sum(x);
    EXPECT_EQ(counter("live_blocks"), live + 2);
    PluginStatus st = plugins().unload("acme_device");
    EXPECT_EQ(st.state, PluginState::Unloading) << st.reason;
    EXPECT_TRUE(is_mapped(library));
    // The tensors still hold their memory; freeing it runs the plugin's deleter.
  }
  EXPECT_EQ(wait_for_state("acme_device", PluginState::Unloaded).state, PluginState::Unloaded);
  EXPECT_FALSE(is_mapped(library));
  // Loading it again names the backend again (the same name) and works.
  ASSERT_EQ(plugins().load(manifest("acme_device")).state, PluginState::Loaded);
  EXPECT_TRUE(equal(cpu(sum(acme(iota({4})))), sum(iota({4}))));
}

}  // namespace
}  // namespace opd
