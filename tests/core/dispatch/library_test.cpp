// Library and the OPD_LIBRARY* macros: the three kinds and what each may do, the errors for
// misuse (PyTorch's torch/library.h wording), fallbacks and alias expansion, schema inference in
// def(name, kernel), undoing on destruction, reset() and moves, static registration, and the
// registration sites recorded in debug strings.

#include "opd/library.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <utility>

#include "error_text.h"
#include "opd/dispatcher.h"
#include "opd/error.h"
#include "opd/tensor.h"

namespace opd {
namespace {

using DK = DispatchKey;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

Dispatcher& dispatcher() { return Dispatcher::singleton(); }

std::string at(const std::source_location& loc) {
  return fmt::format("registered at {}:{}", loc.file_name(), loc.line());
}
std::string at_line(int line) {
  return "registered at tests/core/dispatch/library_test.cpp:" + std::to_string(line);
}

std::optional<OperatorHandle> find(std::string_view name, std::string_view overload = "") {
  return dispatcher().find_op(OperatorName{std::string(name), std::string(overload)});
}

std::string g_ran;

Tensor identity(const Tensor& x) {
  g_ran = "identity";
  return x;
}
Tensor identity2(const Tensor& x) {
  g_ran = "identity2";
  return x;
}

void boxed_noop(const OperatorHandle&, Stack*) { g_ran = "boxed"; }

Tensor cpu_tensor() {
  static float buf[2] = {};
  return from_blob(buf, {2}, kFloat);
}

std::string call(std::string_view name, const Tensor& x) {
  g_ran.clear();
  find(name)->typed<Tensor(const Tensor&)>().call(x);
  return g_ran;
}

}  // namespace
}  // namespace opd

// ---- Static registration (namespace test_library_static) ------------------------------------
// These blocks run before main(); the tests below check what they registered.

namespace {

// Where the blocks' registrations happened, recorded by the blocks themselves.
int g_static_foo_def_line = 0;
int g_static_impl_line = 0;
int g_static_fallback_line = 0;

constexpr int kStaticDefLine = __LINE__ + 1;
OPD_LIBRARY(test_library_static, m) {
  auto loc = std::source_location::current();
  m.def("foo(Tensor x) -> Tensor", loc);
  g_static_foo_def_line = static_cast<int>(loc.line());
  m.def("inferred", [](const opd::Tensor& x, int64_t) { return x; });
}

OPD_LIBRARY_FRAGMENT(test_library_static, m) { m.def("bar(Tensor x) -> Tensor"); }

OPD_LIBRARY_FRAGMENT(test_library_static, m) { m.def("baz(Tensor x) -> Tensor"); }

OPD_LIBRARY_IMPL(test_library_static, CPU, m) {
  auto loc = std::source_location::current();
  m.impl("foo", &opd::identity, loc);
  g_static_impl_line = static_cast<int>(loc.line());
}

OPD_LIBRARY_IMPL(test_library_static, CUDA, m) {
  m.impl("foo", &opd::identity2);
  m.impl("bar", &opd::identity2);
}

OPD_LIBRARY_IMPL(_, Tracer, m) {
  auto loc = std::source_location::current();
  m.fallback(opd::CppFunction::make_fallthrough(), loc);
  g_static_fallback_line = static_cast<int>(loc.line());
}

}  // namespace

