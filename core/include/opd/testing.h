#pragma once

// Helpers for tests written with GoogleTest: swap one kernel for the length of a scope, load a
// plugin for the length of a scope, and check that no kernel was left without its operator.
// Header-only; include it from test code only (it includes <gtest/gtest.h>).
//
//   TEST(Example, TwiceScalesByTwo) {
//     opd::test::ScopedPlugin example("example");                 // unloaded at the end
//     int calls = 0;
//     opd::test::ScopedKernelOverride spy("example::scale", opd::DispatchKey::CPU,
//         [&calls](const opd::Tensor& self, double) { ++calls; return self; });
//     ...                                          // call example::twice: the spy serves scale
//     opd::test::expect_no_dangling_impls();
//   }                                              // the real kernel is back, then unloaded
//
// The namespace is opd::test, not opd::testing, so that `testing::` inside namespace opd still
// names GoogleTest's.

#include <gtest/gtest.h>

#include <algorithm>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/library.h"
#include "opd/plugin_manager.h"

namespace opd::test {

// Registers `kernel` for operator `op_name` ("ns::op" or "ns::op.overload") and `key` for the
// lifetime of the object: calls dispatched to `key` reach it instead of the kernel registered
// there before, which serves again once the object is destroyed (the newest registration for a
// key wins, and undoing it restores the previous one; overrides nest). The operator must be
// defined. Throws Error when `op_name` is malformed or not defined, or when the kernel's
// signature disagrees with the operator's schema. Not movable: it undoes on destruction.
class ScopedKernelOverride {
 public:
  ScopedKernelOverride(std::string_view op_name, DispatchKey key, CppFunction kernel,
                       std::source_location loc = std::source_location::current())
      : library_(Library::IMPL, split(op_name).ns, key, loc) {
    Parts p = split(op_name);
    OperatorName name(p.ns + "::" + p.op, p.overload);
    OPD_CHECK(Dispatcher::singleton().find_schema(name).has_value(),
              "ScopedKernelOverride: operator {} is not defined; define it (or load the plugin "
              "that does) before overriding one of its kernels",
              std::string(op_name));
    library_.impl(p.overload.empty() ? p.op : p.op + "." + p.overload, std::move(kernel), loc);
  }
  ScopedKernelOverride(const ScopedKernelOverride&) = delete;
  ScopedKernelOverride& operator=(const ScopedKernelOverride&) = delete;

 private:
  struct Parts {
    std::string ns, op, overload;
  };
  static Parts split(std::string_view op_name) {
    size_t sep = op_name.find("::");
    OPD_CHECK(sep != std::string_view::npos && sep > 0 && sep + 2 < op_name.size(),
              "ScopedKernelOverride: '{}' is not an operator name; expected 'ns::op' or "
              "'ns::op.overload'",
              std::string(op_name));
    Parts p;
    p.ns = std::string(op_name.substr(0, sep));
    std::string_view rest = op_name.substr(sep + 2);
    size_t dot = rest.find('.');
    p.op = std::string(rest.substr(0, dot));
    if (dot != std::string_view::npos) p.overload = std::string(rest.substr(dot + 1));
    return p;
  }

  Library library_;
};

// Loads a plugin (by name, from the search path, or by manifest path) for the lifetime of the
// object, and unloads it on destruction (cascading to plugins loaded since that require it).
// A plugin that was already loaded is left loaded. Throws PluginError when the plugin cannot be
// loaded, and also when it reports itself unavailable (a test that expects it to run cannot);
// check plugins().status() first to skip instead. Unload errors at destruction are reported as
// test failures, never thrown.
class ScopedPlugin {
 public:
  explicit ScopedPlugin(const std::string& name_or_manifest) {
    std::vector<std::string> loaded_before;
    for (const PluginStatus& s : plugins().list()) {
      if (s.state == PluginState::Loaded) loaded_before.push_back(s.name);
    }
    status_ = plugins().load(name_or_manifest);
    if (status_.state != PluginState::Loaded) {
      throw PluginError(fmt::format("ScopedPlugin: plugin '{}' is {}: {}", status_.name,
                                    to_string(status_.state), status_.reason));
    }
    owns_ =
        std::find(loaded_before.begin(), loaded_before.end(), status_.name) == loaded_before.end();
  }
  ~ScopedPlugin() {
    if (!owns_) return;
    try {
      plugins().unload(status_.name, /*cascade=*/true);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "ScopedPlugin: unloading plugin '" << status_.name
                    << "' failed: " << e.what();
    }
  }
  ScopedPlugin(const ScopedPlugin&) = delete;
  ScopedPlugin& operator=(const ScopedPlugin&) = delete;

  // The status load() returned.
  const PluginStatus& status() const { return status_; }

 private:
  PluginStatus status_;
  bool owns_ = false;  // loaded by this object, so unloaded by it
};

// Operators that have kernels but no schema: an impl registered for an operator nobody defined
// (a typo in the name, or a def undone before its impls). Passes when there are none; otherwise
// fails listing them.
inline ::testing::AssertionResult no_dangling_impls() {
  std::vector<OperatorName> dangling = Dispatcher::singleton().find_dangling_impls();
  if (dangling.empty()) return ::testing::AssertionSuccess();
  ::testing::AssertionResult r = ::testing::AssertionFailure();
  r << dangling.size() << " operator(s) have kernels but no schema (dangling impls):";
  for (const auto& name : dangling) {
    auto op = Dispatcher::singleton().find_op(name);
    r << "\n  " << name.to_string();
    if (op) r << "\n" << op->dump_state();
  }
  return r;
}

// EXPECT_TRUE(no_dangling_impls()), reported at the caller's line.
inline void expect_no_dangling_impls(std::source_location loc = std::source_location::current()) {
  ::testing::ScopedTrace trace(loc.file_name(), static_cast<int>(loc.line()),
                               "expect_no_dangling_impls()");
  EXPECT_TRUE(no_dangling_impls());
}

}  // namespace opd::test
