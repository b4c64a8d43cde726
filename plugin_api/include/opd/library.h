#pragma once

// Registering operators and kernels: the Library API and the OPD_LIBRARY* macros. Executables
// and tests register at static initialisation; plugins register when the plugin manager calls
// their entry point.

#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "opd/alias_analysis.h"
#include "opd/boxing.h"
#include "opd/dispatch_key.h"
#include "opd/export.h"
#include "opd/kernel_function.h"
#include "opd/registration_handle.h"
#include "opd/tag.h"

namespace opd {

class DeviceGuardImpl;
class FunctionSchema;

namespace detail {

// Parses a schema inferred from a C++ signature ("(Tensor _0) -> Tensor _0"). Defined in the
// core; callers cache the result per signature.
OPD_API std::shared_ptr<const FunctionSchema> parse_inferred_schema(const std::string& text);

// The schema implied by Sig, as text and parsed, computed once per signature and module.
template <class Sig>
struct InferredSchema {
  static const std::string& text() {
    static const std::string t = infer_schema_string<Sig>();
    return t;
  }
  static const std::shared_ptr<const FunctionSchema>& parsed() {
    static const std::shared_ptr<const FunctionSchema> s = parse_inferred_schema(text());
    return s;
  }
};

template <class F>
inline constexpr bool kIsBoxedCallable =
    std::is_invocable_r_v<void, F&, const OperatorHandle&, Stack*> ||
    std::is_invocable_r_v<void, F&, const OperatorHandle&, DispatchKeySet, Stack*>;

template <class F>
struct BoxedCallableFunctor final : OperatorKernel {
  explicit BoxedCallableFunctor(F f) : fn(std::move(f)) {}
  void operator()(const OperatorHandle& op, DispatchKeySet ks, Stack* s) {
    if constexpr (std::is_invocable_v<F&, const OperatorHandle&, DispatchKeySet, Stack*>) {
      fn(op, ks, s);
    } else {
      fn(op, s);
    }
  }
  F fn;
};

}  // namespace detail

// A kernel as given to Library::def/impl/fallback, with what its C++ type tells: the signature
// and the schema it implies. Converts implicitly from a function pointer, a lambda or a functor,
// unboxed (`Tensor(const Tensor&, int64_t)`, optionally taking DispatchKeySet first) or boxed
// (`void(const OperatorHandle&, Stack*)`, optionally with DispatchKeySet after the handle).
class CppFunction {
 public:
  // Callables only, so that def(schema, {Tag::core}) is not read as def(schema, kernel).
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, CppFunction> &&
           (std::is_class_v<std::decay_t<F>> ||
            std::is_function_v<std::remove_pointer_t<std::decay_t<F>>>))
      CppFunction(F&& f) {  // NOLINT: implicit by design, as torch::CppFunction
    using D = std::decay_t<F>;
    if constexpr (detail::kIsCompileTimeFunction<D>) {
      using Sig = typename detail::CallableTraits<decltype(D::kFunction)>::Signature;
      kernel_ = KernelFunction::make_from_unboxed_function<D::kFunction>();
      signature_ = CppSignature::make<Sig>();
      inferred_text_ = &detail::InferredSchema<Sig>::text();
      inferred_schema_ = detail::InferredSchema<Sig>::parsed();
    } else if constexpr (detail::kIsBoxedCallable<D>) {
      kernel_ = KernelFunction::make_from_boxed_functor(
          std::make_unique<detail::BoxedCallableFunctor<D>>(std::forward<F>(f)));
    } else {
      using Sig = typename detail::CallableTraits<D>::Signature;
      kernel_ = KernelFunction::make_from_unboxed_callable(D(std::forward<F>(f)));
      signature_ = CppSignature::make<Sig>();
      inferred_text_ = &detail::InferredSchema<Sig>::text();
      inferred_schema_ = detail::InferredSchema<Sig>::parsed();
    }
  }
  // A kernel whose key is skipped (see KernelFunction::make_fallthrough).
  static CppFunction make_fallthrough() { return CppFunction(KernelFunction::make_fallthrough()); }
  static CppFunction from_kernel(KernelFunction k) { return CppFunction(std::move(k)); }

  const KernelFunction& kernel() const { return kernel_; }
  const std::optional<CppSignature>& signature() const { return signature_; }
  // "(Tensor _0) -> Tensor _0" for unboxed kernels; nullopt for boxed ones.
  std::optional<std::string_view> inferred_schema() const {
    if (!inferred_text_) return std::nullopt;
    return *inferred_text_;
  }
  // The same, parsed; null for boxed kernels.
  const std::shared_ptr<const FunctionSchema>& parsed_inferred_schema() const {
    return inferred_schema_;
  }

 private:
  explicit CppFunction(KernelFunction k) : kernel_(std::move(k)) {}
  KernelFunction kernel_;
  std::optional<CppSignature> signature_;
  const std::string* inferred_text_ = nullptr;  // static storage, per signature
  std::shared_ptr<const FunctionSchema> inferred_schema_;
};

