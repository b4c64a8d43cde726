#pragma once

// The plugin entry point. A plugin is a shared object exporting one extern "C" function,
// `opd_plugin_entry`, that returns a plain struct: its size and ABI version first, then name,
// version, build fingerprint and the register/shutdown callbacks. The plugin manager checks the
// struct before calling anything else. Exceptions never cross this boundary: callbacks report
// through the status they return and the message they set on the context.
//
// A plugin author writes only registrations:
//
//   #include "opd/plugin.h"
//   OPD_PLUGIN(mybackend, "0.1.0") {}          // optional body: runs first; may call
//                                              // opd::plugin_unavailable("no device")
//   OPD_LIBRARY_IMPL(aten, PrivateUse1, m) { m.impl("add.Tensor", &my_add); }
//
// The OPD_LIBRARY* blocks of a plugin do not register at dlopen: they run when the manager calls
// `register`, and are undone by `shutdown`.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>

#include "opd/abi.h"
#include "opd/export.h"
#include "opd/library.h"
#include "opd/version.h"

// The plugin ABI version; what bumps the major and what the minor: Note [Plugin ABI] (abi.h).
// 2.0: OperatorHandle::check_signature, which typed<Sig>() called, became
// OperatorEntry::check_signature (it reads the kernels under the registration mutex); plugins
// call opd::release_plugin_self_reference (Note [Plugin self reference]); the fingerprint names
// the opdispatch version. 1.x plugins do not load.
// 3.0: plugins compile against plugin_api/ alone (opdispatch::plugin_api). The thread's dispatch
// keys (ThreadDispatchKeys) are split from the reclaimer's counters, which are the core's own;
// the autograd plugin's thread state (tls_autograd_state) gave way to per-plugin slots
// (opd/plugin_thread_state.h); OperatorHandle's members are calls into the core
// (opd/operator_handle.h); opd::redispatch:: functions are generated. 2.x plugins do not load.
// 3.1: Library registrations with a RegistrationSite that is not C++ source (the Python
// package's file and line); additions only.
// 3.2: operator tags (opd/tag.h): Library::def(schema, TagSet), OperatorHandle::has_tag and
// tags(); additions only.
// 3.3: resizable storages (Note [Resizable storage] in opd/storage.h): Storage::create makes a
// detail::FlaggedStorageImpl, StorageImpl::resizable() and set_resizable(); alias analysis
// kinds (Library::def with an AliasAnalysisKind, OperatorEntry::alias_analysis), Library::impl
// with a RegistrationDebug, Library::reset_to; additions only.
// 3.4: the typed API of the operators of Operators I (opd::cumsum, Tensor::cumsum, ...: about
// 450 new overloads in opd/ops.h and opd/tensor_methods.inc); additions only.
// 3.5: the rest of Operators I (masked_scatter, index_copy, kthvalue, xlogy, kron, cross,
// linalg_cross, maximum/minimum/where out= forms) and the methods of torch's variants for them;
// additions only.
// 3.6: opd::Generator and default_generator(), reserve_random through a Generator, the typed API
// of `Generator?` arguments (the random fills, multinomial, the factories' generator overloads),
// the activation functions of Operators II, the in-place view operators, view.dtype, the out=
// overloads with several outputs (sort.values, max.dim_max...); additions only.
// 3.7: the typed API of the neural-network operators of Operators II (convolution, pooling,
// padding, upsampling, the norms, embedding, dropout, the losses, one_hot, bilinear,
// scaled_dot_product_attention...) and `bool[N]` arguments as std::array<bool, N> (boxing.h);
// additions only.
// 3.8: the vendor kit: opd::cpu_fallback, cpu_fallback_quiet and cpu_fallback_with
// (opd/cpu_fallback.h), opd::testing::opcheck with its error types (opd/testing/opcheck.h, host
// side), opd::embedding_renorm_; additions only.
// 3.9: device guards (opd/device_guard.h: register_device_guard, device_guard_impl,
// ensure_has_index, Library::device_guard); additions only.
// 4.0: the key layout of the wrapper layers and the vendor slots (Note [Key layout]): the
// dispatch keys PrivateUse2, PrivateUse3 with their autograd keys, Python, Functionalize and
// PythonTLSSnapshot renumber every key above CUDA, and DeviceType gains PrivateUse2 and
// PrivateUse3. The vendor slots (privateuse_backend_name, privateuse_slot_named, and opd/
// privateuse.h: register_privateuse_backend, claimed_privateuse_slot, privateuse_slot_holder,
// OPD_LIBRARY_IMPL_PRIVATEUSE); dispatch modes (core, host side: opd/dispatch_mode.h); the typed
// API of the *_copy view operators and as_strided_scatter. 3.x plugins do not load.
#define OPD_PLUGIN_ABI_MAJOR 4
#define OPD_PLUGIN_ABI_MINOR 0
#define OPD_STRINGIFY_IMPL(x) #x
#define OPD_STRINGIFY(x) OPD_STRINGIFY_IMPL(x)