namespace opd {
namespace {

TEST(LibraryMacros, StaticBlocksRegisteredBeforeMain) {
  for (const char* op : {"test_library_static::foo", "test_library_static::bar",
                         "test_library_static::baz", "test_library_static::inferred"}) {
    EXPECT_TRUE(dispatcher().find_schema(OperatorName{op, ""}).has_value()) << op;
  }
  EXPECT_EQ(call("test_library_static::foo", cpu_tensor()), "identity");
  float buf[2] = {};
  Tensor cuda = from_blob(buf, {2}, kFloat, Device(DeviceType::CUDA, 0));
  EXPECT_EQ(call("test_library_static::foo", cuda), "identity2");
  EXPECT_EQ(call("test_library_static::bar", cuda), "identity2");
}

TEST(LibraryMacros, StaticRegistrationsRecordTheirSites) {
  ASSERT_GT(g_static_foo_def_line, 0) << "the OPD_LIBRARY block ran before main()";
  EXPECT_EQ(find("test_library_static::foo")->debug(), at_line(g_static_foo_def_line));
  EXPECT_THAT(find("test_library_static::foo")->dump_state(),
              HasSubstr("CPU: " + at_line(g_static_impl_line) + " :: (Tensor _0) -> Tensor _0"));
  EXPECT_EQ(dispatcher().fallback_debug(DK::Tracer), at_line(g_static_fallback_line));
}

TEST(LibraryMacros, StaticDefLibraryClaimsTheNamespace) {
  auto loc = std::source_location::current();
  try {
    Library again(Library::DEF, "test_library_static", std::nullopt, loc);
    FAIL() << "a second DEF library for the namespace must be refused";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(),
                HasSubstr("Previous registration of OPD_LIBRARY was " + at_line(kStaticDefLine) +
                          "; latest registration was " + at(loc)));
  }
}

TEST(LibraryMacros, StaticDefWithKernelInfersTheSchema) {
  EXPECT_EQ(find("test_library_static::inferred")->schema().to_string(),
            "test_library_static::inferred(Tensor _0, int _1) -> Tensor _0");
}

TEST(LibraryMacros, StaticFallthroughFallbackServesTracer) {
  IncludeDispatchKeyGuard tracing(DK::Tracer);
  EXPECT_EQ(call("test_library_static::foo", cpu_tensor()), "identity");
}

// ---- Kinds -----------------------------------------------------------------------------------

TEST(Library, KindNamesAndAccessors) {
  EXPECT_STREQ(to_string(Library::DEF), "DEF");
  EXPECT_STREQ(to_string(Library::FRAGMENT), "FRAGMENT");
  EXPECT_STREQ(to_string(Library::IMPL), "IMPL");
  Library lib(Library::IMPL, "test_library_kinds", DK::CPU);
  EXPECT_EQ(lib.kind(), Library::IMPL);
  EXPECT_EQ(lib.ns(), "test_library_kinds");
  EXPECT_EQ(lib.key(), DK::CPU);
  EXPECT_EQ(lib.registration_count(), 0u);
}

TEST(Library, DefLibraryDefinesAndImplements) {
  {
    Library lib(Library::DEF, "test_library_def");
    EXPECT_EQ(lib.registration_count(), 1u) << "the namespace claim";
    lib.def("foo(Tensor x) -> Tensor").impl("foo", DK::CPU, &identity);
    EXPECT_EQ(lib.registration_count(), 3u);
    EXPECT_EQ(call("test_library_def::foo", cpu_tensor()), "identity");
  }
  EXPECT_FALSE(find("test_library_def::foo").has_value());
}

TEST(Library, SecondDefLibraryForANamespaceIsRefusedNamingBothSites) {
  auto first_loc = std::source_location::current();
  Library first(Library::DEF, "test_library_def2", std::nullopt, first_loc);
  auto second_loc = std::source_location::current();
  try {
    Library second(Library::DEF, "test_library_def2", std::nullopt, second_loc);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(),
              "Only a single OPD_LIBRARY can be used to register the namespace test_library_def2; "
              "please put all of your definitions in a single OPD_LIBRARY block.  If you were "
              "trying to specify implementations, consider using OPD_LIBRARY_IMPL (which can be "
              "duplicated).  If you really intended to define operators for a single namespace in "
              "a distributed way, you can use OPD_LIBRARY_FRAGMENT to explicitly indicate this.  "
              "Previous registration of OPD_LIBRARY was " +
                  at(first_loc) + "; latest registration was " + at(second_loc));
  }
}

TEST(Library, NamespaceIsFreeAgainOnceTheDefLibraryIsGone) {
  { Library first(Library::DEF, "test_library_def3"); }
  EXPECT_NO_THROW(Library(Library::DEF, "test_library_def3"));
  Library again(Library::DEF, "test_library_def3");
  again.reset();
  EXPECT_NO_THROW(Library(Library::DEF, "test_library_def3")) << "reset() releases the claim";
}

TEST(Library, FragmentsCoexistWithTheDefLibraryAndEachOther) {
  Library def(Library::DEF, "test_library_frag");
  Library f1(Library::FRAGMENT, "test_library_frag");
  Library f2(Library::FRAGMENT, "test_library_frag");
  def.def("a(Tensor x) -> Tensor");
  f1.def("b(Tensor x) -> Tensor");
  f2.def("c(Tensor x) -> Tensor").impl("c", DK::CPU, &identity);
  EXPECT_EQ(f1.registration_count(), 1u) << "a fragment claims nothing";
  for (const char* op : {"test_library_frag::a", "test_library_frag::b", "test_library_frag::c"}) {
    EXPECT_TRUE(find(op).has_value()) << op;
  }
  EXPECT_EQ(call("test_library_frag::c", cpu_tensor()), "identity");
}

TEST(Library, ImplLibrariesMayBeDuplicated) {
  Library def(Library::FRAGMENT, "test_library_impls");
  def.def("foo(Tensor x) -> Tensor");
  Library a(Library::IMPL, "test_library_impls", DK::CPU);
  Library b(Library::IMPL, "test_library_impls", DK::CPU);
  a.impl("foo", &identity);
  b.impl("foo", &identity2);
  EXPECT_EQ(call("test_library_impls::foo", cpu_tensor()), "identity2");
  b.reset();
  EXPECT_EQ(call("test_library_impls::foo", cpu_tensor()), "identity");
}

TEST(Library, ImplWithoutKeyInAKeylessLibraryRegistersToCompositeImplicitAutograd) {
  Library lib(Library::FRAGMENT, "test_library_cia");
  lib.def("foo(Tensor x) -> Tensor").impl("foo", &identity);
  EXPECT_TRUE(
      find("test_library_cia::foo")->has_kernel_for_dispatch_key(DK::CompositeImplicitAutograd));
}