// Where a registration was made when that is not C++ source: a Python file and line, from the
// Python package. Debug strings read "registered at <file>:<line>", as for C++ sites.
struct RegistrationSite {
  std::string_view file;
  uint32_t line = 0;
};

// A kernel registration's debug text given outright ("fn_cpu"), as torch's
// CppFunction::debug: dumps and errors show it where they would show "registered at
// <file>:<line>". For test tools that name kernels (opdispatch._C._dispatch_library).
struct RegistrationDebug {
  std::string_view text;
};

// A set of registrations for one namespace, undone when the Library is destroyed or reset().
//   DEF:      defines operators of `ns`; one per namespace in the process.
//   FRAGMENT: defines more operators of `ns`; any number.
//   IMPL:     implements operators of `ns` (or, with ns "_", registers fallbacks), for `key`
//             when given.
// Every method throws Error for misuse (naming what and where) and leaves nothing registered
// by the failing call. Not thread-safe itself; registrations are serialised by the dispatcher.
class OPD_API Library {
 public:
  enum Kind { DEF, FRAGMENT, IMPL };

  Library(Kind kind, std::string ns, std::optional<DispatchKey> key = std::nullopt,
          std::source_location loc = std::source_location::current());
  Library(Library&&) noexcept;
  Library& operator=(Library&&) noexcept;
  ~Library();

  // Defines an operator from its schema ("foo(Tensor x) -> Tensor"; the namespace may be
  // omitted). With a kernel, also registers it as the CompositeImplicitAutograd kernel, and
  // the schema may be a bare name, inferred from the kernel.
  Library& def(std::string_view schema,
               std::source_location loc = std::source_location::current()) &;
  // With the definition's tags (Note [Operator tags]): def("foo(Tensor x) -> Tensor",
  // {Tag::pointwise}), as torch::Library::def(schema, {at::Tag::pointwise}).
  Library& def(std::string_view schema, TagSet tags,
               std::source_location loc = std::source_location::current()) &;
  // With the definition's alias analysis kind (Note [Alias analysis kind]), as
  // torch::Library::def(torch::schema("foo(Tensor x) -> Tensor", AliasAnalysisKind::...)). The
  // overloads without one give FROM_SCHEMA, or CONSERVATIVE when the schema is inferred from
  // the kernel. Throws Error when the schema has alias annotations and the kind is not
  // FROM_SCHEMA.
  Library& def(std::string_view schema, AliasAnalysisKind alias_analysis, TagSet tags = {},
               std::source_location loc = std::source_location::current()) &;
  Library& def(std::string_view name_or_schema, CppFunction f,
               std::source_location loc = std::source_location::current()) &;
  // Registers a kernel for `name` ("foo" or "foo.overload") to the library's key, or
  // CompositeImplicitAutograd when the library has none.
  Library& impl(std::string_view name, CppFunction f,
                std::source_location loc = std::source_location::current()) &;
  // Registers to an explicit key (which must agree with the library's key, if any).
  Library& impl(std::string_view name, DispatchKey key, CppFunction f,
                std::source_location loc = std::source_location::current()) &;
  // A backend fallback for the library's key (alias keys expand to their runtime keys).
  // Only in an IMPL library of namespace "_".
  Library& fallback(CppFunction f, std::source_location loc = std::source_location::current()) &;
  // The device guard of the library's backend (opd/device_guard.h, Note [Device guards]) while
  // the library's registrations stand. Only in an IMPL library of namespace "_" whose key is a
  // backend key with devices of its own (CUDA, PrivateUse1).
  Library& device_guard(std::shared_ptr<const DeviceGuardImpl> impl,
                        std::source_location loc = std::source_location::current()) &;

  // The same with a registration site that is not C++ source (see RegistrationSite). impl()
  // with no key registers to the library's key, or CompositeImplicitAutograd when it has none.
  Library(Kind kind, std::string ns, std::optional<DispatchKey> key, RegistrationSite site);
  Library& def(std::string_view schema, RegistrationSite site) &;
  Library& def(std::string_view schema, TagSet tags, RegistrationSite site) &;
  // nullopt: no kind given, as PyTorch's legacy registration (CONSERVATIVE, dumped as the
  // default), for the testing handle's def_legacy.
  Library& def(std::string_view schema, std::optional<AliasAnalysisKind> alias_analysis,
               TagSet tags, RegistrationSite site) &;
  Library& impl(std::string_view name, std::optional<DispatchKey> key, CppFunction f,
                RegistrationSite site) &;
  // The same with the kernel's debug text given outright (see RegistrationDebug).
  Library& impl(std::string_view name, std::optional<DispatchKey> key, CppFunction f,
                RegistrationDebug debug) &;
  Library& fallback(CppFunction f, RegistrationSite site) &;

  // Undoes every registration of this library, newest first.
  void reset();
  // Undoes the registrations made since registration_count() was `count`, newest first: for
  // a group of registrations that must be made together or not at all. Throws Error when
  // `count` is more than registration_count().
  void reset_to(size_t count);

