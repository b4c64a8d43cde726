#include "logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>

namespace opd {

std::shared_ptr<spdlog::logger> logger() {
  static std::shared_ptr<spdlog::logger> l = [] {
    auto existing = spdlog::get("opd");
    if (existing) return existing;
    auto created = spdlog::stderr_color_mt("opd");
    const char* level = std::getenv("OPD_LOG_LEVEL");
    created->set_level(level ? spdlog::level::from_str(level) : spdlog::level::warn);
    created->set_pattern("[opd %l] %v");
    return created;
  }();
  return l;
}

}  // namespace opd
