#include "opd/library.h"

#include <fmt/format.h>

#include <mutex>
#include <unordered_map>

#include "dispatch/registration_context.h"
#include "opd/device_guard.h"
#include "opd/dispatcher.h"
#include "opd/error.h"

namespace opd {
namespace {

// "foo" or "foo.bar" in namespace `ns`; an explicit namespace must be `ns`.
OperatorName qualify(OperatorName op, const std::string& ns, Library::Kind kind, const char* what) {
  auto sep = op.name.find("::");
  if (sep == std::string::npos) {
    op.name = ns + "::" + op.name;
  } else {
    std::string explicit_ns = op.name.substr(0, sep);
    OPD_CHECK(explicit_ns == ns,
              "Explicitly provided namespace ({}) in {} does not match namespace of enclosing {} "
              "block ({}).  Move this definition to the {} block corresponding to this namespace "
              "(and consider deleting the namespace from your schema string.)",
              explicit_ns, what, to_string(kind), ns,
              kind == Library::IMPL ? "OPD_LIBRARY_IMPL" : "(unique) OPD_LIBRARY");
  }
  return op;
}

// An impl's explicit key must be the library's, if it has one.
void check_key_agrees(std::optional<DispatchKey> library_key, DispatchKey key, Library::Kind kind,
                      std::string_view where) {
  OPD_CHECK(!library_key || *library_key == key,
            "Explicitly provided dispatch key ({}) is inconsistent with the dispatch key of the "
            "enclosing {} block ({}).  Please declare a separate {} block for this dispatch key "
            "and move your impl() there. ({})",
            to_string(key), to_string(kind), to_string(*library_key), to_string(kind), where);
}

RegistrationSite site_of(const std::source_location& loc) {
  return {loc.file_name(), static_cast<uint32_t>(loc.line())};
}

}  // namespace

namespace detail {
std::shared_ptr<const FunctionSchema> parse_inferred_schema(const std::string& text) {
  return std::make_shared<const FunctionSchema>(parse_schema(text));
}
}  // namespace detail

const char* to_string(Library::Kind kind) {
  switch (kind) {
    case Library::DEF:
      return "DEF";
    case Library::FRAGMENT:
      return "FRAGMENT";
    case Library::IMPL:
      return "IMPL";
  }
  return "?";
}

Library::Library(Kind kind, std::string ns, std::optional<DispatchKey> key,
                 std::source_location loc)
    : Library(kind, std::move(ns), key, site_of(loc)) {}

Library::Library(Kind kind, std::string ns, std::optional<DispatchKey> key, RegistrationSite site)
    : kind_(kind), ns_(std::move(ns)), key_(key), file_(site.file), line_(site.line) {
  OPD_CHECK(!ns_.empty(), "Library: the namespace is empty ({})", debug(site));
  OPD_CHECK(kind_ == IMPL || ns_ != "_",
            "Library: the namespace _ (all namespaces) is only valid in an IMPL library, for "
            "fallbacks; got a {} library ({})",
            to_string(kind_), debug(site));
  OPD_CHECK(!key_ || *key_ != DispatchKey::Undefined,
            "Library: Undefined is not a dispatch key to register to ({})", debug(site));
  if (kind_ == DEF) {
    registrations_.push_back(Dispatcher::singleton().register_library(ns_, debug(site)));
  }
}

Library::Library(Library&&) noexcept = default;
Library& Library::operator=(Library&& o) noexcept {
  if (this != &o) {
    reset();
    kind_ = o.kind_;
    ns_ = std::move(o.ns_);
    key_ = o.key_;
    file_ = std::move(o.file_);
    line_ = o.line_;
    registrations_ = std::move(o.registrations_);
  }
  return *this;
}

Library::~Library() { reset(); }

void Library::reset() { reset_to(0); }

void Library::reset_to(size_t count) {
  OPD_CHECK(count <= registrations_.size(),
            "Library::reset_to({}): the {} library of namespace {} has {} registrations", count,
            to_string(kind_), ns_, registrations_.size());
  while (registrations_.size() > count) {
    registrations_.back().reset();
    registrations_.pop_back();
  }
}

std::string Library::debug(std::source_location loc) const { return debug(site_of(loc)); }

std::string Library::debug(RegistrationSite site) const {
  // Plain concatenation: this runs for every registration, and fmt's general path is slower.
  std::string out = "registered at ";
  out += site.file;
  out += ':';
  out += std::to_string(site.line);
  return out;
}

Library& Library::def(std::string_view schema_text, std::source_location loc) & {
  return def(schema_text, site_of(loc));
}

Library& Library::def(std::string_view schema_text, TagSet tags, std::source_location loc) & {
  return def(schema_text, tags, site_of(loc));
}

Library& Library::def(std::string_view schema_text, RegistrationSite site) & {
  return def(schema_text, TagSet(), site);
}

Library& Library::def(std::string_view schema_text, TagSet tags, RegistrationSite site) & {
  return def(schema_text, AliasAnalysisKind::FROM_SCHEMA, tags, site);
}

Library& Library::def(std::string_view schema_text, AliasAnalysisKind alias_analysis, TagSet tags,
                      std::source_location loc) & {
  return def(schema_text, alias_analysis, tags, site_of(loc));
}

Library& Library::def(std::string_view schema_text, std::optional<AliasAnalysisKind> alias_analysis,
                      TagSet tags, RegistrationSite site) & {
  OPD_CHECK(kind_ != IMPL,
            "Cannot define an operator inside of a IMPL block.  All def()s should be placed in the "
            "(unique) OPD_LIBRARY block for their namespace. ({})",
            debug(site));
  auto parsed = parse_schema_or_name(schema_text);
  OPD_CHECK(std::holds_alternative<FunctionSchema>(parsed),
            "def({}): a schema is required (\"name(Tensor x) -> Tensor\") when no kernel is "
            "given ({})",
            schema_text, debug(site));
  FunctionSchema schema = std::get<FunctionSchema>(std::move(parsed));
  OperatorName name = qualify(schema.operator_name(), ns_, kind_, "schema string");
  if (!(name == schema.operator_name())) schema = std::move(schema).with_name(std::move(name));
  registrations_.push_back(
      Dispatcher::singleton().register_def(std::move(schema), debug(site), tags, alias_analysis));
  return *this;
}

Library& Library::def(std::string_view name_or_schema, CppFunction f, std::source_location loc) & {
  OPD_CHECK(kind_ != IMPL,
            "Cannot define an operator inside of a IMPL block.  All def()s should be placed in the "
            "(unique) OPD_LIBRARY block for their namespace. ({})",
            debug(loc));
  auto parsed = parse_schema_or_name(name_or_schema);
  std::optional<FunctionSchema> schema;
  // As torch::Library: a schema written out is FROM_SCHEMA, an inferred one CONSERVATIVE.
  AliasAnalysisKind alias_analysis = AliasAnalysisKind::FROM_SCHEMA;
  if (auto* s = std::get_if<FunctionSchema>(&parsed)) {
    schema = std::move(*s);
  } else {
    alias_analysis = AliasAnalysisKind::CONSERVATIVE;
    OPD_CHECK(f.parsed_inferred_schema() != nullptr,
              "def({}): the schema cannot be inferred from a boxed kernel; give the full schema "
              "({})",
              name_or_schema, debug(loc));
    schema = f.parsed_inferred_schema()->with_name(std::get<OperatorName>(parsed));
  }
  OperatorName name = qualify(schema->operator_name(), ns_, kind_, "schema string");
  std::string overload_qualified = name.to_string();
  auto def_handle = Dispatcher::singleton().register_def(std::move(*schema).with_name(name),
                                                         debug(loc), TagSet(), alias_analysis);
  register_impl(overload_qualified, DispatchKey::CompositeImplicitAutograd, std::move(f), loc);
  // The def must outlive the impl: insert it below.
  registrations_.insert(registrations_.end() - 1, std::move(def_handle));
  return *this;
}

Library& Library::impl(std::string_view name, CppFunction f, std::source_location loc) & {
  return register_impl(name, key_, std::move(f), loc);
}

Library& Library::impl(std::string_view name, DispatchKey key, CppFunction f,
                       std::source_location loc) & {
  return impl(name, std::optional<DispatchKey>(key), std::move(f), site_of(loc));
}

Library& Library::impl(std::string_view name, std::optional<DispatchKey> key, CppFunction f,
                       RegistrationSite site) & {
  if (!key) return register_impl(name, key_, std::move(f), site);
  check_key_agrees(key_, *key, kind_, debug(site));
  return register_impl(name, key, std::move(f), site);
}

Library& Library::register_impl(std::string_view name, std::optional<DispatchKey> key,
                                CppFunction f, std::source_location loc) {
  return register_impl(name, key, std::move(f), site_of(loc));
}

Library& Library::impl(std::string_view name, std::optional<DispatchKey> key, CppFunction f,
                       RegistrationDebug debug) & {
  if (key) check_key_agrees(key_, *key, kind_, debug.text);
  return register_kernel(name, key ? key : key_, std::move(f), std::string(debug.text));
}

Library& Library::register_impl(std::string_view name, std::optional<DispatchKey> key,
                                CppFunction f, RegistrationSite site) {
  return register_kernel(name, key, std::move(f), debug(site));
}

Library& Library::register_kernel(std::string_view name, std::optional<DispatchKey> key,
                                  CppFunction f, std::string debug) {
  OPD_CHECK(ns_ != "_", "impl({}): an IMPL library of namespace _ can only register fallbacks ({})",
            name, debug);
  OperatorName op = qualify(parse_operator_name(name), ns_, kind_, "operator name");
  // Inside a plugin: only on a key its manifest declares (Note [Declared dispatch keys]).
  detail::check_declared_key(key.value_or(DispatchKey::CompositeImplicitAutograd),
                             "a kernel for " + op.to_string());
  registrations_.push_back(Dispatcher::singleton().register_impl(
      std::move(op), key, f.kernel(), f.signature(), f.parsed_inferred_schema(), std::move(debug)));
  return *this;
}

Library& Library::fallback(CppFunction f, std::source_location loc) & {
  return fallback(std::move(f), site_of(loc));
}

Library& Library::fallback(CppFunction f, RegistrationSite site) & {
  OPD_CHECK(kind_ == IMPL && ns_ == "_",
            "fallback(...): Fallback functions which apply to only a single namespace (you "
            "specified {}) are not supported.  If you intended to apply this fallback function "
            "globally, please define a separate block:\n\n    OPD_LIBRARY_IMPL(_, {}, m) {{ "
            "m.fallback(...); }}\n\n({})",
            ns_, key_ ? to_string(*key_) : "YourDispatchKey", debug(site));
  OPD_CHECK(key_.has_value(), "fallback(...): the IMPL library has no dispatch key ({})",
            debug(site));
  detail::check_declared_key(*key_, "a backend fallback");
  DispatchKeySet keys = runtime_keys_for(*key_);
  size_t before = registrations_.size();
  try {
    for (DispatchKey k : keys) {
      registrations_.push_back(
          Dispatcher::singleton().register_fallback(k, f.kernel(), debug(site)));
    }
  } catch (...) {
    while (registrations_.size() > before) registrations_.pop_back();
    throw;
  }
  return *this;
}

Library& Library::device_guard(std::shared_ptr<const DeviceGuardImpl> impl,
                               std::source_location loc) & {
  const std::string site = debug(loc);
  OPD_CHECK(kind_ == IMPL && ns_ == "_" && key_.has_value(),
            "device_guard(...): a device guard belongs to a backend, in an "
            "OPD_LIBRARY_IMPL(_, <backend>, m) block ({})",
            site);
  const DispatchKey key = *key_;
  const std::optional<DeviceType> slot = privateuse_slot_of(key);
  OPD_CHECK(key == DispatchKey::CUDA || (slot && is_backend_key(key)),
            "device_guard(...): {} has no devices to guard (only CUDA and the vendor slots "
            "PrivateUse1..3 have several) ({})",
            to_string(key), site);
  detail::check_declared_key(key, "a device guard");
  const DeviceType type = key == DispatchKey::CUDA ? DeviceType::CUDA : *slot;
  registrations_.push_back(register_device_guard(type, std::move(impl), site));
  return *this;
}

}  // namespace opd
