// Claims a vendor slot and registers nothing else (tests/core/plugins/privateuse_test.cpp):
// slot_claim claims "acme", the acme device's name; slot_undeclared claims "undeclared" with a
// manifest that declares no vendor slot (Note [Vendor slots] in opd/privateuse.h).

#include "opd/plugin.h"
#include "opd/privateuse.h"

#ifndef SLOT_CLAIM_PLUGIN
#define SLOT_CLAIM_PLUGIN slot_claim
#define SLOT_CLAIM_NAME "acme"
#else
#define SLOT_CLAIM_NAME "undeclared"
#endif
#define SLOT_CLAIM_ENTRY(plugin, version) OPD_PLUGIN(plugin, version)

SLOT_CLAIM_ENTRY(SLOT_CLAIM_PLUGIN, "0.1.0") { opd::register_privateuse_backend(SLOT_CLAIM_NAME); }