TEST(Library, ImplLibraryKeyIsUsedByImpl) {
  Library def(Library::FRAGMENT, "test_library_implkey");
  def.def("foo(Tensor x) -> Tensor");
  Library lib(Library::IMPL, "test_library_implkey", DK::Meta);
  lib.impl("foo", &identity);
  lib.impl("foo", DK::Meta, &identity2);  // the same key, explicitly: allowed
  EXPECT_TRUE(find("test_library_implkey::foo")->has_kernel_for_dispatch_key(DK::Meta));
  EXPECT_FALSE(find("test_library_implkey::foo")
                   ->has_kernel_for_dispatch_key(DK::CompositeImplicitAutograd));
}

TEST(Library, ImplOfAnOverload) {
  Library lib(Library::FRAGMENT, "test_library_overload");
  lib.def("foo.out(Tensor x) -> Tensor").impl("foo.out", DK::CPU, &identity);
  EXPECT_TRUE(find("test_library_overload::foo", "out")->has_kernel_for_dispatch_key(DK::CPU));
}

// ---- Misuse ----------------------------------------------------------------------------------

TEST(Library, DefInsideImplBlockIsRefused) {
  Library lib(Library::IMPL, "test_library_defimpl", DK::CPU);
  auto loc = std::source_location::current();
  try {
    lib.def("foo(Tensor x) -> Tensor", loc);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(),
              "Cannot define an operator inside of a IMPL block.  All def()s should be "
              "placed in the (unique) OPD_LIBRARY block for their namespace. (" +
                  at(loc) + ")");
  }
  EXPECT_THROW(lib.def("foo", &identity), Error);
  EXPECT_EQ(lib.registration_count(), 0u);
  EXPECT_FALSE(find("test_library_defimpl::foo").has_value());
}

TEST(Library, ExplicitNamespaceMustMatchTheBlock) {
  Library lib(Library::FRAGMENT, "test_library_ns_a");
  try {
    lib.def("test_library_ns_b::foo(Tensor x) -> Tensor");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(),
              "Explicitly provided namespace (test_library_ns_b) in schema string does not "
              "match namespace of enclosing FRAGMENT block (test_library_ns_a).  Move this "
              "definition to the (unique) OPD_LIBRARY block corresponding to this "
              "namespace (and consider deleting the namespace from your schema string.)");
  }
  EXPECT_FALSE(find("test_library_ns_b::foo").has_value());
  // The block's own namespace, explicitly, is fine.
  lib.def("test_library_ns_a::foo(Tensor x) -> Tensor");
  EXPECT_TRUE(find("test_library_ns_a::foo").has_value());
}

TEST(Library, ImplNamespaceMustMatchTheBlock) {
  Library lib(Library::IMPL, "test_library_ns_c", DK::CPU);
  try {
    lib.impl("test_library_ns_d::foo", &identity);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(),
              "Explicitly provided namespace (test_library_ns_d) in operator name does not "
              "match namespace of enclosing IMPL block (test_library_ns_c).  Move this "
              "definition to the OPD_LIBRARY_IMPL block corresponding to this namespace "
              "(and consider deleting the namespace from your schema string.)");
  }
  EXPECT_FALSE(find("test_library_ns_d::foo").has_value());
  EXPECT_EQ(lib.registration_count(), 0u);
}

TEST(Library, ExplicitDispatchKeyMustMatchTheImplBlock) {
  Library lib(Library::IMPL, "test_library_keymismatch", DK::CPU);
  auto loc = std::source_location::current();
  try {
    lib.impl("foo", DK::CUDA, &identity, loc);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(),
              "Explicitly provided dispatch key (CUDA) is inconsistent with the dispatch "
              "key of the enclosing IMPL block (CPU).  Please declare a separate IMPL "
              "block for this dispatch key and move your impl() there. (" +
                  at(loc) + ")");
  }
  EXPECT_FALSE(find("test_library_keymismatch::foo").has_value());
}

TEST(Library, FallbackOutsideTheWildcardNamespaceIsRefused) {
  Library lib(Library::IMPL, "test_library_fb_ns", DK::CPU);
  auto loc = std::source_location::current();
  try {
    lib.fallback(CppFunction::make_fallthrough(), loc);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.msg(),
              "fallback(...): Fallback functions which apply to only a single namespace "
              "(you specified test_library_fb_ns) are not supported.  If you intended to "
              "apply this fallback function globally, please define a separate block:\n\n"
              "    OPD_LIBRARY_IMPL(_, CPU, m) { m.fallback(...); }\n\n(" +
                  at(loc) + ")");
  }
  EXPECT_FALSE(dispatcher().fallback_debug(DK::CPU).has_value());
  Library frag(Library::FRAGMENT, "test_library_fb_ns");
  try {
    frag.fallback(CppFunction(&boxed_noop));
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(),
                StartsWith("fallback(...): Fallback functions which apply to only a single "
                           "namespace (you specified test_library_fb_ns)"));
    EXPECT_THAT(e.msg(), HasSubstr("OPD_LIBRARY_IMPL(_, YourDispatchKey, m)"));
  }
}

