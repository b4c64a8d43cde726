// The commutation property of registration (PyTorch's test/test_dispatch.py, in C++): for a set
// of registrations, every construction order followed by every destruction order gives, for
// each set of live registrations, the same dump_state() and dump_computed_table(); invariants
// hold after every step; a registration that fails leaves the state exactly as before; and when
// everything is gone the dispatcher holds nothing of the operator.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/library.h"
#include "opd/tensor.h"

namespace opd {
namespace {

constexpr const char* kNs = "test_commute";
const OperatorName kFoo{"test_commute::foo", ""};

using Registration = std::function<std::unique_ptr<Library>()>;

struct State {
  std::string dump;
  std::string table;
  bool operator==(const State&) const = default;
};

// The invariants of the operator under test are checked at every step; those of every other
// operator (which a fallback's registration also updates) once a run has constructed everything
// and once it has destroyed everything: checking 135 operators at each of a run's ten steps made
// this test the longest of the suite (six minutes under ASan).
State current_state() {
  auto op = Dispatcher::singleton().find_op(kFoo);
  if (!op) return {"", ""};
  op->entry().check_invariants();
  return {op->dump_state(), op->dump_computed_table()};
}

struct Outcome {
  std::map<unsigned, State> states;        // by bitmask of live registrations
  std::map<unsigned, std::string> errors;  // first error message seen per registration
};

// Runs one construction order and one destruction order, recording or comparing states.
void run_once(const std::vector<Registration>& regs, const std::vector<size_t>& ctor,
              const std::vector<size_t>& dtor, Outcome& out) {
  std::vector<std::unique_ptr<Library>> live(regs.size());
  unsigned active = 0;
  auto record = [&](const char* when) {
    State s = current_state();
    auto [it, inserted] = out.states.emplace(active, s);
    if (!inserted) {
      ASSERT_EQ(it->second.dump, s.dump) << when << ", live set " << active;
      ASSERT_EQ(it->second.table, s.table) << when << ", live set " << active;
    }
  };
  for (size_t i : ctor) {
    State before = current_state();
    try {
      live[i] = regs[i]();
      active |= 1u << i;
    } catch (const Error& e) {
      out.errors.emplace(i, e.msg());
      // "did this failure leave the dispatcher in a wedged state?"
      ASSERT_EQ(current_state(), before) << "registration " << i << " failed: " << e.msg();
    }
    record("after construction");
    if (::testing::Test::HasFatalFailure()) return;
  }
  Dispatcher::singleton().check_invariants();
  for (size_t i : dtor) {
    if (!live[i]) continue;
    live[i].reset();
    active &= ~(1u << i);
    record("after destruction");
    if (::testing::Test::HasFatalFailure()) return;
  }
  ASSERT_EQ(active, 0u);
  Dispatcher::singleton().check_invariants();
  EXPECT_FALSE(Dispatcher::singleton().find_op(kFoo).has_value())
      << "the operator entry must be erased with its last registration";
}

// Under AddressSanitizer (a -O0 build) every step costs twenty times what it costs in the default
// build, and with five registrations, two of them fallbacks that update every operator's table,
// the full product (14,400 runs) took 75 s of the asan stage. There each construction order
// meets every kDtorStride-th destruction order, the first and the last (the same and the reverse
// order) included, with the offset turning with the construction order so that every
// destruction order is still met; the default and tsan builds run the full product.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kDtorStride = 7;
#else
constexpr size_t kDtorStride = 1;
#endif

// Every construction order (or only `fixed_ctor`) times every destruction order.
Outcome commute(const std::vector<Registration>& regs,
                std::optional<std::vector<size_t>> fixed_ctor = std::nullopt) {
  Outcome out;
  out.states.emplace(0u, State{"", ""});
  std::vector<size_t> ctor(regs.size());
  std::iota(ctor.begin(), ctor.end(), 0);
  if (fixed_ctor) ctor = *fixed_ctor;
  size_t ctor_index = 0;
  do {
    std::vector<size_t> dtor(regs.size());
    std::iota(dtor.begin(), dtor.end(), 0);
    size_t dtor_index = 0;
    bool more = true;
    while (more) {
      std::vector<size_t> current = dtor;
      more = std::next_permutation(dtor.begin(), dtor.end());
      if (!more || (dtor_index + ctor_index) % kDtorStride == 0 || dtor_index == 0) {
        run_once(regs, ctor, current, out);
        if (::testing::Test::HasFatalFailure()) return out;
      }
      ++dtor_index;
    }
    ++ctor_index;
  } while (!fixed_ctor && std::next_permutation(ctor.begin(), ctor.end()));
  return out;
}

Tensor fn_a(const Tensor& x) { return x; }
Tensor fn_b(const Tensor& x) { return x; }
Tensor fn_two(const Tensor& x, const Tensor&) { return x; }
void boxed_noop(const OperatorHandle&, Stack*) {}

Registration def(const char* schema = "foo(Tensor x) -> Tensor") {
  return [schema] {
    auto lib = std::make_unique<Library>(Library::FRAGMENT, kNs);
    lib->def(schema);
    return lib;
  };
}

template <class F>
Registration impl(DispatchKey key, F f) {
  return [key, f] {
    auto lib = std::make_unique<Library>(Library::IMPL, kNs, key);
    lib->impl("foo", f);
    return lib;
  };
}

Registration fallback(DispatchKey key, bool fallthrough) {
  return [key, fallthrough] {
    auto lib = std::make_unique<Library>(Library::IMPL, "_", key);
    lib->fallback(fallthrough ? CppFunction::make_fallthrough() : CppFunction(&boxed_noop));
    return lib;
  };
}

const std::string& final_table(const Outcome& o, unsigned all) { return o.states.at(all).table; }

TEST(Commutation, DefWithBackendCompositeAndAutogradKernels) {
  using DK = DispatchKey;
  Outcome o = commute({def(), impl(DK::CPU, &fn_a), impl(DK::CompositeImplicitAutograd, &fn_b),
                       impl(DK::Autograd, &fn_a), impl(DK::CompositeExplicitAutograd, &fn_b)});
  EXPECT_TRUE(o.errors.empty());
  const std::string& table = final_table(o, 0b11111);
  EXPECT_THAT(table,
              ::testing::HasSubstr("CPU: registered at tests/core/dispatch/commutation_test.cpp"));
  EXPECT_THAT(table, ::testing::HasSubstr("[default backend kernel]"));
  EXPECT_THAT(table, ::testing::HasSubstr("[autograd kernel]"));
  // With a CompositeExplicitAutograd kernel, CompositeImplicitAutograd serves nothing.
  EXPECT_THAT(table, ::testing::Not(::testing::HasSubstr("[math kernel]")));
  // Without CEA and Autograd: the math kernel serves the other backends and their autograd keys.
  EXPECT_THAT(final_table(o, 0b00111), ::testing::HasSubstr("CUDA: registered at"));
  EXPECT_THAT(final_table(o, 0b00111), ::testing::HasSubstr("[math kernel]"));
}

TEST(Commutation, FallbacksFallthroughsAndNonFunctionalComposite) {
  using DK = DispatchKey;
  Outcome o = commute({def(), fallback(DK::Tracer, false), impl(DK::Tracer, &fn_a),
                       fallback(DK::PrivateUse1, true),
                       impl(DK::CompositeExplicitAutogradNonFunctional, &fn_b)});
  EXPECT_TRUE(o.errors.empty());
  EXPECT_THAT(final_table(o, 0b01011), ::testing::HasSubstr("Tracer: registered at"));
  EXPECT_THAT(final_table(o, 0b01011), ::testing::HasSubstr("PrivateUse1: fallthrough"));
  EXPECT_THAT(final_table(o, 0b00011), ::testing::HasSubstr("[backend fallback]"));
}

TEST(Commutation, ImplsBeforeDefAndAliasKeys) {
  using DK = DispatchKey;
  Outcome o = commute({impl(DK::CPU, &fn_a), impl(DK::Meta, &fn_b), def(),
                       impl(DK::Autograd, &fn_b), impl(DK::CompositeImplicitAutograd, &fn_a)});
  EXPECT_TRUE(o.errors.empty());
  EXPECT_THAT(o.states.at(0b00001).dump, ::testing::HasSubstr("schema: (none)"));
}

TEST(Commutation, OverridesWithFixedConstructionOrder) {
  using DK = DispatchKey;
  // The newest kernel wins, so construction order matters: fix it, permute destruction.
  Outcome o = commute({def(), impl(DK::CPU, &fn_a), impl(DK::CPU, &fn_b), impl(DK::CPU, &fn_a),
                       impl(DK::CompositeImplicitAutograd, &fn_b)},
                      std::vector<size_t>{0, 1, 2, 3, 4});
  EXPECT_TRUE(o.errors.empty());
  EXPECT_THAT(o.states.at(0b01111).dump, ::testing::HasSubstr("CPU (inactive): "));
}

TEST(Commutation, FailedRegistrationsLeaveStateUnchanged) {
  using DK = DispatchKey;
  // Whichever of the two defs comes second fails; the impl whose schema disagrees with the def
  // fails when it comes after it, and makes the def fail when it comes first.
  Outcome o = commute({def(), def(), impl(DK::CPU, &fn_two), impl(DK::Meta, &fn_a)});
  ASSERT_FALSE(o.errors.empty());
  bool saw_duplicate = false, saw_mismatch = false;
  for (const auto& [i, msg] : o.errors) {
    saw_duplicate |=
        msg.find("with the same name and overload name multiple times") != std::string::npos;
    saw_mismatch |= msg.find("doesn't match the expected function schema") != std::string::npos;
  }
  EXPECT_TRUE(saw_duplicate);
  EXPECT_TRUE(saw_mismatch);
}

TEST(Commutation, DuplicateFallbackRefusedWithoutTrace) {
  using DK = DispatchKey;
  Outcome o = commute(
      {def(), fallback(DK::Tracer, false), fallback(DK::Tracer, true), impl(DK::CPU, &fn_a)});
  ASSERT_FALSE(o.errors.empty());
  for (const auto& [i, msg] : o.errors) {
    EXPECT_THAT(
        msg, ::testing::HasSubstr(
                 "Tried to register multiple backend fallbacks for the same dispatch key Tracer"));
  }
}

}  // namespace
}  // namespace opd
