#include "opd/tensor.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "error_text.h"
#include "opd/error.h"
#include "opd/intrusive_ptr.h"
#include "opd/storage.h"

namespace opd {
namespace {

using test_util::error_text;

using Ints = std::vector<int64_t>;

// ---- intrusive_ptr ------------------------------------------------------------------------------

struct Counted : intrusive_ptr_target {
  explicit Counted(int* live) : live_(live) { ++*live_; }
  ~Counted() override { --*live_; }
  int* live_;
};
struct DerivedCounted : Counted {
  using Counted::Counted;
};

TEST(IntrusivePtr, CountsOwnersAndDeletesWithTheLast) {
  int live = 0;
  {
    intrusive_ptr<Counted> a = make_intrusive<Counted>(&live);
    EXPECT_EQ(live, 1);
    EXPECT_EQ(a.use_count(), 1u);
    EXPECT_TRUE(a.unique());
    intrusive_ptr<Counted> b = a;
    EXPECT_EQ(a.use_count(), 2u);
    EXPECT_EQ(a, b);
    intrusive_ptr<Counted> c = std::move(b);
    EXPECT_EQ(a.use_count(), 2u);  // a move does not count
    EXPECT_FALSE(b);
    EXPECT_EQ(b, nullptr);
    EXPECT_EQ(b.use_count(), 0u);
    c.reset();
    EXPECT_EQ(a.use_count(), 1u);
    EXPECT_EQ(live, 1);
  }
  EXPECT_EQ(live, 0);
}

TEST(IntrusivePtr, ReleaseReclaimAndReclaimCopy) {
  int live = 0;
  intrusive_ptr<Counted> a = make_intrusive<Counted>(&live);
  Counted* raw = a.release();
  EXPECT_FALSE(a.defined());
  EXPECT_EQ(live, 1);
  intrusive_ptr<Counted> b = intrusive_ptr<Counted>::reclaim(raw);
  EXPECT_EQ(b.use_count(), 1u);
  intrusive_ptr<Counted> c = intrusive_ptr<Counted>::reclaim_copy(b.get());
  EXPECT_EQ(b.use_count(), 2u);
  EXPECT_EQ(c.get(), raw);
  b.reset();
  c.reset();
  EXPECT_EQ(live, 0);
}

TEST(IntrusivePtr, ConvertsToBaseAndDeletesThroughIt) {
  int live = 0;
  intrusive_ptr<DerivedCounted> d = make_intrusive<DerivedCounted>(&live);
  intrusive_ptr<Counted> base = d;
  EXPECT_EQ(d.use_count(), 2u);
  d.reset();
  EXPECT_EQ(live, 1);
  base = nullptr;
  EXPECT_EQ(live, 0);
}

TEST(IntrusivePtr, ConcurrentCopiesKeepTheCountExact) {
  int live = 0;
  intrusive_ptr<Counted> shared = make_intrusive<Counted>(&live);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&shared] {
      for (int i = 0; i < 20000; ++i) {
        intrusive_ptr<Counted> copy = shared;
        intrusive_ptr<Counted> moved = std::move(copy);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(shared.use_count(), 1u);
  shared.reset();
  EXPECT_EQ(live, 0);
}

// ---- Tensor over a caller's buffer ------------------------------------------------------------

TEST(Tensor, FromBlobOverALocalBuffer) {
  float buf[6] = {0, 1, 2, 3, 4, 5};
  Tensor t = from_blob(buf, {2, 3}, kFloat);
  ASSERT_TRUE(t.defined());
  EXPECT_EQ(Ints(t.sizes().begin(), t.sizes().end()), (Ints{2, 3}));
  EXPECT_EQ(Ints(t.strides().begin(), t.strides().end()), (Ints{3, 1}));
  EXPECT_EQ(t.dim(), 2);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.scalar_type(), kFloat);
  EXPECT_EQ(t.dtype(), kFloat);
  EXPECT_EQ(t.element_size(), 4u);
  EXPECT_EQ(t.device(), Device(DeviceType::CPU));
  EXPECT_TRUE(t.is_cpu());
  EXPECT_EQ(t.storage_offset(), 0);
  EXPECT_EQ(t.storage().nbytes(), sizeof(buf));
  EXPECT_EQ(t.storage().data(), buf);
  EXPECT_EQ(t.data_ptr(), buf);
  EXPECT_EQ(t.data_ptr<float>()[4], 4.0f);
  t.data_ptr<float>()[5] = 50;
  EXPECT_EQ(buf[5], 50.0f);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.version(), 0u);
  EXPECT_EQ(t.key_set(), key_set_for_device(DeviceType::CPU));
  EXPECT_EQ(t.str(), "Tensor(sizes=[2, 3], dtype=Float, device=cpu)");
}

TEST(Tensor, FromBlobWithStridesAndSpans) {
  int64_t buf[6] = {0, 1, 2, 3, 4, 5};
  std::array<int64_t, 2> sizes = {3, 2};
  std::vector<int64_t> strides = {1, 3};  // the transpose of a 2x3 matrix
  Tensor t = from_blob(buf, sizes, strides, kLong);
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.stride(0), 1);
  EXPECT_EQ(t.stride(1), 3);
  EXPECT_EQ(t.storage().nbytes(), 6 * sizeof(int64_t));
  Tensor u = from_blob(buf, {6}, {1}, kLong);
  EXPECT_TRUE(u.is_contiguous());
}