TEST(Library, WildcardNamespaceOnlyForFallbacks) {
  EXPECT_THROW(Library(Library::DEF, "_"), Error);
  try {
    Library(Library::FRAGMENT, "_");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("the namespace _ (all namespaces) is only valid in an IMPL "
                                   "library, for fallbacks; got a FRAGMENT library"));
  }
  Library lib(Library::IMPL, "_", DK::CPU);
  try {
    lib.impl("foo", &identity);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("impl(foo): an IMPL library of namespace _ can only register "
                                   "fallbacks"));
  }
  Library keyless(Library::IMPL, "_");
  try {
    keyless.fallback(CppFunction::make_fallthrough());
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("fallback(...): the IMPL library has no dispatch key"));
  }
}

TEST(Library, EmptyNamespaceAndUndefinedKeyAreRefused) {
  EXPECT_THROW(Library(Library::FRAGMENT, ""), Error);
  try {
    Library(Library::IMPL, "test_library_undef", DK::Undefined);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("Undefined is not a dispatch key to register to"));
  }
}

// ---- Fallbacks -------------------------------------------------------------------------------

TEST(Library, FallbackOnARuntimeKeyServesEveryOperator) {
  Library def(Library::FRAGMENT, "test_library_fb");
  def.def("foo(Tensor x) -> Tensor");
  {
    Library fb(Library::IMPL, "_", DK::CPU);
    fb.fallback(CppFunction(&boxed_noop));
    EXPECT_EQ(fb.registration_count(), 1u);
    EXPECT_EQ(call("test_library_fb::foo", cpu_tensor()), "boxed");
  }
  EXPECT_FALSE(dispatcher().fallback_debug(DK::CPU).has_value());
  EXPECT_THROW(call("test_library_fb::foo", cpu_tensor()), NotImplementedError);
}

TEST(Library, FallbackOnAnAliasKeyExpandsToItsRuntimeKeys) {
  Library def(Library::FRAGMENT, "test_library_fb_alias");
  def.def("foo(Tensor x) -> Tensor");
  auto loc = std::source_location::current();
  {
    Library fb(Library::IMPL, "_", DK::CompositeExplicitAutograd);
    fb.fallback(CppFunction(&boxed_noop), loc);
    EXPECT_EQ(fb.registration_count(), 6u);
    std::string table = find("test_library_fb_alias::foo")->dump_computed_table();
    for (DK k : {DK::CPU, DK::CUDA, DK::PrivateUse1, DK::PrivateUse2, DK::PrivateUse3, DK::Meta}) {
      EXPECT_EQ(dispatcher().fallback_debug(k), at(loc)) << to_string(k);
      EXPECT_THAT(table, HasSubstr(display_name(k) + ": " + at(loc) + " [backend fallback]\n"));
    }
    EXPECT_FALSE(dispatcher().fallback_debug(DK::Undefined).has_value());
  }
  for (DK k : {DK::CPU, DK::CUDA, DK::PrivateUse1, DK::PrivateUse2, DK::PrivateUse3, DK::Meta}) {
    EXPECT_FALSE(dispatcher().fallback_debug(k).has_value()) << to_string(k);
  }
}

TEST(Library, FallbackOnAFunctionalityKeyExpandsToEveryBackend) {
  Library fb(Library::IMPL, "_", DK::Dense);
  fb.fallback(CppFunction(&boxed_noop));
  EXPECT_EQ(fb.registration_count(), 6u);
  EXPECT_TRUE(dispatcher().fallback_debug(DK::Meta).has_value());
}

TEST(Library, FailedAliasFallbackLeavesNoPartialRegistration) {
  Library meta(Library::IMPL, "_", DK::Meta);
  meta.fallback(CppFunction(&boxed_noop));
  Library fb(Library::IMPL, "_", DK::CompositeExplicitAutograd);
  try {
    fb.fallback(CppFunction::make_fallthrough());
    FAIL() << "Meta already has a fallback";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("Tried to register multiple backend fallbacks for the same "
                                   "dispatch key Meta"));
  }
  EXPECT_EQ(fb.registration_count(), 0u);
  for (DK k : {DK::CPU, DK::CUDA, DK::PrivateUse1}) {
    EXPECT_FALSE(dispatcher().fallback_debug(k).has_value()) << to_string(k);
  }
  EXPECT_TRUE(dispatcher().fallback_debug(DK::Meta).has_value());
}

// ---- def(name, kernel) -----------------------------------------------------------------------

TEST(Library, DefWithKernelInfersTheSchemaAndRegistersCompositeImplicitAutograd) {
  Library lib(Library::FRAGMENT, "test_library_infer");
  lib.def("scale", [](const Tensor& x, double) { return x; });
  lib.def("pair.overload", [](const Tensor& x) { return std::make_tuple(x, x); });
  auto scale = find("test_library_infer::scale");
  ASSERT_TRUE(scale.has_value());
  EXPECT_EQ(scale->schema().to_string(),
            "test_library_infer::scale(Tensor _0, float _1) -> Tensor _0");
  EXPECT_TRUE(scale->has_kernel_for_dispatch_key(DK::CompositeImplicitAutograd));
  EXPECT_EQ(scale->entry().def_and_impl_count(), 2);
  EXPECT_EQ(find("test_library_infer::pair", "overload")->schema().to_string(),
            "test_library_infer::pair.overload(Tensor _0) -> (Tensor _0, Tensor _1)");
  float buf[2] = {};
  Tensor x = from_blob(buf, {2}, kFloat);
  EXPECT_TRUE((scale->typed<Tensor(const Tensor&, double)>().call(x, 2.0).is_same(x)));
}

