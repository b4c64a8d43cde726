#pragma once

#include <string>

#include "opd/error.h"

namespace opd::test_util {

// The message of the E that f() throws, or "<no exception>": lets a test assert a whole error
// text in one EXPECT.
template <class E, class F>
std::string error_text(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.msg();
  }
  return "<no exception>";
}

}  // namespace opd::test_util
