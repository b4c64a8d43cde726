// An entry point written by hand, because OPD_PLUGIN always stamps the host's ABI and build
// fingerprint: built three times, once per field the manager must refuse.
//   BAD_ENTRY_NAME                 the plugin's name (abi_major, abi_minor, fingerprint)
//   BAD_ENTRY_NEXT_MAJOR           claims the host's ABI major + 1
//   BAD_ENTRY_NEXT_MINOR           claims the host's ABI major, but its minor + 1
//   BAD_ENTRY_FOREIGN_FINGERPRINT  claims a build by another compiler and standard library

#include "opd/plugin.h"

#ifdef BAD_ENTRY_NEXT_MAJOR
#define BAD_ENTRY_MAJOR (OPD_PLUGIN_ABI_MAJOR + 1)
#else
#define BAD_ENTRY_MAJOR OPD_PLUGIN_ABI_MAJOR
#endif
#ifdef BAD_ENTRY_NEXT_MINOR
#define BAD_ENTRY_MINOR (OPD_PLUGIN_ABI_MINOR + 1)
#else
#define BAD_ENTRY_MINOR OPD_PLUGIN_ABI_MINOR
#endif
#ifdef BAD_ENTRY_FOREIGN_FINGERPRINT
#define BAD_ENTRY_FINGERPRINT "opd-abi1;msvc-19;msvcprt-143"
#else
#define BAD_ENTRY_FINGERPRINT OPD_BUILD_FINGERPRINT
#endif

namespace {

// Never reached: the manager refuses the entry struct before calling anything in it.
opd_plugin_status refuse_register(opd_plugin_context* ctx) {
  opd_plugin_set_message(ctx, "this fixture must never be registered");
  return OPD_PLUGIN_ERROR;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const opd_plugin_info* opd_plugin_entry() {
  static const opd_plugin_info info = {
      sizeof(opd_plugin_info), BAD_ENTRY_MAJOR,  BAD_ENTRY_MINOR, BAD_ENTRY_NAME, "0.1.0",
      BAD_ENTRY_FINGERPRINT,   &refuse_register, nullptr};
  return &info;
}
