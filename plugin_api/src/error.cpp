#include "opd/error.h"

namespace opd {

Error::Error(std::string msg, const char* file, int line)
    : std::runtime_error(file ? fmt::format("{} (raised at {}:{})", msg, file, line) : msg),
      msg_(std::move(msg)) {}

Error::~Error() = default;
NotImplementedError::~NotImplementedError() = default;
TypeError::~TypeError() = default;
ValueError::~ValueError() = default;
IndexError::~IndexError() = default;
PluginError::~PluginError() = default;

namespace detail {
void throw_internal_assert(const char* cond, const char* file, int line, const std::string& msg) {
  throw Error(fmt::format("Internal assertion failed: {}{}{}. This is a bug in opdispatch.", cond,
                          msg.empty() ? "" : ": ", msg),
              file, line);
}
}  // namespace detail

}  // namespace opd
