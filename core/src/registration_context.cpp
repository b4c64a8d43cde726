#include "registration_context.h"

namespace opd {
namespace detail {
namespace {
thread_local opd_plugin_context* current = nullptr;
}  // namespace

opd_plugin_context* current_registration_context() { return current; }

ScopedRegistrationContext::ScopedRegistrationContext(opd_plugin_context* ctx) : previous_(current) {
  current = ctx;
}
ScopedRegistrationContext::~ScopedRegistrationContext() { current = previous_; }

}  // namespace detail

PluginUnavailable::~PluginUnavailable() = default;

std::shared_ptr<void> current_plugin_reference() {
  auto* ctx = detail::current_registration_context();
  return ctx ? ctx->owner : nullptr;
}

}  // namespace opd

extern "C" void opd_plugin_set_message(opd_plugin_context* ctx, const char* message) {
  if (ctx && message) ctx->message = message;
}