TEST(Library, DefWithSchemaAndKernelKeepsTheDeclaredNames) {
  Library lib(Library::FRAGMENT, "test_library_defk");
  lib.def("foo(Tensor self, float alpha=0.5) -> Tensor", [](const Tensor& x, double) { return x; });
  EXPECT_EQ(find("test_library_defk::foo")->schema().to_string(),
            "test_library_defk::foo(Tensor self, float alpha=0.5) -> Tensor");
  lib.reset();
  EXPECT_FALSE(find("test_library_defk::foo").has_value());
}

TEST(Library, DefWithAMismatchedKernelLeavesNothing) {
  Library lib(Library::FRAGMENT, "test_library_defbad");
  try {
    lib.def("foo(Tensor x, Tensor y) -> Tensor", &identity);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("reason: The number of arguments is different. 2 vs 1."));
  }
  EXPECT_EQ(lib.registration_count(), 0u);
  EXPECT_FALSE(find("test_library_defbad::foo").has_value());
}

TEST(Library, DefNeedsASchemaOrAnUnboxedKernel) {
  Library lib(Library::FRAGMENT, "test_library_defname");
  try {
    lib.def("foo");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("def(foo): a schema is required"));
  }
  try {
    lib.def("foo", &boxed_noop);
    FAIL() << "expected Error";
  } catch (const Error& e) {
    EXPECT_THAT(e.msg(), HasSubstr("def(foo): the schema cannot be inferred from a boxed kernel"));
  }
  lib.def("foo(Tensor x) -> Tensor", &boxed_noop);  // with the schema, a boxed kernel is fine
  EXPECT_TRUE(find("test_library_defname::foo").has_value());
}

// ---- Lifetime: destruction, reset(), moves ---------------------------------------------------

TEST(Library, DestructionUndoesEveryRegistration) {
  {
    Library lib(Library::DEF, "test_library_dtor");
    lib.def("foo(Tensor x) -> Tensor");
    lib.def("bar", &identity);
    lib.impl("foo", DK::CPU, &identity);
    lib.impl("foo", DK::Autograd, &identity2);
    EXPECT_EQ(lib.registration_count(), 6u);
  }
  EXPECT_FALSE(find("test_library_dtor::foo").has_value());
  EXPECT_FALSE(find("test_library_dtor::bar").has_value());
  EXPECT_NO_THROW(Library(Library::DEF, "test_library_dtor")) << "the namespace claim is gone";
  dispatcher().check_invariants();
}

TEST(Library, ResetUndoesEverythingAndTheLibraryCanBeReused) {
  Library lib(Library::FRAGMENT, "test_library_reset");
  lib.def("foo(Tensor x) -> Tensor").impl("foo", DK::CPU, &identity);
  lib.reset();
  EXPECT_EQ(lib.registration_count(), 0u);
  EXPECT_FALSE(find("test_library_reset::foo").has_value());
  lib.reset();
  lib.def("foo(Tensor x) -> Tensor");
  EXPECT_TRUE(find("test_library_reset::foo").has_value());
}

TEST(Library, ResetToUndoesOnlyTheNewestRegistrations) {
  Library lib(Library::FRAGMENT, "test_library_reset_to");
  lib.def("foo(Tensor x) -> Tensor");
  const size_t before = lib.registration_count();
  lib.impl("foo", DK::CPU, &identity).def("bar(Tensor x) -> Tensor");
  lib.reset_to(before);
  EXPECT_EQ(lib.registration_count(), 1u);
  auto foo = find("test_library_reset_to::foo");
  ASSERT_TRUE(foo);
  EXPECT_FALSE(foo->entry().has_kernel_for_dispatch_key(DK::CPU));
  EXPECT_FALSE(find("test_library_reset_to::bar"));
  lib.reset_to(1);
  EXPECT_EQ(lib.registration_count(), 1u);
  EXPECT_EQ(test_util::error_text<Error>([&] { lib.reset_to(2); }),
            "Library::reset_to(2): the FRAGMENT library of namespace test_library_reset_to has 1 "
            "registrations");
  EXPECT_TRUE(find("test_library_reset_to::foo"));
}

TEST(Library, ImplsOutliveNothingTheyDependOn) {
  // Registered impl-first and removed in reverse: each step leaves a consistent state.
  Library impls(Library::IMPL, "test_library_order", DK::CPU);
  impls.impl("foo", &identity);
  Library defs(Library::FRAGMENT, "test_library_order");
  defs.def("foo(Tensor x) -> Tensor");
  impls.reset();
  EXPECT_TRUE(find("test_library_order::foo")->has_schema());
  dispatcher().check_invariants();
  defs.reset();
  EXPECT_FALSE(find("test_library_order::foo").has_value());
}

