#pragma once

// Registrations made straight through the Dispatcher API, and calls that report which kernels
// served them: shared by the tests of the dispatcher (dispatcher_test.cpp) and of the
// thread-local key sets (local_dispatch_key_set_test.cpp). The globals below (one copy per test
// binary) are not synchronised: only single-threaded tests use these helpers.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>
#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opd/dispatcher.h"
#include "opd/kernel_function.h"
#include "opd/library.h"
#include "opd/tensor.h"

namespace opd::test_util {

inline Dispatcher& dispatcher() { return Dispatcher::singleton(); }

// "registered at tests/core/dispatch/dispatcher_test.cpp:42", as Library writes it.
inline std::string at(const std::source_location& loc) {
  return fmt::format("registered at {}:{}", loc.file_name(), loc.line());
}

// A registration made through the Dispatcher API, with the debug string it was given.
struct Reg {
  RegistrationHandle handle;
  std::string site;
};

inline Reg def(std::string_view schema,
               std::source_location loc = std::source_location::current()) {
  return {dispatcher().register_def(parse_schema(schema), at(loc)), at(loc)};
}

template <class F>
Reg impl(const OperatorName& op, std::optional<DispatchKey> key, F&& kernel,
         std::source_location loc = std::source_location::current()) {
  CppFunction f(std::forward<F>(kernel));
  return {dispatcher().register_impl(op, key, f.kernel(), f.signature(), f.parsed_inferred_schema(),
                                     at(loc)),
          at(loc)};
}

// Kernels append to g_trace, so a test can see which one served a call.
inline std::vector<std::string> g_trace;

// A `(Tensor x) -> Tensor` kernel that records `tag` and returns x.
inline auto tagged(std::string tag) {
  return [tag](const Tensor& x) {
    g_trace.push_back(tag);
    return x;
  };
}

inline float g_buf[4] = {};

// A small float tensor on a device of `type` (index 0 where the type has indices).
inline Tensor on(DeviceType type) {
  Device d = type == DeviceType::CPU || type == DeviceType::Meta ? Device(type) : Device(type, 0);
  return from_blob(g_buf, {2}, kFloat, d);
}

inline OperatorHandle handle(const OperatorName& name) {
  auto h = dispatcher().find_op(name);
  if (!h) throw std::runtime_error("no operator " + name.to_string());
  return *h;
}

// Calls `name(x)` unboxed and returns the tags of the kernels that ran, comma-separated.
inline std::string call(const OperatorName& name, const Tensor& x) {
  g_trace.clear();
  Tensor r = handle(name).typed<Tensor(const Tensor&)>().call(x);
  EXPECT_TRUE(r.is_same(x));
  std::string out;
  for (const auto& t : g_trace) out += (out.empty() ? "" : ",") + t;
  return out;
}

// The same, boxed.
inline std::string call_boxed(const OperatorName& name, const Tensor& x) {
  g_trace.clear();
  Stack s{x};
  handle(name).call_boxed(&s);
  EXPECT_EQ(s.size(), 1u);
  std::string out;
  for (const auto& t : g_trace) out += (out.empty() ? "" : ",") + t;
  return out;
}

}  // namespace opd::test_util
