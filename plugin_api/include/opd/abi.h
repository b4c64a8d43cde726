#pragma once

// Note [Plugin ABI]
// A plugin is compiled against plugin_api/ and loaded into a host built separately, so every
// type whose layout both sides read is part of the ABI: the entry struct (plugin.h), and the
// types the inline code of plugin_api/ touches on the other side's objects (a Tensor's impl, a
// storage, an IValue, a KernelFunction, the thread's dispatch state). Their layouts are pinned
// below; a change that breaks one fails every build until it is made on purpose.
//
// OPD_PLUGIN_ABI_MAJOR (plugin.h) is bumped by any change that a plugin built before it cannot
// survive: a field of one of these types moved, resized, retyped or removed; an exported
// function removed or its signature changed; an inline function whose code plugins carry
// changed its meaning; an enumerator renumbered (DispatchKey, ScalarType, DeviceType...). The
// manager refuses a plugin of another major version.
// OPD_PLUGIN_ABI_MINOR is bumped by additions that plugins built before them never notice: a
// new exported function, a new overload, a new type. A plugin built for a newer minor than the
// host may call what the host lacks, and is refused; an older one is accepted. Appending a field
// to opd_plugin_info is a minor change only together with the manager accepting the smaller
// struct_size of older plugins (today it requires the whole struct, 48 bytes in 1.0).
//
// Both versions are checked at build time against abi/ (tools/abi-check, run by CI): the
// exported interface of libopd_core.so must match the baseline of the current version, so an
// incompatible change fails CI unless the baseline and the version are updated in the same
// commit (tools/abi-check --update writes the new baseline).
//
// The build fingerprint (OPD_BUILD_FINGERPRINT) adds what the layouts depend on but the
// versions cannot see: the opdispatch version, the compiler family and the C++ standard
// library with its string ABI.

#include <cstddef>

#include "opd/device.h"
#include "opd/dispatch_key_set.h"
#include "opd/ivalue.h"
#include "opd/kernel_function.h"
#include "opd/local_dispatch_key_set.h"
#include "opd/operator_handle.h"
#include "opd/plugin_thread_state.h"
#include "opd/scalar.h"
#include "opd/storage.h"
#include "opd/tensor.h"
#include "opd/tensor_options.h"

namespace opd::detail {

// Size and alignment of a type that crosses the plugin boundary (LP64: x86-64, aarch64).
template <class T, size_t Size, size_t Align>
constexpr bool kPinnedLayout = sizeof(T) == Size && alignof(T) == Align;

#if defined(__LP64__)
static_assert(kPinnedLayout<Device, 2, 1>, "opd::Device changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<DispatchKeySet, 8, 8>,
              "opd::DispatchKeySet changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<ThreadDispatchKeys, 16, 8> &&
                  offsetof(ThreadDispatchKeys, included) == 0 &&
                  offsetof(ThreadDispatchKeys, excluded) == 8,
              "opd::detail::ThreadDispatchKeys changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<PluginThreadStateSlot, 32, 16> && kPluginThreadStateSlots == 4,
              "opd::detail::PluginThreadStateSlot changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<OperatorHandle, 8, 8>,
              "opd::OperatorHandle changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<LocalDispatchKeySet, 16, 8>,
              "opd::LocalDispatchKeySet changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<KernelFunction, 32, 8>,
              "opd::KernelFunction changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<IValue, 24, 8>, "opd::IValue changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<Scalar, 24, 8>, "opd::Scalar changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<TensorOptions, 13, 1>,
              "opd::TensorOptions changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<intrusive_ptr_target, 16, 8>,
              "opd::intrusive_ptr_target changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<Tensor, 8, 8>, "opd::Tensor changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<TensorImpl, 168, 8>,
              "opd::TensorImpl changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<Storage, 8, 8>, "opd::Storage changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<StorageImpl, 72, 8>,
              "opd::StorageImpl changed layout: see Note [Plugin ABI]");
static_assert(kPinnedLayout<FlaggedStorageImpl, 72, 8>,
              "opd::detail::FlaggedStorageImpl changed layout: see Note [Plugin ABI]");
#endif

}  // namespace opd::detail
