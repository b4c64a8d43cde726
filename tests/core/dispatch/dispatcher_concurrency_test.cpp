// Registering, overriding and deregistering while other threads dispatch. Runs under
// ThreadSanitizer in CI (label `concurrency`).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/function_schema.h"
#include "opd/library.h"
#include "opd/tensor.h"
#include "stress_loop.h"

namespace opd {
namespace {

using test::run_until;

int64_t kernel_one(const Tensor&) { return 1; }
int64_t kernel_two(const Tensor&) { return 2; }

Tensor cpu_tensor() {
  static float data[2] = {1, 2};
  return from_blob(data, std::vector<int64_t>{2}, ScalarType::Float32);
}

// Calls `pick(Tensor x) -> int` boxed or unboxed: the two entry points a race must not break.
int64_t call_pick(const TypedOperatorHandle<int64_t(const Tensor&)>& op, const Tensor& x,
                  bool boxed) {
  if (!boxed) return op.call(x);
  Stack s{IValue(x)};
  op.call_boxed(&s);
  return s.back().to_int();
}

TEST(DispatcherConcurrency, OverrideAndRestoreWhileTwoThreadsDispatch) {
  Library def(Library::DEF, "test_concurrency");
  def.def("pick(Tensor x) -> int");
  Library base(Library::IMPL, "test_concurrency", DispatchKey::CPU);
  base.impl("pick", &kernel_one);
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("test_concurrency::pick", "")
                .typed<int64_t(const Tensor&)>();

  std::atomic<bool> done{false};
  std::atomic<int64_t> calls{0}, unexpected{0}, saw_one{0}, saw_two{0};
  auto dispatcher_thread = [&](bool boxed) {
    Tensor x = cpu_tensor();
    while (!done.load(std::memory_order_acquire)) {
      int64_t r = call_pick(op, x, boxed);
      if (r == 1) saw_one.fetch_add(1, std::memory_order_relaxed);
      if (r == 2) saw_two.fetch_add(1, std::memory_order_relaxed);
      if (r != 1 && r != 2) unexpected.fetch_add(1, std::memory_order_relaxed);
      calls.fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::thread t1(dispatcher_thread, false);
  std::thread t2(dispatcher_thread, true);
  run_until(
      2000,
      [&](int64_t) {
        Library override_lib(Library::IMPL, "test_concurrency", DispatchKey::CPU);
        override_lib.impl("pick", &kernel_two);
      },  // each destruction restores kernel_one
      [&] { return saw_one.load() > 0 && saw_two.load() > 0; });
  done.store(true, std::memory_order_release);
  t1.join();
  t2.join();

  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_GT(calls.load(), 0);
  EXPECT_GT(saw_one.load(), 0) << "the restored kernel was never observed";
  EXPECT_GT(saw_two.load(), 0) << "the override was never observed";
  EXPECT_EQ(op.call(cpu_tensor()), 1);
  Dispatcher::singleton().check_invariants();
  // With no call in flight, everything replaced can be freed.
  Dispatcher::singleton().reclaim();
  EXPECT_EQ(Dispatcher::singleton().retired_count(), 0u);
}

// An autograd fallback that marks the calls it saw: it passes them on and returns 2.
void marking_autograd_fallback(OperatorKernel*, const OperatorHandle& op, DispatchKeySet ks,
                               Stack* stack) {
  op.redispatch_boxed(ks - kAutogradKeySet, stack);
  stack->back() = IValue(int64_t{2});
}

// Covering and uncovering the core's Autograd fallthrough (what loading and unloading the
// autograd plugin does) while threads call, boxed and unboxed, with a tensor that has autograd
// state (the fallback is reached: 2, or 1 while uncovered) and one without (its fast path
// skips the fallback: always 1). Note [Autograd fallback fast path].
TEST(DispatcherConcurrency, CoveringTheAutogradFallthroughWhileThreadsDispatch) {
  Library def(Library::DEF, "test_concurrency_agfb");
  def.def("pick(Tensor x) -> int");
  Library base(Library::IMPL, "test_concurrency_agfb", DispatchKey::CPU);
  base.impl("pick", &kernel_one);
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("test_concurrency_agfb::pick", "")
                .typed<int64_t(const Tensor&)>();
  Tensor with_state = cpu_tensor();
  with_state.unsafe_get_impl()->set_autograd_meta(std::make_shared<int>(0));
  const Tensor plain = cpu_tensor();

  std::atomic<bool> done{false};
  std::atomic<int64_t> unexpected{0}, saw_covered{0}, saw_uncovered{0};
  auto dispatcher_thread = [&](bool boxed) {
    while (!done.load(std::memory_order_acquire)) {
      int64_t r = call_pick(op, with_state, boxed);
      if (r == 2) saw_covered.fetch_add(1, std::memory_order_relaxed);
      if (r == 1) saw_uncovered.fetch_add(1, std::memory_order_relaxed);
      if (r != 1 && r != 2) unexpected.fetch_add(1, std::memory_order_relaxed);
      if (call_pick(op, plain, boxed) != 1) unexpected.fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::thread t1(dispatcher_thread, false);
  std::thread t2(dispatcher_thread, true);
  run_until(
      2000,
      [&](int64_t) {
        Library fallback(Library::IMPL, "_", DispatchKey::Autograd);
        fallback.fallback(CppFunction::from_kernel(
            KernelFunction::make_autograd_fallback(&marking_autograd_fallback)));
      },
      [&] { return saw_covered.load() > 0 && saw_uncovered.load() > 0; });
  done.store(true, std::memory_order_release);
  t1.join();
  t2.join();

  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_GT(saw_covered.load(), 0) << "the fallback was never observed";
  EXPECT_GT(saw_uncovered.load(), 0) << "the core's fallthrough was never observed";
  EXPECT_EQ(Dispatcher::singleton().fallback_debug(DispatchKey::AutogradCPU),
            "registered in opdispatch core");
  EXPECT_EQ(op.call(with_state), 1);
  Dispatcher::singleton().check_invariants();
}

int64_t kernel_three(const Tensor&) { return 3; }

// An Autograd kernel registered and removed over the autograd fallback while threads call: the
// operator's Autograd keys move between the two masks a call reads (Note [Autograd fallback
// fast path]). A call with autograd state must reach the fallback (2) or the kernel (3), never
// skip both (1). A call without reaches the kernel (3) or skips the fallback (1), or, while the
// keys move between the masks, reaches the fallback (2), which gives the same answer.
TEST(DispatcherConcurrency, AnAutogradKernelComingAndGoingOverTheAutogradFallback) {
  Library def(Library::DEF, "test_concurrency_agk");
  def.def("pick(Tensor x) -> int");
  Library base(Library::IMPL, "test_concurrency_agk", DispatchKey::CPU);
  base.impl("pick", &kernel_one);
  Library fallback(Library::IMPL, "_", DispatchKey::Autograd);
  fallback.fallback(
      CppFunction::from_kernel(KernelFunction::make_autograd_fallback(&marking_autograd_fallback)));
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("test_concurrency_agk::pick", "")
                .typed<int64_t(const Tensor&)>();
  Tensor with_state = cpu_tensor();
  with_state.unsafe_get_impl()->set_autograd_meta(std::make_shared<int>(0));
  const Tensor plain = cpu_tensor();

  std::atomic<bool> done{false};
  std::atomic<int64_t> skipped_with_state{0}, unexpected{0}, saw_fallback{0}, saw_kernel{0};
  auto dispatcher_thread = [&](bool boxed) {
    while (!done.load(std::memory_order_acquire)) {
      int64_t r = call_pick(op, with_state, boxed);
      if (r == 2) saw_fallback.fetch_add(1, std::memory_order_relaxed);
      if (r == 3) saw_kernel.fetch_add(1, std::memory_order_relaxed);
      if (r == 1) skipped_with_state.fetch_add(1, std::memory_order_relaxed);
      if (r < 1 || r > 3) unexpected.fetch_add(1, std::memory_order_relaxed);
      r = call_pick(op, plain, boxed);
      if (r < 1 || r > 3) unexpected.fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::thread t1(dispatcher_thread, false);
  std::thread t2(dispatcher_thread, true);
  run_until(
      2000,
      [&](int64_t) {
        Library autograd(Library::IMPL, "test_concurrency_agk", DispatchKey::Autograd);
        autograd.impl("pick", &kernel_three);
      },
      [&] { return saw_fallback.load() > 0 && saw_kernel.load() > 0; });
  done.store(true, std::memory_order_release);
  t1.join();
  t2.join();

  EXPECT_EQ(skipped_with_state.load(), 0) << "a call with autograd state skipped autograd";
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_GT(saw_fallback.load(), 0) << "the fallback was never observed";
  EXPECT_GT(saw_kernel.load(), 0) << "the Autograd kernel was never observed";
  EXPECT_EQ(op.call(with_state), 2);
  EXPECT_EQ(op.call(plain), 1);
  Dispatcher::singleton().check_invariants();
}

TEST(DispatcherConcurrency, DefiningOtherOperatorsWhileDispatching) {
  Library def(Library::DEF, "test_concurrency_b");
  def.def("pick(Tensor x) -> int");
  def.impl("pick", DispatchKey::CPU, &kernel_one);
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("test_concurrency_b::pick", "")
                .typed<int64_t(const Tensor&)>();
  std::atomic<bool> done{false};
  std::atomic<int64_t> wrong{0}, calls{0}, defs{0};
  std::thread reader([&] {
    Tensor x = cpu_tensor();
    while (!done.load(std::memory_order_acquire)) {
      if (op.call(x) != 1) wrong.fetch_add(1);
      calls.fetch_add(1);
    }
  });
  // Both sides must have run at once: calls made while defs happen, and defs while calls do.
  run_until(
      2000,
      [&](int64_t i) {
        Library frag(Library::FRAGMENT, "test_concurrency_b");
        frag.def("other" + std::to_string(i % 7) + "(Tensor x) -> int", &kernel_two);
        if (calls.load() > 0) defs.fetch_add(1);
      },
      [&] { return defs.load() > 100; });
  done.store(true, std::memory_order_release);
  reader.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(defs.load(), 0) << "no def overlapped a call";
  Dispatcher::singleton().check_invariants();
}

TEST(DispatcherConcurrency, ReclaimWaitsForCallsInFlight) {
  Dispatcher::singleton().reclaim();  // what earlier tests retired, with no call in flight
  ASSERT_EQ(Dispatcher::singleton().retired_count(), 0u);
  Library def(Library::DEF, "test_concurrency_c");
  def.def("wait(Tensor x) -> int");
  std::atomic<bool> entered{false}, release{false};
  def.impl("wait", DispatchKey::CPU, [&](const Tensor&) -> int64_t {
    entered.store(true);
    while (!release.load()) std::this_thread::yield();
    return 7;
  });
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("test_concurrency_c::wait", "")
                .typed<int64_t(const Tensor&)>();
  int64_t result = 0;
  std::thread caller([&] { result = op.call(cpu_tensor()); });
  while (!entered.load()) std::this_thread::yield();
  {
    Library replacement(Library::IMPL, "test_concurrency_c", DispatchKey::CPU);
    replacement.impl("wait", [](const Tensor&) -> int64_t { return 8; });
  }
  // The running kernel was replaced and restored; nothing retired may be freed while it runs.
  size_t before = Dispatcher::singleton().retired_count();
  EXPECT_GT(before, 0u);
  EXPECT_EQ(Dispatcher::singleton().reclaim(), 0u);
  EXPECT_EQ(Dispatcher::singleton().reclaim(), 0u);  // the caller is still in the same call
  EXPECT_EQ(Dispatcher::singleton().retired_count(), before);
  release.store(true);
  caller.join();
  EXPECT_EQ(result, 7);
  EXPECT_GE(Dispatcher::singleton().reclaim(), before);
  EXPECT_EQ(Dispatcher::singleton().retired_count(), 0u);
}

// A boxed kernel reads its operator's schema (as the Python package's kernels and boxed
// fallbacks do); undoing the def while it runs must leave that schema valid until it returns.
// Before the fix the schema was destroyed in place: a use-after-free under ASan.
TEST(DispatcherConcurrency, TheSchemaOutlivesACallRunningWhileItsDefIsUndone) {
  std::atomic<bool> entered{false}, release{false};
  std::string seen;
  auto lib = std::make_unique<Library>(Library::DEF, "test_concurrency_schema");
  lib->def("read(Tensor x, int n=3) -> int");
  lib->impl("read", DispatchKey::CPU, CppFunction([&](const OperatorHandle& op, Stack* stack) {
              const FunctionSchema& schema = op.schema();
              entered.store(true);
              while (!release.load()) std::this_thread::yield();
              seen =
                  schema.arguments()[1].name() + "=" + schema.arguments()[1].default_value_text();
              stack->clear();
              stack->emplace_back(int64_t{1});
            }));
  OperatorHandle op =
      Dispatcher::singleton().find_schema_or_throw("test_concurrency_schema::read", "");
  std::thread caller([&] {
    Stack s{IValue(cpu_tensor()), IValue(int64_t{3})};
    op.call_boxed(&s);
  });
  while (!entered.load()) std::this_thread::yield();
  lib.reset();  // impl and def undone, the operator erased: retired, not freed
  EXPECT_FALSE(Dispatcher::singleton().find_schema({"test_concurrency_schema::read", ""}));
  EXPECT_EQ(Dispatcher::singleton().reclaim(), 0u);
  release.store(true);
  caller.join();
  EXPECT_EQ(seen, "n=3");
  EXPECT_GT(Dispatcher::singleton().reclaim(), 0u);
}

}  // namespace
}  // namespace opd

namespace opd {
namespace {

TEST(DispatcherConcurrency, ContinuousCallerDoesNotHoldReclamationBack) {
  Library def(Library::DEF, "test_concurrency_d");
  def.def("pick(Tensor x) -> int");
  def.impl("pick", DispatchKey::CPU, &kernel_one);
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("test_concurrency_d::pick", "")
                .typed<int64_t(const Tensor&)>();
  std::atomic<bool> done{false};
  std::thread caller([&] {
    Tensor x = cpu_tensor();
    while (!done.load(std::memory_order_acquire)) op.call(x);
  });
  {
    Library replacement(Library::IMPL, "test_concurrency_d", DispatchKey::CPU);
    replacement.impl("pick", &kernel_two);
  }
  // The caller is almost always inside a call, but it leaves each one quickly: after at most a
  // few attempts, everything retired is freed while it keeps calling.
  bool drained = false;
  for (int i = 0; i < 1000 && !drained; ++i) {
    Dispatcher::singleton().reclaim();
    drained = Dispatcher::singleton().retired_count() == 0;
    if (!drained) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  done.store(true, std::memory_order_release);
  caller.join();
  EXPECT_TRUE(drained);
}

// ---- Defects found by trying to break it (issue 13, section 6) --------------------------------

// A per-operator fallthrough registered and removed on a key the calls use: every call sees the
// old state or the new one, never "fallthrough_kernel was executed" (Note [Fallthrough]).
TEST(DispatcherConcurrency, TogglingAPerOperatorFallthroughWhileDispatching) {
  Library def(Library::DEF, "test_concurrency_ft");
  def.def("pick(Tensor x) -> int");
  def.impl("pick", DispatchKey::CPU, &kernel_one);
  def.impl("pick", DispatchKey::AutogradCPU, &kernel_two);
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("test_concurrency_ft::pick", "")
                .typed<int64_t(const Tensor&)>();
  std::atomic<bool> done{false};
  std::atomic<int64_t> errors{0}, saw_kernel{0}, saw_below{0};
  std::string first_error;
  std::mutex first_error_mutex;
  auto caller = [&](bool boxed) {
    Tensor x = cpu_tensor();  // carries AutogradCPU
    while (!done.load(std::memory_order_acquire)) {
      try {
        int64_t r = call_pick(op, x, boxed);
        (r == 2 ? saw_kernel : saw_below).fetch_add(1, std::memory_order_relaxed);
      } catch (const std::exception& e) {
        if (errors.fetch_add(1) == 0) {
          std::lock_guard lock(first_error_mutex);
          first_error = e.what();
        }
      }
    }
  };
  std::thread t1(caller, false), t2(caller, true);
  int64_t toggles = run_until(
      20000,
      [&](int64_t) {
        Library ft(Library::IMPL, "test_concurrency_ft", DispatchKey::AutogradCPU);
        ft.impl("pick", CppFunction::make_fallthrough());
      },
      [&] { return saw_kernel.load() > 0 && saw_below.load() > 0; });
  done.store(true, std::memory_order_release);
  t1.join();
  t2.join();
  EXPECT_EQ(errors.load(), 0) << "first error: " << first_error;
  EXPECT_GT(toggles, 0);
  EXPECT_GT(saw_kernel.load(), 0) << "the AutogradCPU kernel was never observed";
  EXPECT_GT(saw_below.load(), 0) << "the fallthrough state was never observed";
  Dispatcher::singleton().check_invariants();
}

// Note [Operator tags]: has_tag, tags() and dump_state read the tags of the definition while
// a thread defines and undoes it (an impl keeps the operator entry): each read sees the tags
// of the def or, with it undone, none, never another set.
TEST(DispatcherConcurrency, ReadingTagsWhileTheDefComesAndGoes) {
  Library impl(Library::FRAGMENT, "test_concurrency_tags");
  impl.impl("tagged", DispatchKey::CPU, &kernel_one);
  OperatorHandle op = *Dispatcher::singleton().find_op({"test_concurrency_tags::tagged", ""});
  const TagSet tags{Tag::pointwise, Tag::core};
  std::atomic<bool> done{false};
  std::atomic<int64_t> wrong{0}, saw_tags{0}, saw_none{0};
  auto reader = [&](bool dump) {
    while (!done.load(std::memory_order_acquire)) {
      TagSet t = op.tags();
      if (t != tags && !t.empty()) wrong.fetch_add(1);
      if (op.has_tag(Tag::nondeterministic_seeded)) wrong.fetch_add(1);
      if (dump) {
        std::string text = op.dump_state();
        bool shown = text.find("\ntags: core, pointwise\n") != std::string::npos;
        if (!shown && text.find("\ntags:") != std::string::npos) wrong.fetch_add(1);
      }
      (t.empty() ? saw_none : saw_tags).fetch_add(1, std::memory_order_relaxed);
    }
  };
  std::thread t1(reader, false), t2(reader, true);
  int64_t defs = run_until(
      2000,
      [&](int64_t) {
        Library def(Library::FRAGMENT, "test_concurrency_tags");
        def.def("tagged(Tensor x) -> int", tags);
      },
      [&] { return saw_tags.load() > 0 && saw_none.load() > 0; });
  done.store(true, std::memory_order_release);
  t1.join();
  t2.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(defs, 0);
  EXPECT_GT(saw_tags.load(), 0) << "the defined state was never observed";
  EXPECT_GT(saw_none.load(), 0) << "the undefined state was never observed";
  Dispatcher::singleton().check_invariants();
}

// The missing-kernel error reads the kernel lists to print the table, while a third thread
// registers and deregisters kernels on other keys of the same operator.
TEST(DispatcherConcurrency, MissingKernelErrorWhileOtherKeysAreRegistered) {
  Library def(Library::DEF, "test_concurrency_missing");
  def.def("pick(Tensor x) -> int");
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("test_concurrency_missing::pick", "")
                .typed<int64_t(const Tensor&)>();
  std::atomic<bool> done{false};
  std::atomic<int64_t> right_errors{0}, wrong{0}, saw_meta_listed{0}, saw_meta_absent{0};
  auto caller = [&] {
    Tensor x = cpu_tensor();
    while (!done.load(std::memory_order_acquire)) {
      try {
        op.call(x);
        wrong.fetch_add(1);
      } catch (const NotImplementedError& e) {
        std::string what = e.what();
        bool ok = what.find(
                      "Could not run 'test_concurrency_missing::pick' with arguments from "
                      "the 'CPU' backend") != std::string::npos;
        (ok ? right_errors : wrong).fetch_add(1);
        bool meta = what.find("Meta: registered at") != std::string::npos;
        (meta ? saw_meta_listed : saw_meta_absent).fetch_add(1);
      }
    }
  };
  std::thread t1(caller), t2(caller);
  run_until(
      3000,
      [&](int64_t i) {
        Library meta(Library::IMPL, "test_concurrency_missing", DispatchKey::Meta);
        meta.impl("pick", &kernel_two);
        Library cuda(Library::IMPL, "test_concurrency_missing", DispatchKey::CUDA);
        cuda.impl("pick", &kernel_two);
        if (i % 3 == 0) Dispatcher::singleton().reclaim();
      },
      [&] { return saw_meta_listed.load() > 0 && saw_meta_absent.load() > 0; });
  done.store(true, std::memory_order_release);
  t1.join();
  t2.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(right_errors.load(), 0);
  EXPECT_GT(saw_meta_listed.load(), 0) << "no error was raised while the Meta kernel was there";
  EXPECT_GT(saw_meta_absent.load(), 0) << "no error was raised while it was not";
}

// find_schema_or_throw(...).typed<Sig>() on every call (the example plugin's pattern) while
// another thread registers and deregisters unboxed kernels of the same signature.
TEST(DispatcherConcurrency, TypedHandlePerCallWhileKernelsAreRegistered) {
  Library def(Library::DEF, "test_concurrency_typed");
  def.def("pick(Tensor x) -> int");
  def.impl("pick", DispatchKey::CPU, &kernel_one);
  std::atomic<bool> done{false};
  std::atomic<int64_t> wrong{0}, calls{0}, refused{0};
  auto caller = [&] {
    Tensor x = cpu_tensor();
    while (!done.load(std::memory_order_acquire)) {
      auto h = Dispatcher::singleton().find_schema_or_throw("test_concurrency_typed::pick", "");
      if (h.typed<int64_t(const Tensor&)>().call(x) != 1) wrong.fetch_add(1);
      try {
        h.typed<int64_t(const Tensor&, int64_t)>();
      } catch (const Error&) {
        refused.fetch_add(1);
      }
      calls.fetch_add(1);
    }
  };
  std::thread t1(caller), t2(caller);
  int64_t steps = run_until(
      3000,
      [&](int64_t) {
        Library meta(Library::IMPL, "test_concurrency_typed", DispatchKey::Meta);
        meta.impl("pick", &kernel_two);
        Library ps(Library::IMPL, "test_concurrency_typed", DispatchKey::PrivateUse1);
        ps.impl("pick", &kernel_two);
      },
      [&] { return calls.load() > 1000; });
  done.store(true, std::memory_order_release);
  t1.join();
  t2.join();
  EXPECT_GT(steps, 0);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(refused.load(), calls.load()) << "a wrong signature must always be refused";
}

// Note [Kernel reclamation]'s shipped protocol under AddressSanitizer (this test also runs in
// the asan preset, where CallScope is the plain-store protocol users run; under TSan it is the
// fetch_add variant): stateful kernels whose state is freed as soon as reclamation allows,
// replaced and reclaimed continuously while three threads call them. Freeing a kernel that a
// call is still running is a heap-use-after-free ASan reports.
TEST(DispatcherConcurrency, ReplaceAndReclaimStatefulKernelsWhileDispatching) {
  Library def(Library::DEF, "test_concurrency_reclaim");
  def.def("pick(Tensor x) -> int");
  auto base_state = std::make_shared<std::vector<int64_t>>(64, 1);
  def.impl("pick", DispatchKey::CPU,
           [base_state](const Tensor&) -> int64_t { return (*base_state)[63]; });
  auto op = Dispatcher::singleton()
                .find_schema_or_throw("test_concurrency_reclaim::pick", "")
                .typed<int64_t(const Tensor&)>();
  std::atomic<bool> done{false};
  std::atomic<int64_t> wrong{0}, saw_base{0}, saw_replacement{0};
  auto caller = [&] {
    Tensor x = cpu_tensor();
    while (!done.load(std::memory_order_acquire)) {
      int64_t r = op.call(x);
      if (r == 1) {
        saw_base.fetch_add(1, std::memory_order_relaxed);
      } else if (r >= 1000) {
        saw_replacement.fetch_add(1, std::memory_order_relaxed);
      } else {
        wrong.fetch_add(1);
      }
    }
  };
  std::thread t1(caller), t2(caller), t3(caller);
  size_t freed = 0;
  run_until(
      500,
      [&](int64_t i) {
        {
          Library lib(Library::IMPL, "test_concurrency_reclaim", DispatchKey::CPU);
          // The state lives only in the functor: freed with it.
          std::vector<int64_t> state(64, 1000 + i);
          lib.impl("pick", [state = std::move(state)](const Tensor&) -> int64_t {
            int64_t sum = 0;
            for (int64_t v : state) sum += v;
            return sum / static_cast<int64_t>(state.size());
          });
          std::this_thread::yield();
        }
        freed += Dispatcher::singleton().reclaim();
      },
      [&] { return saw_base.load() > 0 && saw_replacement.load() > 0 && freed > 100; });
  done.store(true, std::memory_order_release);
  t1.join();
  t2.join();
  t3.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(saw_base.load(), 0);
  EXPECT_GT(saw_replacement.load(), 0);
  EXPECT_GT(freed, 100u) << "reclamation must have freed kernels while calls ran";
}

}  // namespace
}  // namespace opd
