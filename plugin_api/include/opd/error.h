#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

#include "opd/export.h"

namespace opd {

// Base of every error opdispatch throws. what() is the full message; msg() is the message
// without the "(raised at file:line)" suffix that OPD_CHECK appends.
class OPD_API Error : public std::runtime_error {
 public:
  explicit Error(std::string msg, const char* file = nullptr, int line = 0);
  // Out of line: the vtable lives in libopd_core.so only, so errors thrown from a plugin that
  // was unloaded since stay valid.
  ~Error() override;
  const std::string& msg() const { return msg_; }

 private:
  std::string msg_;
};

// Python's exception names, so messages and tests read as PyTorch's do.
#define OPD_DECLARE_ERROR(Name)       \
  class OPD_API Name : public Error { \
   public:                            \
    using Error::Error;               \
    ~Name() override;                 \
  };
OPD_DECLARE_ERROR(NotImplementedError)
OPD_DECLARE_ERROR(TypeError)
OPD_DECLARE_ERROR(ValueError)
OPD_DECLARE_ERROR(IndexError)
OPD_DECLARE_ERROR(PluginError)
#undef OPD_DECLARE_ERROR

namespace detail {
[[noreturn]] OPD_API void throw_internal_assert(const char* cond, const char* file, int line,
                                                const std::string& msg);
template <class E>
[[noreturn]] void throw_check(const char* file, int line, std::string msg) {
  throw E(std::move(msg), file, line);
}
}  // namespace detail

}  // namespace opd

// OPD_CHECK(cond, fmt, args...) reports bad input from users, manifests and plugins: it throws
// opd::Error with the formatted message (required). OPD_CHECK_T(Type, cond, ...) throws a
// subclass. OPD_INTERNAL_ASSERT reports a broken invariant of opdispatch itself.
#define OPD_CHECK_T(ErrorType, cond, ...)                                                    \
  do {                                                                                       \
    if (__builtin_expect(!(cond), 0)) {                                                      \
      ::opd::detail::throw_check<ErrorType>(__FILE__, __LINE__, ::fmt::format(__VA_ARGS__)); \
    }                                                                                        \
  } while (0)
#define OPD_CHECK(cond, ...) OPD_CHECK_T(::opd::Error, cond, __VA_ARGS__)
#define OPD_INTERNAL_ASSERT(cond, ...)                                     \
  do {                                                                     \
    if (__builtin_expect(!(cond), 0)) {                                    \
      ::opd::detail::throw_internal_assert(#cond, __FILE__, __LINE__,      \
                                           ::fmt::format("" __VA_ARGS__)); \
    }                                                                      \
  } while (0)