// What a plugin must have been built with to share objects with the host: same opd version,
// plugin ABI major, compiler family and major version, C++ standard library and its string ABI
// ("opd-0.1.0;abi1;gcc-12;libstdc++-12-cxx11abi1"). The manager compares it whole.
#if defined(__clang__)
#define OPD_COMPILER_ID "clang-" OPD_STRINGIFY(__clang_major__)
#elif defined(__GNUC__)
#define OPD_COMPILER_ID "gcc-" OPD_STRINGIFY(__GNUC__)
#else
#define OPD_COMPILER_ID "unknown"
#endif
#if defined(_GLIBCXX_RELEASE)
#define OPD_STDLIB_ID \
  "libstdc++-" OPD_STRINGIFY(_GLIBCXX_RELEASE) "-cxx11abi" OPD_STRINGIFY(_GLIBCXX_USE_CXX11_ABI)
#elif defined(_LIBCPP_VERSION)
#define OPD_STDLIB_ID "libc++-" OPD_STRINGIFY(_LIBCPP_VERSION)
#else
#define OPD_STDLIB_ID "unknown"
#endif
#define OPD_BUILD_FINGERPRINT                                                       \
  "opd-" OPD_VERSION ";abi" OPD_STRINGIFY(OPD_PLUGIN_ABI_MAJOR) ";" OPD_COMPILER_ID \
                                                                ";" OPD_STDLIB_ID

extern "C" {

// Opaque: the manager's record of the load in progress.
struct opd_plugin_context;

enum opd_plugin_status : int32_t {
  OPD_PLUGIN_OK = 0,
  OPD_PLUGIN_UNAVAILABLE = 1,  // cannot run here (no device, no driver); message says why
  OPD_PLUGIN_ERROR = 2,        // registration failed; message says why
};

struct opd_plugin_info {
  uint32_t struct_size;  // sizeof(opd_plugin_info) as the plugin was built
  uint16_t abi_major;
  uint16_t abi_minor;
  const char* name;
  const char* version;
  const char* build_fingerprint;  // OPD_BUILD_FINGERPRINT
  // Registers every kernel and operator of the plugin. On failure the plugin has undone its
  // registrations before returning.
  opd_plugin_status (*register_fn)(opd_plugin_context* ctx);
  // Undoes the registrations and releases the plugin's resources (threads, handles). Optional.
  void (*shutdown_fn)(void);
};

// The entry struct's layout is the first thing the manager reads (Note [Plugin ABI]).
#if defined(__LP64__)
static_assert(sizeof(opd_plugin_info) == 48 && alignof(opd_plugin_info) == 8 &&
                  offsetof(opd_plugin_info, struct_size) == 0 &&
                  offsetof(opd_plugin_info, abi_major) == 4 &&
                  offsetof(opd_plugin_info, abi_minor) == 6 &&
                  offsetof(opd_plugin_info, name) == 8 &&
                  offsetof(opd_plugin_info, version) == 16 &&
                  offsetof(opd_plugin_info, build_fingerprint) == 24 &&
                  offsetof(opd_plugin_info, register_fn) == 32 &&
                  offsetof(opd_plugin_info, shutdown_fn) == 40,
              "opd_plugin_info changed layout: see Note [Plugin ABI] in opd/abi.h");
#endif

// The symbol every plugin exports.
typedef const opd_plugin_info* (*opd_plugin_entry_fn)(void);
#define OPD_PLUGIN_ENTRY_SYMBOL "opd_plugin_entry"

// Host side, exported by libopd_core.so: sets the message a failing register_fn returns with.
OPD_API void opd_plugin_set_message(opd_plugin_context* ctx, const char* message);
}