TEST(Library, MoveConstructionTransfersRegistrations) {
  auto src = std::make_unique<Library>(Library::DEF, "test_library_move");
  src->def("foo(Tensor x) -> Tensor");
  Library dst(std::move(*src));
  EXPECT_EQ(dst.registration_count(), 2u);
  EXPECT_EQ(dst.ns(), "test_library_move");
  EXPECT_EQ(dst.kind(), Library::DEF);
  src.reset();  // the moved-from library undoes nothing
  EXPECT_TRUE(find("test_library_move::foo").has_value());
  dst.def("bar(Tensor x) -> Tensor");
  dst.reset();
  EXPECT_FALSE(find("test_library_move::foo").has_value());
  EXPECT_FALSE(find("test_library_move::bar").has_value());
}

TEST(Library, MoveAssignmentUndoesTheTargetFirst) {
  Library a(Library::FRAGMENT, "test_library_move_a");
  a.def("foo(Tensor x) -> Tensor");
  Library b(Library::IMPL, "test_library_move_b", DK::CPU);
  b.impl("bar", &identity);
  a = std::move(b);
  EXPECT_FALSE(find("test_library_move_a::foo").has_value());
  EXPECT_TRUE(find("test_library_move_b::bar").has_value());
  EXPECT_EQ(a.kind(), Library::IMPL);
  EXPECT_EQ(a.ns(), "test_library_move_b");
  EXPECT_EQ(a.key(), DK::CPU);
  a.reset();
  EXPECT_FALSE(find("test_library_move_b::bar").has_value());
}

TEST(Library, LibrariesInAContainerSurviveReallocation) {
  std::vector<Library> libs;
  for (int i = 0; i < 8; ++i) {
    libs.emplace_back(Library::FRAGMENT, "test_library_vec");
    libs.back().def("op" + std::to_string(i) + "(Tensor x) -> Tensor");
  }
  for (int i = 0; i < 8; ++i) {
    EXPECT_TRUE(find("test_library_vec::op" + std::to_string(i)).has_value()) << i;
  }
  libs.clear();
  EXPECT_FALSE(find("test_library_vec::op0").has_value());
}

// ---- Registration sites ----------------------------------------------------------------------

TEST(Library, DebugStringsNameTheFileAndLineOfEachCall) {
  Library lib(Library::FRAGMENT, "test_library_sites");
  lib.def("foo(Tensor x) -> Tensor");
  const int def_line = __LINE__ - 1;
  lib.impl("foo", DK::CPU, &identity);
  const int impl_line = __LINE__ - 1;
  auto op = find("test_library_sites::foo");
  EXPECT_EQ(op->debug(), at_line(def_line));
  EXPECT_THAT(op->dump_state(), HasSubstr("debug: " + at_line(def_line) + "\n"));
  EXPECT_THAT(op->dump_state(), HasSubstr("CPU: " + at_line(impl_line) + " :: "));
  EXPECT_THAT(op->dump_computed_table(), HasSubstr("CPU: " + at_line(impl_line) + " [kernel]"));
}

// A site that is not C++ source (the Python package's file and line): the same debug strings,
// and the same checks, as a source_location site.
TEST(Library, RegistrationSitesThatAreNotCppSource) {
  std::string file = "tests/python/test_library.py";
  Library lib(Library::DEF, "test_library_pysite", std::nullopt, RegistrationSite{file, 3});
  file = "overwritten";  // a site is a view: what it names is copied at registration
  lib.def("foo(Tensor x) -> Tensor", RegistrationSite{"t.py", 4});
  lib.impl("foo", DK::CPU, CppFunction(&identity), RegistrationSite{"t.py", 5});
  lib.impl("foo", std::nullopt, CppFunction(&identity2), RegistrationSite{"t.py", 6});
  auto op = find("test_library_pysite::foo");
  EXPECT_EQ(op->debug(), "registered at t.py:4");
  EXPECT_THAT(op->dump_state(), HasSubstr("CPU: registered at t.py:5 :: "));
  EXPECT_THAT(op->dump_state(),
              HasSubstr("CompositeImplicitAutograd[alias]: registered at t.py:6"));
  EXPECT_THAT(test_util::error_text<Error>([] {
                Library again(Library::DEF, "test_library_pysite", std::nullopt,
                              RegistrationSite{"u.py", 7});
              }),
              AllOf(HasSubstr("registered at u.py:7"),
                    HasSubstr("registered at tests/python/test_library.py:3")));

  Library impl(Library::IMPL, "test_library_pysite", DK::Meta, RegistrationSite{"t.py", 8});
  impl.impl("foo", std::nullopt, CppFunction(&identity), RegistrationSite{"t.py", 9});
  EXPECT_THAT(find("test_library_pysite::foo")->dump_state(),
              HasSubstr("Meta: registered at t.py:9 :: "));
  EXPECT_THAT(test_util::error_text<Error>([&] {
                impl.impl("foo", DK::CPU, CppFunction(&identity), RegistrationSite{"t.py", 10});
              }),
              HasSubstr("Explicitly provided dispatch key (CPU) is inconsistent with the dispatch "
                        "key of the enclosing IMPL block (Meta)."));
  EXPECT_EQ(impl.registration_count(), 1u);
  Library fallbacks(Library::IMPL, "_", DK::PrivateUse1, RegistrationSite{"t.py", 11});
  fallbacks.fallback(CppFunction::make_fallthrough(), RegistrationSite{"t.py", 12});
  EXPECT_EQ(dispatcher().fallback_debug(DK::PrivateUse1), "registered at t.py:12");
}