TEST(Tensor, KeySetFollowsTheDevice) {
  float buf[2] = {};
  Tensor cuda = from_blob(buf, {2}, kFloat, Device("cuda:0"));
  EXPECT_EQ(cuda.key_set(), key_set_for_device(DeviceType::CUDA));
  EXPECT_TRUE(cuda.is_cuda());
  EXPECT_EQ(cuda.str(), "Tensor(sizes=[2], dtype=Float, device=cuda:0)");
  Tensor meta = make_tensor(Storage::create(nullptr, 64, Device("meta")), Ints{4, 4}, Ints{4, 1}, 0,
                            kFloat, Device("meta"));
  EXPECT_EQ(meta.key_set(), key_set_for_device(DeviceType::Meta));
  EXPECT_EQ(meta.data_ptr(), nullptr);
  EXPECT_TRUE(meta.is_meta());
  EXPECT_EQ(Tensor().key_set(), DispatchKeySet());
}

TEST(Tensor, SizeAndStrideWrapNegativeDims) {
  float buf[24] = {};
  Tensor t = from_blob(buf, {2, 3, 4}, kFloat);
  EXPECT_EQ(t.size(-1), 4);
  EXPECT_EQ(t.size(-3), 2);
  EXPECT_EQ(t.stride(-1), 1);
  EXPECT_EQ(t.stride(0), 12);
}

