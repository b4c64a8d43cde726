#pragma once

#include <memory>

#include <spdlog/logger.h>

namespace opd {

// The "opd" logger. Level from OPD_LOG_LEVEL (trace, debug, info, warn, error, critical, off);
// warn by default. Messages go to stderr.
std::shared_ptr<spdlog::logger> logger();

}  // namespace opd