// Note [Operator tags]: def(schema, tags) records them with the definition; has_tag and tags()
// read them, dump_state shows them; a def without tags has none.
TEST(Library, DefWithTags) {
  Library lib(Library::FRAGMENT, "test_library_tags");
  lib.def("noisy(Tensor x) -> Tensor", {Tag::nondeterministic_seeded, Tag::core});
  lib.def("plain(Tensor x) -> Tensor");
  lib.def("py(Tensor x) -> Tensor", TagSet{Tag::inplace_view}, RegistrationSite{"t.py", 3});
  auto noisy = find("test_library_tags::noisy");
  ASSERT_TRUE(noisy);
  EXPECT_TRUE(noisy->has_tag(Tag::nondeterministic_seeded));
  EXPECT_TRUE(noisy->has_tag(Tag::core));
  EXPECT_FALSE(noisy->has_tag(Tag::pointwise));
  EXPECT_EQ(noisy->tags(), (TagSet{Tag::core, Tag::nondeterministic_seeded}));
  EXPECT_THAT(noisy->dump_state(), HasSubstr("\ntags: core, nondeterministic_seeded\n"));
  auto plain = find("test_library_tags::plain");
  EXPECT_TRUE(plain->tags().empty());
  EXPECT_THAT(plain->dump_state(), Not(HasSubstr("\ntags:")));
  auto py = find("test_library_tags::py");
  EXPECT_EQ(py->tags(), TagSet{Tag::inplace_view});
  EXPECT_EQ(py->debug(), "registered at t.py:3");
  // A refused def with tags leaves nothing behind.
  EXPECT_THAT(
      test_util::error_text<Error>([&] { lib.def("noisy(Tensor x) -> Tensor", {Tag::pointwise}); }),
      HasSubstr("Tried to register an operator (test_library_tags::noisy(Tensor x) -> "
                "Tensor) with the same name and overload name multiple times."));
  EXPECT_EQ(noisy->tags(), (TagSet{Tag::core, Tag::nondeterministic_seeded}));
  EXPECT_EQ(lib.registration_count(), 3u);
}

// The generated aten definitions carry native_functions.yaml's `tags:`.
TEST(Library, AtenOperatorsHaveTheirYamlTags) {
  auto rand = find("aten::rand");
  ASSERT_TRUE(rand);
  EXPECT_TRUE(rand->has_tag(Tag::nondeterministic_seeded));
  EXPECT_FALSE(find("aten::add", "Tensor")->has_tag(Tag::nondeterministic_seeded));
}

TEST(Library, DuplicateDefErrorNamesBothCallSites) {
  Library lib(Library::FRAGMENT, "test_library_dupsite");
  lib.def("foo(Tensor x) -> Tensor");
  const int first = __LINE__ - 1;
  try {
    lib.def("foo(Tensor x) -> Tensor");
    FAIL() << "expected Error";
  } catch (const Error& e) {
    const int second = __LINE__ - 3;
    EXPECT_THAT(e.msg(), HasSubstr("Duplicate registration: " + at_line(second) +
                                   ". Original registration: " + at_line(first)));
  }
  EXPECT_EQ(lib.registration_count(), 1u);
}

// Note [Alias analysis kind]: a def gives FROM_SCHEMA unless it says otherwise, a def whose
// schema is inferred from its kernel CONSERVATIVE; the dump shows the kind under the debug line,
// as PyTorch's _dispatch_dump does.
TEST(Library, DefRecordsItsAliasAnalysisKind) {
  Library lib(Library::FRAGMENT, "test_library_alias");
  lib.def("plain(Tensor x) -> Tensor");
  const int plain_line = __LINE__ - 1;
  lib.def("pure(Tensor x) -> Tensor", AliasAnalysisKind::PURE_FUNCTION);
  lib.def("cons(Tensor x) -> Tensor", AliasAnalysisKind::CONSERVATIVE, {Tag::core});
  lib.def("py(Tensor x) -> Tensor", AliasAnalysisKind::PURE_FUNCTION, TagSet(),
          RegistrationSite{"t.py", 3});
  lib.def("inferred", &identity);
  lib.def("written(Tensor x) -> Tensor", &identity);
  auto kind = [](const char* name) { return find(name)->entry().alias_analysis(); };
  EXPECT_EQ(kind("test_library_alias::plain"), AliasAnalysisKind::FROM_SCHEMA);
  EXPECT_EQ(kind("test_library_alias::pure"), AliasAnalysisKind::PURE_FUNCTION);
  EXPECT_EQ(kind("test_library_alias::cons"), AliasAnalysisKind::CONSERVATIVE);
  EXPECT_EQ(kind("test_library_alias::py"), AliasAnalysisKind::PURE_FUNCTION);
  EXPECT_EQ(kind("test_library_alias::inferred"), AliasAnalysisKind::CONSERVATIVE);
  EXPECT_EQ(kind("test_library_alias::written"), AliasAnalysisKind::FROM_SCHEMA);
  EXPECT_EQ(find("test_library_alias::plain")->dump_state(),
            "name: test_library_alias::plain\n"
            "schema: test_library_alias::plain(Tensor x) -> Tensor\n"
            "debug: " +
                at_line(plain_line) + "\nalias analysis kind: FROM_SCHEMA\n");
  EXPECT_THAT(find("test_library_alias::cons")->dump_state(),
              HasSubstr("\nalias analysis kind: CONSERVATIVE\ntags: core\n"));
  EXPECT_THAT(find("test_library_alias::py")->dump_state(),
              HasSubstr("debug: registered at t.py:3\nalias analysis kind: PURE_FUNCTION\n"));
  EXPECT_THAT(find("test_library_alias::inferred")->dump_state(),
              HasSubstr("\nalias analysis kind: CONSERVATIVE\nCompositeImplicitAutograd[alias]"));
  // No kind given (the testing handle's def_legacy): CONSERVATIVE, shown as the default.
  lib.def("legacy(Tensor x) -> Tensor", std::nullopt, TagSet(), RegistrationSite{"t.py", 5});
  EXPECT_EQ(kind("test_library_alias::legacy"), AliasAnalysisKind::CONSERVATIVE);
  EXPECT_THAT(
      find("test_library_alias::legacy")->dump_state(),
      HasSubstr("debug: registered at t.py:5\nalias analysis kind: CONSERVATIVE (default)\n"));
}