TEST(Tensor, DimOutOfRangeIsAnIndexError) {
  float buf[6] = {};
  Tensor t = from_blob(buf, {2, 3}, kFloat);
  EXPECT_EQ(error_text<IndexError>([&] { t.size(2); }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  EXPECT_EQ(error_text<IndexError>([&] { t.stride(-3); }),
            "Dimension out of range (expected to be in range of [-2, 1], but got -3)");

  Tensor scalar = from_blob(buf, IntArrayRef(), kFloat);
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(error_text<IndexError>([&] { scalar.size(0); }),
            "Dimension specified as 0 but tensor has no dimensions");
  EXPECT_EQ(maybe_wrap_dim(-1, 0), 0);
  EXPECT_EQ(maybe_wrap_dim(0, 0), 0);
  EXPECT_EQ(error_text<IndexError>([] { maybe_wrap_dim(1, 0); }),
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  EXPECT_EQ(maybe_wrap_dim(-2, 5), 3);
}

TEST(Tensor, DataPtrChecksTheDtype) {
  float buf[4] = {};
  Tensor t = from_blob(buf, {4}, kFloat);
  EXPECT_EQ(error_text<TypeError>([&] { t.data_ptr<int32_t>(); }),
            "expected scalar type Int but found Float");
  EXPECT_EQ(error_text<TypeError>([&] { t.data_ptr<double>(); }),
            "expected scalar type Double but found Float");
  const float* p = t.data_ptr<const float>();
  EXPECT_EQ(p, buf);
}

TEST(Tensor, UndefinedTensor) {
  Tensor u;
  EXPECT_FALSE(u.defined());
  EXPECT_EQ(u.use_count(), 0u);
  EXPECT_EQ(u.unsafe_get_impl(), nullptr);
  EXPECT_TRUE(u.is_same(Tensor()));
  EXPECT_EQ(u.str(), "Tensor(undefined)");
  EXPECT_EQ(error_text<Error>([&] { u.sizes(); }), "sizes() called on an undefined Tensor");
  EXPECT_EQ(error_text<Error>([&] { u.data_ptr<float>(); }),
            "data_ptr() called on an undefined Tensor");
  EXPECT_EQ(error_text<Error>([&] { u.bump_version(); }),
            "bump_version() called on an undefined Tensor");
}

TEST(Tensor, CopiesShareTheImplAndMovesDoNotCount) {
  static_assert(sizeof(Tensor) == sizeof(void*), "a Tensor is one pointer");
  float buf[2] = {};
  Tensor a = from_blob(buf, {2}, kFloat);
  EXPECT_EQ(a.use_count(), 1u);
  {
    Tensor b = a;
    EXPECT_EQ(a.use_count(), 2u);
    EXPECT_TRUE(a.is_same(b));
    Tensor c = std::move(b);
    EXPECT_EQ(a.use_count(), 2u);
    EXPECT_FALSE(b.defined());  // NOLINT(bugprone-use-after-move): moved-from is undefined
    EXPECT_EQ(c.unsafe_get_impl(), a.unsafe_get_impl());
  }
  EXPECT_EQ(a.use_count(), 1u);
  Tensor other = from_blob(buf, {2}, kFloat);
  EXPECT_FALSE(a.is_same(other));  // same memory, different tensors
}

// ---- Views
// ----------------------------------------------------------------------------------------

TEST(Tensor, ViewsShareStorageAndVersionCounter) {
  float buf[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  Tensor base = from_blob(buf, {3, 4}, kFloat);
  Tensor row = make_view(base, Ints{4}, Ints{1}, 4);
  EXPECT_EQ(row.data_ptr<float>(), buf + 4);
  EXPECT_EQ(row.data_ptr<float>()[3], 7.0f);
  EXPECT_TRUE(row.storage().is_same(base.storage()));
  EXPECT_EQ(base.storage().use_count(), 2u);
  EXPECT_EQ(row.storage_offset(), 4);
  EXPECT_EQ(row.key_set(), base.key_set());
  EXPECT_TRUE(row.is_contiguous());

  base.bump_version();
  EXPECT_EQ(row.version(), 1u);
  row.bump_version();
  EXPECT_EQ(base.version(), 2u);

  Tensor block = make_view(base, Ints{2, 2}, Ints{4, 1}, 5);  // rows 1-2, columns 1-2
  EXPECT_FALSE(block.is_contiguous());
  EXPECT_EQ(block.data_ptr<float>()[4], 9.0f);  // [1][0] of the block is buf[9]
  Tensor corner = make_view(block, Ints{1}, Ints{1}, 10);
  EXPECT_EQ(corner.data_ptr<float>()[0], 10.0f);
  corner.bump_version();
  EXPECT_EQ(base.version(), 3u);

  float other[12] = {};
  Tensor unrelated = from_blob(other, {3, 4}, kFloat);
  EXPECT_EQ(unrelated.version(), 0u);
}

TEST(Tensor, ViewGeometryIsCheckedAgainstTheBaseStorage) {
  float buf[12] = {};
  Tensor base = from_blob(buf, {3, 4}, kFloat);
  EXPECT_EQ(error_text<ValueError>([&] {
              make_view(base, Ints{4, 4}, Ints{4, 1}, 0);
            }),
            "make_view: sizes [4, 4], strides [4, 1], storage offset 0, and itemsize 4 requiring "
            "a storage size of 64 are out of bounds for storage of size 48");
  EXPECT_EQ(error_text<ValueError>([&] { make_view(base, Ints{4}, Ints{1}, 9); }),
            "make_view: sizes [4], strides [1], storage offset 9, and itemsize 4 requiring a "
            "storage size of 52 are out of bounds for storage of size 48");
  EXPECT_EQ(error_text<ValueError>([] { make_view(Tensor(), Ints{1}, Ints{1}, 0); }),
            "make_view: base is an undefined Tensor");
}

TEST(Tensor, MetadataBeyondTheInlineCapacity) {
  double buf[64] = {};
  Ints sizes = {2, 2, 2, 2, 2, 2};  // six dimensions: more than are held inline
  Tensor t = from_blob(buf, sizes, kDouble);
  EXPECT_EQ(Ints(t.sizes().begin(), t.sizes().end()), sizes);
  EXPECT_EQ(Ints(t.strides().begin(), t.strides().end()), (Ints{32, 16, 8, 4, 2, 1}));
  EXPECT_EQ(t.numel(), 64);
  Tensor v = make_view(t, Ints{2, 2, 2, 2, 2, 2, 2}, Ints{0, 32, 16, 8, 4, 2, 1}, 0);
  EXPECT_EQ(v.dim(), 7);
  EXPECT_EQ(v.size(-1), 2);
  EXPECT_EQ(v.stride(0), 0);
  v.unsafe_get_impl()->set_sizes_and_strides(Ints{8}, Ints{1}, 8);
  EXPECT_EQ(v.dim(), 1);
  EXPECT_EQ(v.data_ptr<double>(), buf + 8);
  v.unsafe_get_impl()->set_sizes_and_strides(sizes, contiguous_strides(sizes), 0);
  EXPECT_EQ(v.numel(), 64);
  EXPECT_TRUE(v.is_contiguous());
}

TEST(Tensor, SetSizesAndStridesFailureLeavesTheTensorUnchanged) {
  float buf[6] = {};
  Tensor t = from_blob(buf, {2, 3}, kFloat);
  EXPECT_EQ(error_text<ValueError>(
                [&] { t.unsafe_get_impl()->set_sizes_and_strides(Ints{7}, Ints{1}, 0); }),
            "set_sizes_and_strides: sizes [7], strides [1], storage offset 0, and itemsize 4 "
            "requiring a storage size of 28 are out of bounds for storage of size 24");
  EXPECT_EQ(t.dim(), 2);
  EXPECT_EQ(t.numel(), 6);
}

TEST(Tensor, ContiguityFollowsPyTorch) {
  float buf[64] = {};
  EXPECT_TRUE(from_blob(buf, {2, 1, 3}, {3, 100, 1}, kFloat).is_contiguous());  // size-1 dim
  EXPECT_FALSE(from_blob(buf, {2, 3}, {1, 2}, kFloat).is_contiguous());
  EXPECT_TRUE(from_blob(buf, {2, 0, 3}, {7, 7, 7}, kFloat).is_contiguous());  // empty
  EXPECT_FALSE(from_blob(buf, {2, 3}, {6, 2}, kFloat).is_contiguous());
  EXPECT_EQ(contiguous_strides(Ints{2, 3, 4}), (Ints{12, 4, 1}));
  EXPECT_EQ(contiguous_strides(Ints{2, 0, 3}), (Ints{3, 3, 1}));
  EXPECT_EQ(contiguous_strides(Ints{}), Ints{});
}

// ---- Storage ownership --------------------------------------------------------------------------

struct DeleteLog {
  std::vector<std::string> events;
  int deleter_calls = 0;
  bool owner_alive_in_deleter = false;
  std::weak_ptr<void> owner;
};

void log_delete(void* data, void* ctx) {
  auto* log = static_cast<DeleteLog*>(ctx);
  ++log->deleter_calls;
  log->owner_alive_in_deleter = !log->owner.expired();
  log->events.push_back("deleter");
  delete[] static_cast<float*>(data);
}

std::shared_ptr<void> make_owner(DeleteLog* log) {
  std::shared_ptr<void> owner(new int(0), [log](void* p) {
    log->events.push_back("owner");
    delete static_cast<int*>(p);
  });
  log->owner = owner;
  return owner;
}

TEST(Storage, DeleterRunsOnceThenTheOwnerIsReleased) {
  DeleteLog log;
  {
    float* data = new float[6];
    Tensor t = from_blob(data, Ints{2, 3}, Ints{3, 1}, kFloat, Device("cpu"), &log_delete, &log,
                         make_owner(&log));
    EXPECT_FALSE(log.owner.expired());
    EXPECT_EQ(t.storage().owner().use_count(), 1);
    Tensor view = make_view(t, Ints{3}, Ints{1}, 3);
    Tensor copy = t;
    t = Tensor();
    copy = Tensor();
    EXPECT_EQ(log.deleter_calls, 0);  // the view still holds the storage
    EXPECT_EQ(view.data_ptr<float>(), data + 3);
  }
  EXPECT_EQ(log.deleter_calls, 1);
  EXPECT_TRUE(log.owner_alive_in_deleter);
  EXPECT_TRUE(log.owner.expired());
  EXPECT_EQ(log.events, (std::vector<std::string>{"deleter", "owner"}));
}

TEST(Storage, FailedFromBlobTakesNothing) {
  DeleteLog log;
  float* data = new float[4];
  std::shared_ptr<void> owner = make_owner(&log);
  EXPECT_THROW(from_blob(data, Ints{4}, Ints{-1}, kFloat, Device("cpu"), &log_delete, &log, owner),
               ValueError);
  EXPECT_EQ(log.deleter_calls, 0);
  EXPECT_EQ(owner.use_count(), 1);
  delete[] data;
}

TEST(Storage, HandleAccessors) {
  int buf[4] = {};
  Storage s = Storage::create(buf, sizeof(buf), Device("cpu"));
  EXPECT_TRUE(s.defined());
  EXPECT_EQ(s.data(), buf);
  EXPECT_EQ(s.nbytes(), sizeof(buf));
  EXPECT_EQ(s.device(), Device("cpu"));
  EXPECT_EQ(s.owner(), nullptr);
  EXPECT_EQ(s.use_count(), 1u);
  Tensor t = make_tensor(s, Ints{2}, Ints{2}, 1, kInt, Device("cpu"));
  EXPECT_EQ(s.use_count(), 2u);
  EXPECT_EQ(t.data_ptr<int32_t>(), buf + 1);
  EXPECT_EQ(error_text<Error>([] { Storage().data(); }), "Storage: accessed an undefined Storage");
}

// ---- Note [Resizable storage] -------------------------------------------------------------------

TEST(Storage, CreateMakesResizableStoragesUnlessTheMemoryIsBorrowedOrToldOtherwise) {
  int buf[4] = {};
  DeleteLog log;
  EXPECT_TRUE(Storage::create(new float[4], 16, Device("cpu"), &log_delete, &log).resizable());
  EXPECT_TRUE(Storage::create(nullptr, 64, Device("meta")).resizable());
  EXPECT_FALSE(Storage::create(buf, sizeof(buf), Device("cpu")).resizable());
  EXPECT_TRUE(Storage::create(buf, sizeof(buf), Device("cpu"), nullptr, nullptr, nullptr, true)
                  .resizable());
  Storage fixed = Storage::create(new float[4], 16, Device("cpu"), &log_delete, &log, nullptr,
                                  /*resizable=*/false);
  EXPECT_FALSE(fixed.resizable());
  EXPECT_TRUE(fixed.set_resizable(true));
  EXPECT_TRUE(fixed.resizable());
  EXPECT_TRUE(fixed.set_resizable(false));
  EXPECT_FALSE(fixed.resizable());
  EXPECT_EQ(error_text<Error>([] { Storage().resizable(); }),
            "Storage: accessed an undefined Storage");
  EXPECT_EQ(error_text<Error>([] { Storage().set_resizable(false); }),
            "Storage: accessed an undefined Storage");
}

TEST(Storage, FromBlobOverTheCallersMemoryIsNotResizable) {
  float buf[4] = {};
  EXPECT_FALSE(from_blob(buf, {4}, kFloat).storage().resizable());
  EXPECT_FALSE(from_blob(buf, Ints{2}, Ints{2}, kFloat).storage().resizable());
  // No memory to lose (a Meta tensor's): resizable.
  EXPECT_TRUE(from_blob(nullptr, {4}, kFloat, Device("meta")).storage().resizable());
  // The storage owns what it frees: resizable, and whoever shares it marks it.
  DeleteLog log;
  Tensor owned =
      from_blob(new float[4], Ints{4}, Ints{1}, kFloat, Device("cpu"), &log_delete, &log);
  EXPECT_TRUE(owned.storage().resizable());
  EXPECT_TRUE(owned.storage().set_resizable(false));
  EXPECT_FALSE(make_view(owned, Ints{2}, Ints{1}, 2).storage().resizable());
}

TEST(Storage, OneMadeByCodeBuiltBeforeTheFlagKeepsTheOldRuleAndCannotBeMarked) {
  // What a plugin built before ABI 3.3 makes: a StorageImpl from its own inline constructor,
  // without the flag, which must not be read.
  int buf[4] = {};
  DeleteLog log;
  Storage borrowed(make_intrusive<StorageImpl>(buf, sizeof(buf), Device("cpu")));
  Storage owned(make_intrusive<StorageImpl>(new float[4], 4 * sizeof(float), Device("cpu"),
                                            &log_delete, &log));
  Storage none(make_intrusive<StorageImpl>(nullptr, 16, Device("meta")));
  EXPECT_FALSE(borrowed.resizable());
  EXPECT_TRUE(owned.resizable());
  EXPECT_TRUE(none.resizable());
  EXPECT_FALSE(owned.set_resizable(false));
  EXPECT_TRUE(owned.resizable());
  EXPECT_FALSE(borrowed.set_resizable(true));
  EXPECT_FALSE(borrowed.resizable());
}

// An export (set_resizable(false)) on one thread while others read the flag, as resize_ does:
// the flag is an atomic, so this is race-free under ThreadSanitizer, and a reader that has seen
// the export finished sees the mark.
TEST(Storage, ResizableFlagIsRaceFree) {
  constexpr int kRounds = 2000;
  float buf[4] = {};
  for (int round = 0; round < 4; ++round) {
    Storage s = Storage::create(buf, sizeof(buf), Device("cpu"), nullptr, nullptr, nullptr, true);
    std::atomic<bool> marked{false};
    std::vector<std::thread> readers;
    for (int r = 0; r < 3; ++r) {
      readers.emplace_back([&, s] {
        for (int i = 0; i < kRounds; ++i) {
          const bool was_marked = marked.load(std::memory_order_acquire);
          EXPECT_FALSE(was_marked && s.resizable()) << "a mark was lost";
        }
      });
    }
    std::thread exporter([&, s] {
      for (int i = 0; i < kRounds / 2; ++i) EXPECT_TRUE(s.set_resizable(true));
      EXPECT_TRUE(s.set_resizable(false));
      marked.store(true, std::memory_order_release);
    });
    exporter.join();
    for (std::thread& t : readers) t.join();
    EXPECT_FALSE(s.resizable());
  }
}

TEST(Tensor, MakeTensorChecksItsArguments) {
  float buf[12] = {};
  Storage s = Storage::create(buf, sizeof(buf), Device("cpu"));
  Device cpu("cpu");
  EXPECT_EQ(error_text<ValueError>([&] {
              make_tensor(s, Ints{4, 4}, Ints{4, 1}, 0, kFloat, cpu);
            }),
            "make_tensor: sizes [4, 4], strides [4, 1], storage offset 0, and itemsize 4 "
            "requiring a storage size of 64 are out of bounds for storage of size 48");
  EXPECT_EQ(error_text<ValueError>([&] {
              make_tensor(s, Ints{2, 2}, Ints{2}, 0, kFloat, cpu);
            }),
            "make_tensor: sizes [2, 2] has 2 dimensions but strides [2] has 1");
  EXPECT_EQ(error_text<ValueError>([&] {
              make_tensor(s, Ints{2, -1}, Ints{1, 1}, 0, kFloat, cpu);
            }),
            "make_tensor: Trying to create tensor with negative dimension -1: [2, -1]");
  EXPECT_EQ(error_text<ValueError>([&] { make_tensor(s, Ints{2}, Ints{-1}, 0, kFloat, cpu); }),
            "make_tensor: negative strides are not supported, got strides [-1]");
  EXPECT_EQ(error_text<ValueError>([&] { make_tensor(s, Ints{2}, Ints{1}, -1, kFloat, cpu); }),
            "make_tensor: invalid storage offset -1");
  EXPECT_EQ(error_text<ValueError>(
                [&] { make_tensor(s, Ints{2}, Ints{1}, 0, kFloat, Device("cuda:0")); }),
            "make_tensor: the storage is on cpu but the tensor would be on cuda:0");
  EXPECT_EQ(
      error_text<ValueError>([&] { make_tensor(Storage(), Ints{2}, Ints{1}, 0, kFloat, cpu); }),
      "make_tensor: the storage is undefined");
  EXPECT_EQ(error_text<ValueError>(
                [&] { make_tensor(s, Ints{2}, Ints{1}, 0, ScalarType::Undefined, cpu); }),
            "make_tensor: dtype is Undefined");
  EXPECT_EQ(error_text<ValueError>([&] {
              make_tensor(s, Ints{int64_t{1} << 62, 8}, Ints{0, 0}, 0, kFloat, cpu);
            }),
            "make_tensor: sizes [4611686018427387904, 8], strides [0, 0] and storage offset 0 "
            "overflow int64");
  // An empty tensor needs no bytes, wherever it starts.
  EXPECT_EQ(make_tensor(s, Ints{0, 5}, Ints{5, 1}, 100, kFloat, cpu).numel(), 0);
}

TEST(Tensor, AutogradMetaSlotIsOpaqueAndNotInheritedByViews) {
  float buf[4] = {};
  Tensor t = from_blob(buf, {4}, kFloat);
  TensorImpl* impl = t.unsafe_get_impl();
  EXPECT_EQ(impl->autograd_meta(), nullptr);
  auto meta = std::make_shared<int>(42);
  impl->set_autograd_meta(meta);
  EXPECT_EQ(impl->autograd_meta().get(), meta.get());
  Tensor v = make_view(t, Ints{2}, Ints{1}, 0);
  EXPECT_EQ(v.unsafe_get_impl()->autograd_meta(), nullptr);
  t = Tensor();
  EXPECT_EQ(meta.use_count(), 1);
}

TEST(Tensor, KeySetCanBeReplacedOnTheImpl) {
  float buf[1] = {};
  Tensor t = from_blob(buf, {1}, kFloat);
  DispatchKeySet ks = t.key_set() | key_bit(DispatchKey::Tracer);
  t.unsafe_get_impl()->unsafe_set_key_set(ks);
  EXPECT_EQ(t.key_set(), ks);
  EXPECT_EQ(make_view(t, Ints{1}, Ints{1}, 0).key_set(), ks);
}

}  // namespace
}  // namespace opd
