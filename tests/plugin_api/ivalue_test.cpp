#include "opd/ivalue.h"

#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "error_text.h"
#include "opd/error.h"

namespace opd {
namespace {

using test_util::error_text;

Tensor make_float_tensor(float* buf, int64_t n) {
  return from_blob(buf, std::vector<int64_t>{n}, kFloat);
}

TEST(IValue, IsSmallAndMovesCheaply) {
  static_assert(sizeof(IValue) <= 24);
  static_assert(std::is_nothrow_move_constructible_v<IValue>);
  static_assert(std::is_nothrow_move_assignable_v<IValue>);
  SUCCEED();
}

TEST(IValue, RoundTripsNumbers) {
  EXPECT_TRUE(IValue().is_none());
  EXPECT_TRUE(IValue(std::nullopt).is_none());
  EXPECT_EQ(IValue(int64_t{1} << 40).to_int(), int64_t{1} << 40);
  EXPECT_EQ(IValue(7).to_int(), 7);
  EXPECT_EQ(IValue(int8_t{-7}).to_int(), -7);
  EXPECT_EQ(IValue(uint32_t{4000000000u}).to_int(), 4000000000);
  EXPECT_EQ(IValue(2.5).to_double(), 2.5);
  EXPECT_EQ(IValue(0.5f).to_double(), 0.5);
  EXPECT_TRUE(IValue(true).to_bool());
  EXPECT_TRUE(IValue(false).is_bool());
  EXPECT_EQ(IValue(std::complex<double>(1, -2)).to_complex_double(), std::complex<double>(1, -2));
  EXPECT_EQ(IValue(std::complex<float>(3, 4)).to_complex_double(), std::complex<double>(3, 4));
  EXPECT_EQ(error_text<ValueError>([] { (void)IValue(std::numeric_limits<uint64_t>::max()); }),
            "IValue: the integer 18446744073709551615 does not fit in int64");
}

TEST(IValue, BoolNeverBecomesInt) {
  IValue b(true);
  EXPECT_TRUE(b.is_bool());
  EXPECT_FALSE(b.is_int());
  EXPECT_EQ(IValue(Scalar(true)).tag(), IValue::Tag::Bool);
  static_assert(!std::is_constructible_v<IValue, int*>, "a pointer must not become a bool");
  static_assert(!std::is_constructible_v<IValue, void*>);
  static_assert(!std::is_constructible_v<IValue, std::nullptr_t>);
}

TEST(IValue, StoresAScalarAsItsOwnType) {
  IValue i(Scalar(3)), d(Scalar(1.5)), b(Scalar(false)), z(Scalar(std::complex<double>(0, 1)));
  EXPECT_TRUE(i.is_int());
  EXPECT_TRUE(d.is_double());
  EXPECT_TRUE(b.is_bool());
  EXPECT_TRUE(z.is_complex_double());
  for (const IValue* v : {&i, &d, &b, &z}) EXPECT_TRUE(v->is_scalar());
  EXPECT_EQ(i.to_scalar(), Scalar(3));
  EXPECT_EQ(d.to_scalar(), Scalar(1.5));
  EXPECT_EQ(b.to_scalar(), Scalar(false));
  EXPECT_EQ(z.to_scalar(), Scalar(std::complex<double>(0, 1)));
  EXPECT_FALSE(IValue("1").is_scalar());
  EXPECT_EQ(error_text<TypeError>([] { IValue("1").to_scalar(); }), "Expected Scalar but got str");
}

TEST(IValue, RoundTripsStringsAndEnums) {
  std::string s = "hello";
  EXPECT_EQ(IValue("abc").to_string_ref(), "abc");
  EXPECT_EQ(IValue(s).to_string_ref(), "hello");
  EXPECT_EQ(IValue(std::string_view("view")).to_string_view(), "view");
  char mutable_text[] = "mutable";
  EXPECT_EQ(IValue(static_cast<char*>(mutable_text)).to_string_ref(), "mutable");
  EXPECT_EQ(IValue(kHalf).to_scalar_type(), kHalf);
  EXPECT_EQ(IValue(Layout::SparseCsr).to_layout(), Layout::SparseCsr);
  EXPECT_EQ(IValue(MemoryFormat::ChannelsLast).to_memory_format(), MemoryFormat::ChannelsLast);
  EXPECT_EQ(IValue(Device("cuda:1")).to_device(), Device("cuda:1"));
  EXPECT_FALSE(IValue(kHalf).is_int());  // its own tag, unlike PyTorch's int-coded dtypes
}

TEST(IValue, RoundTripsTensorsAndStorages) {
  float buf[3] = {};
  Tensor t = make_float_tensor(buf, 3);
  IValue v(t);
  EXPECT_TRUE(v.is_tensor());
  EXPECT_TRUE(v.to_tensor().is_same(t));
  IValue undefined{Tensor()};
  EXPECT_TRUE(undefined.is_tensor());
  EXPECT_FALSE(undefined.to_tensor().defined());
  IValue s(t.storage());
  EXPECT_TRUE(s.is_storage());
  EXPECT_TRUE(s.to_storage().is_same(t.storage()));
}

TEST(IValue, RoundTripsLists) {
  float buf[2] = {};
  Tensor a = make_float_tensor(buf, 2), b = make_float_tensor(buf, 1);
  std::vector<int64_t> ints = {1, 2, 3};
  EXPECT_EQ(IValue(ints).to_int_list(), ints);
  EXPECT_EQ(IValue(IntArrayRef(ints)).to_int_list(), ints);
  EXPECT_EQ(IValue(std::vector<int>{4, 5}).to_int_list(), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(IValue(std::vector<double>{0.5}).to_double_list(), std::vector<double>{0.5});
  EXPECT_EQ(IValue(std::vector<float>{0.5f}).to_double_list(), std::vector<double>{0.5});
  EXPECT_EQ(IValue(std::vector<bool>{true, false}).to_bool_list(),
            (std::vector<bool>{true, false}));

  IValue tl(std::vector<Tensor>{a, b});
  ASSERT_TRUE(tl.is_tensor_list());
  EXPECT_TRUE(tl.to_tensor_list()[1].is_same(b));
  std::array<Tensor, 2> arr = {b, a};
  IValue from_span{std::span<const Tensor>(arr)};
  EXPECT_TRUE(from_span.to_tensor_list()[0].is_same(b));

  IValue otl(std::vector<std::optional<Tensor>>{std::nullopt, a});
  ASSERT_TRUE(otl.is_optional_tensor_list());
  EXPECT_FALSE(otl.to_optional_tensor_list()[0].has_value());
  EXPECT_TRUE(otl.to_optional_tensor_list()[1]->is_same(a));

  IValue strs(std::vector<std::string>{"x", "y"});
  ASSERT_TRUE(strs.is_generic_list());
  EXPECT_EQ(strs.to_generic_list()[1].to_string_ref(), "y");
  EXPECT_EQ(strs.to<std::vector<std::string>>(), (std::vector<std::string>{"x", "y"}));

  IValue scalars(std::vector<Scalar>{Scalar(1), Scalar(2.5)});
  EXPECT_EQ(scalars.to<std::vector<Scalar>>(), (std::vector<Scalar>{Scalar(1), Scalar(2.5)}));

  IValue generic = IValue::make_generic_list({IValue(1), IValue("a")});
  EXPECT_EQ(generic.to_generic_list().size(), 2u);
}

TEST(IValue, RoundTripsTuplesAndOptionals) {
  IValue tup(std::make_tuple(int64_t{1}, std::string("two"), 3.0));
  ASSERT_TRUE(tup.is_tuple());
  EXPECT_EQ(tup.to_tuple().size(), 3u);
  auto back = tup.to<std::tuple<int64_t, std::string, double>>();
  EXPECT_EQ(back, std::make_tuple(int64_t{1}, std::string("two"), 3.0));
  EXPECT_EQ(error_text<TypeError>([&] { tup.to<std::tuple<int64_t>>(); }),
            "Expected a tuple of 1 elements but got one of 3");

  EXPECT_TRUE(IValue(std::optional<int64_t>()).is_none());
  EXPECT_EQ(IValue(std::optional<int64_t>(4)).to_int(), 4);
  EXPECT_TRUE(IValue(std::optional<Tensor>()).is_none());
  EXPECT_TRUE(IValue(std::optional<ScalarType>(kFloat)).is_scalar_type());
  std::vector<int64_t> dims = {0, 1};
  EXPECT_EQ(IValue(std::optional<IntArrayRef>(dims)).to_int_list(), dims);

  EXPECT_EQ(IValue().to<std::optional<int64_t>>(), std::nullopt);
  EXPECT_EQ(IValue(5).to<std::optional<int64_t>>(), std::optional<int64_t>(5));
  EXPECT_EQ(IValue().to<std::optional<Tensor>>(), std::nullopt);
}

TEST(IValue, GenericToReturnsReferencesIntoTheValue) {
  float buf[1] = {};
  IValue t(make_float_tensor(buf, 1));
  static_assert(std::is_same_v<decltype(t.to<Tensor>()), const Tensor&>);
  EXPECT_EQ(&t.to<Tensor>(), &t.to_tensor());
  IValue s("text");
  static_assert(std::is_same_v<decltype(s.to<std::string>()), const std::string&>);
  EXPECT_EQ(s.to<std::string_view>().data(), s.to_string_ref().data());
  IValue bools(std::vector<bool>{true, false, true});
  EXPECT_EQ((bools.to<std::array<bool, 3>>()), (std::array<bool, 3>{true, false, true}));
  EXPECT_EQ(error_text<TypeError>([&] { bools.to<std::array<bool, 2>>(); }),
            "Expected bool[2] but got a bool[] of 3 elements");
  EXPECT_EQ(IValue(3).to<int64_t>(), 3);
  EXPECT_EQ(IValue(kLong).to<ScalarType>(), kLong);
  EXPECT_EQ(&bools.to<IValue>(), &bools);
}

TEST(IValue, WrongTagErrorsNameBothTypes) {
  EXPECT_EQ(error_text<TypeError>([] { IValue(1).to_tensor(); }), "Expected Tensor but got int");
  EXPECT_EQ(error_text<TypeError>([] { IValue(2.0).to_int(); }), "Expected int but got float");
  EXPECT_EQ(error_text<TypeError>([] { IValue().to_int_list(); }), "Expected int[] but got None");
  EXPECT_EQ(error_text<TypeError>([] { IValue(true).to_double(); }), "Expected float but got bool");
  EXPECT_EQ(error_text<TypeError>([] { IValue(std::vector<Tensor>{}).to_optional_tensor_list(); }),
            "Expected Tensor?[] but got Tensor[]");
  EXPECT_EQ(error_text<TypeError>([] { IValue("s").to<std::vector<std::string>>(); }),
            "Expected List but got str");
  EXPECT_EQ(error_text<TypeError>([] { IValue(kFloat).to_int(); }),
            "Expected int but got ScalarType");
}

TEST(IValue, TagNames) {
  float buf[1] = {};
  Tensor t = make_float_tensor(buf, 1);
  EXPECT_STREQ(IValue().tag_name(), "None");
  EXPECT_STREQ(IValue(t).tag_name(), "Tensor");
  EXPECT_STREQ(IValue(1).tag_name(), "int");
  EXPECT_STREQ(IValue(1.0).tag_name(), "float");
  EXPECT_STREQ(IValue(true).tag_name(), "bool");
  EXPECT_STREQ(IValue(std::complex<double>()).tag_name(), "complex");
  EXPECT_STREQ(IValue("s").tag_name(), "str");
  EXPECT_STREQ(IValue(kFloat).tag_name(), "ScalarType");
  EXPECT_STREQ(IValue(Layout::Strided).tag_name(), "Layout");
  EXPECT_STREQ(IValue(MemoryFormat::Contiguous).tag_name(), "MemoryFormat");
  EXPECT_STREQ(IValue(Device("cpu")).tag_name(), "Device");
  EXPECT_STREQ(IValue(t.storage()).tag_name(), "Storage");
  EXPECT_STREQ(IValue(std::vector<int64_t>{}).tag_name(), "int[]");
  EXPECT_STREQ(IValue(std::vector<double>{}).tag_name(), "float[]");
  EXPECT_STREQ(IValue(std::vector<bool>{}).tag_name(), "bool[]");
  EXPECT_STREQ(IValue(std::vector<Tensor>{}).tag_name(), "Tensor[]");
  EXPECT_STREQ(IValue(std::vector<std::optional<Tensor>>{}).tag_name(), "Tensor?[]");
  EXPECT_STREQ(IValue::make_generic_list({}).tag_name(), "List");
  EXPECT_STREQ(IValue::make_tuple({}).tag_name(), "Tuple");
}

// Kernels receive IntArrayRef / std::span<const Tensor> pointing into a stack element; the
// pointers must survive the stack growing and the element being copied.
TEST(IValue, ListsAreReferencedNotCopied) {
  Stack stack;
  stack.emplace_back(std::vector<int64_t>{1, 2, 3});
  IntArrayRef dims = stack[0].to<IntArrayRef>();
  EXPECT_EQ(dims.data(), stack[0].to_int_list().data());
  for (int i = 0; i < 100; ++i) stack.emplace_back(i);  // reallocates, moving stack[0]
  EXPECT_EQ(dims.data(), stack[0].to_int_list().data());
  EXPECT_EQ(std::vector<int64_t>(dims.begin(), dims.end()), (std::vector<int64_t>{1, 2, 3}));

  IValue copy = stack[0];
  EXPECT_EQ(copy.to_int_list().data(), dims.data());  // copies share the block
  stack.clear();
  EXPECT_EQ(dims[2], 3);  // `copy` keeps the block alive

  float buf[2] = {};
  Tensor t = make_float_tensor(buf, 2);
  IValue tensors(std::vector<Tensor>{t, t});
  std::span<const Tensor> span = tensors.to<std::span<const Tensor>>();
  EXPECT_EQ(span.data(), tensors.to_tensor_list().data());
  EXPECT_EQ(t.use_count(), 3u);
  IValue tensors_copy = tensors;
  EXPECT_EQ(t.use_count(), 3u);  // shared list, no per-element copies

  IValue text("some text that is long enough to live on the heap");
  IValue text_copy = text;
  EXPECT_EQ(&text.to_string_ref(), &text_copy.to_string_ref());
}

TEST(IValue, MovingATensorDoesNotTouchTheRefcount) {
  float buf[1] = {};
  Tensor t = make_float_tensor(buf, 1);
  IValue a(t);
  EXPECT_EQ(t.use_count(), 2u);
  IValue b(std::move(a));
  EXPECT_EQ(t.use_count(), 2u);
  EXPECT_TRUE(a.is_none());  // NOLINT(bugprone-use-after-move): moved-from is None
  Stack stack;
  stack.push_back(std::move(b));
  stack.reserve(64);
  EXPECT_EQ(t.use_count(), 2u);
  IValue c;
  c = std::move(stack.back());
  EXPECT_EQ(t.use_count(), 2u);
  Tensor out = std::move(c).to_tensor();
  EXPECT_EQ(t.use_count(), 2u);
  EXPECT_TRUE(out.is_same(t));
  IValue copy(out);
  EXPECT_EQ(t.use_count(), 3u);
}

TEST(IValue, AssignmentReplacesEveryKindOfPayload) {
  float buf[1] = {};
  Tensor t = make_float_tensor(buf, 1);
  IValue v(t);
  v = IValue("now a string");
  EXPECT_EQ(t.use_count(), 1u);
  v = IValue(std::vector<Tensor>{t});
  EXPECT_EQ(t.use_count(), 2u);
  const IValue& alias = v;
  v = alias;  // self-assignment keeps the value
  EXPECT_EQ(t.use_count(), 2u);
  IValue w(3);
  v.swap(w);
  EXPECT_EQ(v.to_int(), 3);
  EXPECT_TRUE(w.is_tensor_list());
  w = IValue();
  EXPECT_EQ(t.use_count(), 1u);
  IValue storage(t.storage());
  IValue storage_copy = storage;
  storage = IValue(1.5);
  EXPECT_TRUE(storage_copy.to_storage().is_same(t.storage()));
}

TEST(IValue, EqualityComparesTensorsByIdentity) {
  float buf[2] = {};
  Tensor t = make_float_tensor(buf, 2);
  Tensor same_memory = make_float_tensor(buf, 2);
  EXPECT_EQ(IValue(t), IValue(t));
  EXPECT_NE(IValue(t), IValue(same_memory));
  EXPECT_EQ(IValue(), IValue());
  EXPECT_EQ(IValue(1), IValue(int64_t{1}));
  EXPECT_NE(IValue(1), IValue(1.0));
  EXPECT_NE(IValue(1), IValue(true));
  EXPECT_EQ(IValue("a"), IValue(std::string("a")));
  EXPECT_NE(IValue("a"), IValue("b"));
  EXPECT_EQ(IValue(std::vector<int64_t>{1, 2}), IValue(std::vector<int64_t>{1, 2}));
  EXPECT_NE(IValue(std::vector<int64_t>{1, 2}), IValue(std::vector<int64_t>{1}));
  EXPECT_EQ(IValue(std::vector<Tensor>{t}), IValue(std::vector<Tensor>{t}));
  EXPECT_NE(IValue(std::vector<Tensor>{t}), IValue(std::vector<Tensor>{same_memory}));
  EXPECT_EQ(IValue(std::vector<std::optional<Tensor>>{std::nullopt, t}),
            IValue(std::vector<std::optional<Tensor>>{std::nullopt, t}));
  EXPECT_NE(IValue(std::vector<std::optional<Tensor>>{t}),
            IValue(std::vector<std::optional<Tensor>>{std::nullopt}));
  EXPECT_EQ(IValue(std::make_tuple(1, "x")), IValue(std::make_tuple(1, "x")));
  EXPECT_NE(IValue(std::make_tuple(1, "x")), IValue(std::make_tuple(1, "y")));
  EXPECT_NE(IValue::make_tuple({IValue(1)}), IValue::make_generic_list({IValue(1)}));
  EXPECT_EQ(IValue(Device("cuda:0")), IValue(Device("cuda:0")));
  EXPECT_NE(IValue(kFloat), IValue(kDouble));
  EXPECT_EQ(IValue(t.storage()), IValue(t.storage()));
  EXPECT_NE(IValue(t.storage()), IValue(same_memory.storage()));
}

TEST(IValue, ReprIsPythonLike) {
  float buf[6] = {};
  Tensor t = from_blob(buf, {2, 3}, kFloat);
  EXPECT_EQ(IValue().repr(), "None");
  EXPECT_EQ(IValue(1).repr(), "1");
  EXPECT_EQ(IValue(-2.5).repr(), "-2.5");
  EXPECT_EQ(IValue(2.0).repr(), "2.0");
  EXPECT_EQ(IValue(1e-5).repr(), "1e-05");
  EXPECT_EQ(IValue(true).repr(), "True");
  EXPECT_EQ(IValue(std::complex<double>(1, 2)).repr(), "(1+2j)");
  EXPECT_EQ(IValue("str").repr(), "'str'");
  EXPECT_EQ(IValue("it's").repr(), "\"it's\"");
  EXPECT_EQ(IValue("a'b\"c\\\n").repr(), "'a\\'b\"c\\\\\\n'");
  EXPECT_EQ(IValue(kFloat).repr(), "float32");
  EXPECT_EQ(IValue(Layout::Strided).repr(), "strided");
  EXPECT_EQ(IValue(MemoryFormat::Contiguous).repr(), "contiguous_format");
  EXPECT_EQ(IValue(Device("cuda:0")).repr(), "cuda:0");
  EXPECT_EQ(IValue(t).repr(), "Tensor(sizes=[2, 3], dtype=Float, device=cpu)");
  EXPECT_EQ(IValue(t.storage()).repr(), "Storage(nbytes=24, device=cpu)");
  EXPECT_EQ(IValue(std::vector<int64_t>{1, 2}).repr(), "[1, 2]");
  EXPECT_EQ(IValue(std::vector<int64_t>{}).repr(), "[]");
  EXPECT_EQ(IValue(std::vector<double>{1, 2.5}).repr(), "[1.0, 2.5]");
  EXPECT_EQ(IValue(std::vector<bool>{true, false}).repr(), "[True, False]");
  EXPECT_EQ(IValue(std::vector<std::optional<Tensor>>{std::nullopt, t}).repr(),
            "[None, Tensor(sizes=[2, 3], dtype=Float, device=cpu)]");
  EXPECT_EQ(IValue(std::vector<std::string>{"a", "b"}).repr(), "['a', 'b']");
  EXPECT_EQ(IValue::make_tuple({IValue(1)}).repr(), "(1,)");
  EXPECT_EQ(IValue(std::make_tuple(1, "a")).repr(), "(1, 'a')");
  EXPECT_EQ(IValue::make_tuple({}).repr(), "()");
  EXPECT_EQ(fmt::format("{}", IValue(std::vector<int64_t>{3})), "[3]");
}

TEST(IValue, CopiesAreSafeAcrossThreads) {
  float buf[1] = {};
  Tensor t = make_float_tensor(buf, 1);
  IValue shared(std::vector<Tensor>{t});
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&shared] {
      for (int j = 0; j < 10000; ++j) {
        Stack stack;
        stack.push_back(shared);
        stack.push_back(IValue(stack.back().to_tensor_list()[0]));
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(t.use_count(), 2u);
}

}  // namespace
}  // namespace opd