// A schema whose annotations say what aliases what contradicts any kind but FROM_SCHEMA:
// refused with the error PyTorch's JIT raises for it, naming the site, and nothing is left.
TEST(Library, AliasAnnotationsRequireFromSchema) {
  Library lib(Library::FRAGMENT, "test_library_alias2");
  for (auto k : {AliasAnalysisKind::CONSERVATIVE, AliasAnalysisKind::PURE_FUNCTION}) {
    EXPECT_EQ(test_util::error_text<Error>([&] {
                lib.def("f(Tensor(a!) x) -> Tensor(a!)", k, {}, RegistrationSite{"t.py", 4});
              }),
              "In operator registration: Tried to register operator "
              "test_library_alias2::f(Tensor(a!) x) -> Tensor(a!) with aliasing information in "
              "the schema but without AliasAnalysisKind::FROM_SCHEMA. (registered at t.py:4)");
    EXPECT_THAT(
        test_util::error_text<Error>([&] { lib.def("g(Tensor(a) x) -> Tensor(a)", k, {}); }),
        HasSubstr("test_library_alias2::g(Tensor(a) x) -> Tensor(a) with aliasing "
                  "information"));
    EXPECT_THAT(test_util::error_text<Error>(
                    [&] { lib.def("h(Tensor x, *, Tensor(a!)[] out) -> ()", k, {}); }),
                HasSubstr("without AliasAnalysisKind::FROM_SCHEMA."));
  }
  EXPECT_FALSE(find("test_library_alias2::f"));
  EXPECT_EQ(lib.registration_count(), 0u);
  lib.def("f(Tensor(a!) x) -> Tensor(a!)", AliasAnalysisKind::FROM_SCHEMA);
  EXPECT_EQ(find("test_library_alias2::f")->entry().alias_analysis(),
            AliasAnalysisKind::FROM_SCHEMA);
}

// RegistrationDebug names a kernel outright, as torch's CppFunction::debug: the dump and the
// computed table show the text instead of the site, and the library's key rules still hold.
TEST(Library, ImplWithAnExplicitDebugText) {
  Library lib(Library::FRAGMENT, "test_library_debug");
  lib.def("foo(Tensor x) -> Tensor");
  lib.impl("foo", DK::CPU, CppFunction(&identity), RegistrationDebug{"fn_cpu"});
  lib.impl("foo", std::nullopt, CppFunction(&identity2), RegistrationDebug{"fn_math"});
  auto op = find("test_library_debug::foo");
  EXPECT_THAT(op->dump_state(), HasSubstr("\nCPU: fn_cpu :: (Tensor _0) -> Tensor _0 [ boxed "
                                          "unboxed ]\nCompositeImplicitAutograd[alias]: fn_math "
                                          ":: (Tensor _0) -> Tensor _0 [ boxed unboxed ]\n"));
  EXPECT_THAT(op->dump_computed_table(), HasSubstr("CPU: fn_cpu [kernel]\n"));
  EXPECT_THAT(op->dump_computed_table(), HasSubstr("CUDA: fn_math [math kernel]\n"));

  Library impl(Library::IMPL, "test_library_debug", DK::Meta);
  impl.impl("foo", std::nullopt, CppFunction(&identity), RegistrationDebug{"fn_meta"});
  EXPECT_THAT(op->dump_state(), HasSubstr("\nMeta: fn_meta :: "));
  EXPECT_THAT(test_util::error_text<Error>([&] {
                impl.impl("foo", DK::CPU, CppFunction(&identity), RegistrationDebug{"fn_x"});
              }),
              HasSubstr("Explicitly provided dispatch key (CPU) is inconsistent with the dispatch "
                        "key of the enclosing IMPL block (Meta).  Please declare a separate IMPL "
                        "block for this dispatch key and move your impl() there. (fn_x)"));
  EXPECT_EQ(impl.registration_count(), 1u);
}

}  // namespace
}  // namespace opd