namespace opd {

// Thrown from a plugin's body or an OPD_LIBRARY block to report that the plugin cannot run on
// this machine; the manager records the plugin as `unavailable` with `reason`.
class OPD_API PluginUnavailable : public Error {
 public:
  using Error::Error;
  ~PluginUnavailable() override;
};
[[noreturn]] inline void plugin_unavailable(const std::string& reason) {
  throw PluginUnavailable(reason);
}

// A reference that keeps the calling plugin's library mapped: store it with any object the
// plugin hands to the host whose code or data lives in the plugin (a storage deleter, a
// callback). Empty outside a plugin load (executables need none). Valid from register_fn on.
OPD_API std::shared_ptr<void> current_plugin_reference();

namespace detail {

// Note [Plugin self reference]
// this_plugin_reference() is read by kernels on any thread, and a kernel still running when its
// plugin is unloaded must still get the reference (a storage it returns keeps the library
// mapped). So the reference lives in an immutable heap holder published through an atomic
// pointer: register publishes a new holder; shutdown does not clear the slot but hands the
// holder to the host (release_plugin_self_reference), which clears the slot and frees the holder
// only once no dispatcher call that may have started before can still be running
// (Note [Kernel reclamation]). Every reader runs in such a call (kernels, autograd's backward)
// or in register itself. The slot is cleared only if it still points to that holder: a load of
// the same library, still mapped, may have published a newer one meanwhile.
struct PluginSelfReference {
  std::shared_ptr<void> library;
};

}  // namespace detail

// Host side (since ABI 2.0): once every dispatcher call that may have started before this call has
// returned, sets `*slot` to null if it still holds `holder`, then deletes `holder` (dropping its
// reference on the library, which may unmap it). `holder` must come from `new`; the caller gives
// it up. Null `holder`: nothing. Never throws.
OPD_API void release_plugin_self_reference(std::atomic<const detail::PluginSelfReference*>* slot,
                                           const detail::PluginSelfReference* holder) noexcept;

namespace detail {
// The published holder of this module's reference on its own library (null when none).
inline std::atomic<const PluginSelfReference*>& plugin_self_slot() {
  static std::atomic<const PluginSelfReference*> slot{nullptr};
  return slot;
}
// The holder this module published and has not yet handed to the host. Only register and
// shutdown touch it, and the plugin manager never runs them concurrently.
inline const PluginSelfReference*& plugin_self_owned() {
  static const PluginSelfReference* owned = nullptr;
  return owned;
}
inline void retire_plugin_self_reference() noexcept {
  if (const PluginSelfReference* h = plugin_self_owned()) {
    plugin_self_owned() = nullptr;
    release_plugin_self_reference(&plugin_self_slot(), h);
  }
}
inline void publish_plugin_self_reference() {
  retire_plugin_self_reference();
  std::shared_ptr<void> library = current_plugin_reference();
  if (!library) return;
  auto* h = new PluginSelfReference{std::move(library)};
  plugin_self_owned() = h;
  plugin_self_slot().store(h, std::memory_order_release);
}
// This module's shutdown hook (see on_plugin_shutdown); null when none.
inline void (*&plugin_shutdown_hook())() {
  static void (*hook)() = nullptr;
  return hook;
}
inline void run_plugin_shutdown_hook() noexcept {
  if (void (*hook)() = plugin_shutdown_hook()) hook();
}
}  // namespace detail

// Inside a plugin, from its OPD_PLUGIN body: `hook` runs whenever the plugin shuts down
// (unload, reload, failed load), after its registrations are undone. It must stop every thread
// the plugin started: once unloaded, no thread may be left running the plugin's code. Must not
// throw.
inline void on_plugin_shutdown(void (*hook)()) { detail::plugin_shutdown_hook() = hook; }

// Inside a plugin: a reference that keeps this plugin's library mapped, for objects it hands to
// the host (a storage's owner). Empty in executables and before the plugin is registered.
// Thread-safe, also while the plugin is being unloaded (Note [Plugin self reference]).
inline std::shared_ptr<void> this_plugin_reference() {
  const detail::PluginSelfReference* h = detail::plugin_self_slot().load(std::memory_order_acquire);
  return h ? h->library : nullptr;
}

namespace detail {

// Runs the plugin body and then every OPD_LIBRARY* block of this plugin; on any failure undoes
// what already ran and reports through ctx. Never throws.
template <class Body>
opd_plugin_status run_plugin_registration(opd_plugin_context* ctx, Body body) {
  auto& inits = LibraryInit::pending_library_inits();
  size_t ran = 0;
  auto undo = [&] {
    while (ran > 0) inits[--ran]->reset();
    run_plugin_shutdown_hook();
    retire_plugin_self_reference();
  };
  try {
    publish_plugin_self_reference();
    body();
    for (; ran < inits.size(); ++ran) inits[ran]->run();
    return OPD_PLUGIN_OK;
  } catch (const PluginUnavailable& e) {
    undo();
    opd_plugin_set_message(ctx, e.msg().c_str());
    return OPD_PLUGIN_UNAVAILABLE;
  } catch (const Error& e) {
    undo();
    opd_plugin_set_message(ctx, e.msg().c_str());
  } catch (const std::exception& e) {
    undo();
    opd_plugin_set_message(ctx, e.what());
  } catch (...) {
    undo();
    opd_plugin_set_message(ctx, "unknown exception");
  }
  return OPD_PLUGIN_ERROR;
}

inline void run_plugin_shutdown() noexcept {
  auto& inits = LibraryInit::pending_library_inits();
  for (size_t i = inits.size(); i > 0; --i) inits[i - 1]->reset();
  run_plugin_shutdown_hook();
  retire_plugin_self_reference();
}

}  // namespace detail
}  // namespace opd

// Defines the plugin's entry point. The braces that follow are the plugin body, run before the
// OPD_LIBRARY* blocks when the plugin is loaded.
#define OPD_PLUGIN(plugin_name, plugin_version)                                                 \
  static void opd_plugin_body();                                                                \
  static opd_plugin_status opd_plugin_register(opd_plugin_context* ctx) {                       \
    return ::opd::detail::run_plugin_registration(ctx, &opd_plugin_body);                       \
  }                                                                                             \
  static void opd_plugin_shutdown() { ::opd::detail::run_plugin_shutdown(); }                   \
  extern "C" __attribute__((visibility("default"))) const opd_plugin_info* opd_plugin_entry() { \
    static const opd_plugin_info info = {sizeof(opd_plugin_info), OPD_PLUGIN_ABI_MAJOR,         \
                                         OPD_PLUGIN_ABI_MINOR,    #plugin_name,                 \
                                         plugin_version,          OPD_BUILD_FINGERPRINT,        \
                                         &opd_plugin_register,    &opd_plugin_shutdown};        \
    return &info;                                                                               \
  }                                                                                             \
  static void opd_plugin_body()
