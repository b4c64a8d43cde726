#pragma once

#include <spdlog/logger.h>

#include <memory>

namespace opd {

// The "opd" logger. Level from OPD_LOG_LEVEL (trace, debug, info, warn, error, critical, off);
// warn by default. Messages go to stderr.
std::shared_ptr<spdlog::logger> logger();

}  // namespace opd
