// How opd/autograd.h reaches the autograd plugin (plugin_api/src/tensor_autograd.cpp):
// Function::apply finds autograd::_record_function as it comes and goes, also while other threads
// apply (label `concurrency`: runs under ThreadSanitizer in CI). The plugin itself is not loaded
// here; a stand-in operator of the same schema plays its part.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "error_text.h"
#include "opd/autograd.h"
#include "opd/dispatcher.h"
#include "opd/library.h"
#include "opd/tensor.h"
#include "stress_loop.h"

namespace opd {
namespace {

constexpr const char* kNotLoaded =
    "opd::autograd::Function::apply: the autograd plugin (libopd_autograd.so), to which "
    "recording custom autograd functions belongs, is not loaded (autograd::_record_function is "
    "not defined)";

// Returns its input: nothing to record, the inputs require no grad.
struct Identity : autograd::Function<Identity> {
  static Tensor forward(autograd::AutogradContext*, const Tensor& x) { return x; }
  static autograd::tensor_list backward(autograd::AutogradContext*, autograd::tensor_list g) {
    return g;
  }
};

// The plugin's operator, reduced to handing the outputs back.
void record_outputs(const OperatorHandle&, Stack* stack) {
  auto& r = *static_cast<autograd::detail::FunctionRecord*>(
      stack->back().to_capsule(autograd::detail::kFunctionRecordCapsule).get());
  stack->back() = IValue(std::move(r.outputs));
}

std::unique_ptr<Library> define_record_function() {
  auto lib = std::make_unique<Library>(Library::DEF, "autograd");
  lib->def("_record_function(Capsule record) -> Tensor[]", &record_outputs);
  return lib;
}

Tensor cpu_tensor() {
  static float data[2] = {1, 2};
  return from_blob(data, std::vector<int64_t>{2}, ScalarType::Float32);
}

TEST(TensorAutograd, ApplyFindsTheRecordOperatorAsItComesAndGoes) {
  Tensor x = cpu_tensor();
  EXPECT_EQ(test_util::error_text<Error>([&] { Identity::apply(x); }), kNotLoaded);
  for (int round = 0; round < 2; ++round) {
    {
      auto lib = define_record_function();
      EXPECT_TRUE(Identity::apply(x).is_same(x));
    }
    EXPECT_EQ(test_util::error_text<Error>([&] { Identity::apply(x); }), kNotLoaded);
  }
}

TEST(TensorAutograd, ApplyWhileTheRecordOperatorComesAndGoes) {
  std::atomic<bool> done{false};
  std::atomic<int64_t> recorded{0}, refused{0}, unexpected{0};
  auto applying_thread = [&] {
    Tensor x = cpu_tensor();
    while (!done.load(std::memory_order_acquire)) {
      try {
        if (Identity::apply(x).is_same(x)) {
          recorded.fetch_add(1, std::memory_order_relaxed);
        } else {
          unexpected.fetch_add(1, std::memory_order_relaxed);
        }
      } catch (const Error& e) {
        // Between the def and its kernel a call may also meet the operator without a kernel.
        const std::string what = e.msg();
        if (what == kNotLoaded || what.find("autograd::_record_function") != std::string::npos) {
          refused.fetch_add(1, std::memory_order_relaxed);
        } else {
          unexpected.fetch_add(1, std::memory_order_relaxed);
        }
      }
    }
  };
  std::thread t1(applying_thread), t2(applying_thread);
  test::run_until(
      2000, [&](int64_t) { auto lib = define_record_function(); },
      [&] { return recorded.load() > 0 && refused.load() > 0; });
  done.store(true, std::memory_order_release);
  t1.join();
  t2.join();
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_GT(recorded.load(), 0) << "no apply found the operator";
  EXPECT_GT(refused.load(), 0) << "no apply ran while the operator was gone";
  Dispatcher::singleton().check_invariants();
}

}  // namespace
}  // namespace opd