  Kind kind() const { return kind_; }
  const std::string& ns() const { return ns_; }
  std::optional<DispatchKey> key() const { return key_; }
  size_t registration_count() const { return registrations_.size(); }

 private:
  std::string debug(std::source_location loc) const;
  std::string debug(RegistrationSite site) const;
  Library& register_impl(std::string_view name, std::optional<DispatchKey> key, CppFunction f,
                         std::source_location loc);
  Library& register_impl(std::string_view name, std::optional<DispatchKey> key, CppFunction f,
                         RegistrationSite site);
  // The impl itself, with the registration's debug text.
  Library& register_kernel(std::string_view name, std::optional<DispatchKey> key, CppFunction f,
                           std::string debug);

  Kind kind_;
  std::string ns_;
  std::optional<DispatchKey> key_;
  std::string file_;
  uint32_t line_;
  std::vector<RegistrationHandle> registrations_;
};

OPD_API const char* to_string(Library::Kind kind);

namespace detail {

using LibraryInitFn = void (*)(Library&);

// The object an OPD_LIBRARY* block defines. In an executable it registers at static
// initialisation. In a plugin (OPD_BUILDING_PLUGIN) it only records itself; the plugin's entry
// point runs the recorded blocks when the plugin manager loads it, never at dlopen.
class LibraryInit {
 public:
  LibraryInit(Library::Kind kind, const char* ns, std::optional<DispatchKey> key, LibraryInitFn fn,
              std::source_location loc)
      : kind_(kind), ns_(ns), key_(key), fn_(fn), loc_(loc) {
#if defined(OPD_BUILDING_PLUGIN)
    pending_library_inits().push_back(this);
#else
    run();
#endif
  }
  // Registers the block's content; the Library lives until reset() or destruction.
  void run() {
    lib_.emplace(kind_, ns_, key_, loc_);
    fn_(*lib_);
  }
  void reset() { lib_.reset(); }
  // The blocks of this module (a plugin has its own list: hidden visibility).
  static std::vector<LibraryInit*>& pending_library_inits() {
    static std::vector<LibraryInit*> inits;
    return inits;
  }

 private:
  Library::Kind kind_;
  const char* ns_;
  std::optional<DispatchKey> key_;
  LibraryInitFn fn_;
  std::source_location loc_;
  std::optional<Library> lib_;
};

}  // namespace detail
}  // namespace opd

#define OPD_CONCAT_IMPL(a, b) a##b
#define OPD_CONCAT(a, b) OPD_CONCAT_IMPL(a, b)
#define OPD_UID(prefix) OPD_CONCAT(prefix, __COUNTER__)

// OPD_LIBRARY(ns, m) { m.def("foo(Tensor x) -> Tensor"); } defines the operators of `ns`.
#define OPD_LIBRARY(ns, m)                                            \
  static void opd_library_init_##ns(::opd::Library&);                 \
  static ::opd::detail::LibraryInit opd_library_static_init_##ns(     \
      ::opd::Library::DEF, #ns, std::nullopt, &opd_library_init_##ns, \
      std::source_location::current());                               \
  void opd_library_init_##ns(::opd::Library& m)

// OPD_LIBRARY_FRAGMENT(ns, m) { ... } defines more operators of `ns`; may appear many times.
#define OPD_LIBRARY_FRAGMENT(ns, m) OPD_LIBRARY_FRAGMENT_UID(ns, m, OPD_UID(opd_fragment_))
#define OPD_LIBRARY_FRAGMENT_UID(ns, m, uid)                                \
  static void OPD_CONCAT(uid, _init)(::opd::Library&);                      \
  static ::opd::detail::LibraryInit OPD_CONCAT(uid, _static)(               \
      ::opd::Library::FRAGMENT, #ns, std::nullopt, &OPD_CONCAT(uid, _init), \
      std::source_location::current());                                     \
  void OPD_CONCAT(uid, _init)(::opd::Library & m)

// OPD_LIBRARY_IMPL(ns, Key, m) { m.impl("foo", kernel); } registers kernels of `ns` for Key;
// OPD_LIBRARY_IMPL(_, Key, m) { m.fallback(...); } registers a backend fallback.
#define OPD_LIBRARY_IMPL(ns, k, m) OPD_LIBRARY_IMPL_UID(ns, k, m, OPD_UID(opd_impl_))
#define OPD_LIBRARY_IMPL_UID(ns, k, m, uid)                                      \
  static void OPD_CONCAT(uid, _init)(::opd::Library&);                           \
  static ::opd::detail::LibraryInit OPD_CONCAT(uid, _static)(                    \
      ::opd::Library::IMPL, #ns, ::opd::DispatchKey::k, &OPD_CONCAT(uid, _init), \
      std::source_location::current());                                          \
  void OPD_CONCAT(uid, _init)(::opd::Library & m)
