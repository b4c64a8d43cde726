#include "cuda/host_allocator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "error_text.h"
#include "opd/error.h"

namespace opd::cuda {
namespace {

using test_util::error_text;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;
constexpr StreamId kStreamA = 1;
constexpr StreamId kStreamB = 2;

// A host that hands out ordinary memory and keeps, per stream, a count of queued and completed
// work: an event recorded on a stream is complete once the test has completed that stream's
// work up to it. Records every call; shared with the allocator's PinnedMemory so that it
// outlives the allocator, whose destructor is checked. Thread-safe.
class FakeHost {
 public:
  ~FakeHost() {
    for (auto& [ptr, size] : live_) ::operator delete(ptr);
  }

  void set_capacity(size_t capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = capacity;
  }
  void* allocate(size_t nbytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    allocations_.push_back(nbytes);
    if (nbytes > capacity_ - std::min(capacity_, in_use_)) return nullptr;
    void* ptr = ::operator new(nbytes);
    live_.emplace(ptr, nbytes);
    in_use_ += nbytes;
    return ptr;
  }
  void release(void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(ptr);
    if (it == live_.end()) {
      ADD_FAILURE() << "release of " << ptr << ", which the host did not hand out";
      return;
    }
    releases_.push_back(it->second);
    in_use_ -= it->second;
    ::operator delete(ptr);
    live_.erase(it);
  }

  struct Event {
    StreamId stream;
    int64_t position;  // complete once the stream has completed this much work
  };
  void fail_next_record() {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_record_ = true;
  }
  void* record(StreamId stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (fail_record_) {
      fail_record_ = false;
      throw Error("CUDA error: an illegal memory access was encountered in cudaEventRecord");
    }
    auto* e = new Event{stream, ++queued_[stream]};
    events_.insert(e);
    return e;
  }
  bool query(void* event) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto* e = static_cast<Event*>(event);
    EXPECT_TRUE(events_.count(e)) << "query of a destroyed event";
    return completed_[e->stream] >= e->position;
  }
  // Waits for the event: the work before it on its stream is done.
  void synchronize(void* event) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto* e = static_cast<Event*>(event);
    completed_[e->stream] = std::max(completed_[e->stream], e->position);
    ++synchronized_;
  }
  int synchronized() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return synchronized_;
  }
  void destroy(void* event) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto* e = static_cast<Event*>(event);
    EXPECT_EQ(events_.erase(e), 1u) << "destroy of an unknown event";
    delete e;
  }
  // The work queued so far on `stream` is done.
  void complete(StreamId stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    completed_[stream] = queued_[stream];
  }

  std::vector<size_t> allocations() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return allocations_;
  }
  std::vector<size_t> releases() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return releases_;
  }
  size_t live_blocks() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.size();
  }
  size_t live_events() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_.size();
  }

 private:
  mutable std::mutex mutex_;
  size_t capacity_ = std::numeric_limits<size_t>::max();
  size_t in_use_ = 0;
  std::map<void*, size_t> live_;
  std::vector<size_t> allocations_;  // every request, served or not
  std::vector<size_t> releases_;
  std::set<Event*> events_;
  std::map<StreamId, int64_t> queued_;
  std::map<StreamId, int64_t> completed_;
  int synchronized_ = 0;
  bool fail_record_ = false;
};

class FakePinnedMemory : public PinnedMemory {
 public:
  explicit FakePinnedMemory(std::shared_ptr<FakeHost> host) : host_(std::move(host)) {}
  void* allocate(size_t nbytes) override { return host_->allocate(nbytes); }
  void release(void* ptr) override { host_->release(ptr); }
  Event record(StreamId stream) override { return host_->record(stream); }
  bool query(Event event) override { return host_->query(event); }
  void synchronize(Event event) noexcept override { host_->synchronize(event); }
  void destroy(Event event) override { host_->destroy(event); }

 private:
  std::shared_ptr<FakeHost> host_;
};

class HostAllocatorTest : public ::testing::Test {
 protected:
  void* allocate(size_t nbytes) { return alloc_->allocate(nbytes); }
  HostAllocatorStats stats() const { return alloc_->stats(); }

  std::shared_ptr<FakeHost> host_ = std::make_shared<FakeHost>();
  std::unique_ptr<HostCachingAllocator> alloc_ =
      std::make_unique<HostCachingAllocator>(std::make_unique<FakePinnedMemory>(host_));
};

TEST_F(HostAllocatorTest, RoundSizeIsTheNextPowerOfTwo) {
  EXPECT_EQ(HostCachingAllocator::round_size(1), 1u);
  EXPECT_EQ(HostCachingAllocator::round_size(3000), 4 * KiB);
  EXPECT_EQ(HostCachingAllocator::round_size(4 * KiB), 4 * KiB);
  EXPECT_EQ(HostCachingAllocator::round_size(MiB + 1), 2 * MiB);
}

TEST_F(HostAllocatorTest, ZeroBytesGivesNullWithoutTouchingTheHost) {
  EXPECT_EQ(allocate(0), nullptr);
  EXPECT_THAT(host_->allocations(), IsEmpty());
  alloc_->free(nullptr);  // ignored
}

TEST_F(HostAllocatorTest, AFreedBlockServesTheNextRequestOfItsRoundedSize) {
  void* a = allocate(3000);
  alloc_->free(a);
  EXPECT_EQ(allocate(4000), a);
  EXPECT_THAT(host_->allocations(), ElementsAre(4 * KiB));
  EXPECT_EQ(stats().allocated_bytes, static_cast<int64_t>(4 * KiB));
  EXPECT_EQ(stats().reserved_bytes, static_cast<int64_t>(4 * KiB));
  EXPECT_EQ(stats().num_host_allocs, 1);
}

TEST_F(HostAllocatorTest, ABlockServesOnlyItsOwnSizeClass) {
  void* big = allocate(MiB);
  alloc_->free(big);
  void* small = allocate(KiB);
  EXPECT_NE(small, big);
  void* bigger = allocate(2 * MiB);
  EXPECT_NE(bigger, big);
  EXPECT_THAT(host_->allocations(), ElementsAre(MiB, KiB, 2 * MiB));
  EXPECT_EQ(stats().allocated_bytes, static_cast<int64_t>(KiB + 2 * MiB));
  EXPECT_EQ(stats().reserved_bytes, static_cast<int64_t>(MiB + KiB + 2 * MiB));
}

TEST_F(HostAllocatorTest, ABlockIsNotReusedWhileACopyRecordedOnItIsPending) {
  void* a = allocate(KiB);
  EXPECT_TRUE(alloc_->record_use(a, kStreamA));
  alloc_->free(a);
  EXPECT_EQ(stats().pending_events, 1);
  void* b = allocate(KiB);
  EXPECT_NE(b, a) << "reused while the copy may still read it";
  host_->complete(kStreamA);
  alloc_->free(b);
  // Both free now; the event is seen complete at this allocation.
  void* c = allocate(KiB);
  void* d = allocate(KiB);
  EXPECT_EQ(std::set<void*>({c, d}), std::set<void*>({a, b}));
  EXPECT_EQ(stats().pending_events, 0);
  EXPECT_EQ(host_->live_events(), 0u);
  EXPECT_EQ(stats().num_host_allocs, 2);
}

TEST_F(HostAllocatorTest, EveryRecordedEventMustComplete) {
  void* a = allocate(KiB);
  ASSERT_TRUE(alloc_->record_use(a, kStreamA));
  ASSERT_TRUE(alloc_->record_use(a, kStreamB));
  alloc_->free(a);
  host_->complete(kStreamA);
  EXPECT_NE(allocate(KiB), a) << "stream B may still use it";
  host_->complete(kStreamB);
  EXPECT_EQ(allocate(KiB), a);
}

TEST_F(HostAllocatorTest, AnEventCompleteBeforeTheFreeLetsTheBlockBeReusedAtOnce) {
  void* a = allocate(KiB);
  ASSERT_TRUE(alloc_->record_use(a, kStreamA));
  host_->complete(kStreamA);
  void* b = allocate(KiB);  // processes the event while a is still allocated
  EXPECT_NE(b, a);
  alloc_->free(a);
  EXPECT_EQ(allocate(KiB), a);
}

TEST_F(HostAllocatorTest, RecordUseAnswersFalseForMemoryItDidNotHandOut) {
  int local = 0;
  EXPECT_FALSE(alloc_->record_use(&local, kStreamA));
  void* a = allocate(KiB);
  EXPECT_FALSE(alloc_->record_use(static_cast<char*>(a) + 8, kStreamA)) << "not a block start";
  alloc_->free(a);
  EXPECT_FALSE(alloc_->record_use(a, kStreamA)) << "freed";
  EXPECT_EQ(host_->live_events(), 0u);
}

TEST_F(HostAllocatorTest, ARecordThatFailsLeavesNothingPending) {
  void* a = allocate(KiB);
  host_->fail_next_record();
  EXPECT_THROW(alloc_->record_use(a, kStreamA), Error);
  EXPECT_EQ(stats().pending_events, 0);
  alloc_->free(a);
  EXPECT_EQ(allocate(KiB), a);
  EXPECT_EQ(host_->live_events(), 0u);
}

TEST_F(HostAllocatorTest, FreeingForeignOrFreedMemorySaysSo) {
  int local = 0;
  EXPECT_THAT(error_text<Error>([&] { alloc_->free(&local); }),
              ::testing::HasSubstr("pinned host allocator: free of 0x"));
  void* a = allocate(KiB);
  alloc_->free(a);
  EXPECT_THAT(error_text<Error>([&] { alloc_->free(a); }),
              ::testing::EndsWith("which it did not hand out"));
  EXPECT_EQ(stats().allocated_bytes, 0);
}

TEST_F(HostAllocatorTest, OutOfMemoryReleasesTheFreeBlocksAndTriesAgain) {
  host_->set_capacity(3 * MiB);
  void* a = allocate(MiB);
  void* b = allocate(MiB);
  alloc_->free(a);
  void* c = allocate(2 * MiB);  // 1 MiB held by b, 1 MiB free in the cache: a goes back
  ASSERT_NE(c, nullptr);
  EXPECT_THAT(host_->releases(), ElementsAre(MiB));
  EXPECT_EQ(stats().reserved_bytes, static_cast<int64_t>(3 * MiB));
  EXPECT_EQ(stats().num_host_frees, 1);
  alloc_->free(b);
}

TEST_F(HostAllocatorTest, OutOfMemoryAfterReleasingSaysHowMuchWasAsked) {
  host_->set_capacity(2 * MiB);
  void* a = allocate(MiB);
  EXPECT_EQ(error_text<Error>([&] { allocate(MiB + 1); }),
            "CUDA out of memory: could not allocate 2.00 MiB of pinned host memory (1.00 MiB "
            "reserved by the pinned host allocator)");
  EXPECT_EQ(stats().allocated_bytes, static_cast<int64_t>(MiB));
  alloc_->free(a);
  EXPECT_EQ(allocate(MiB), a) << "the allocator is still consistent";
}

TEST_F(HostAllocatorTest, ARequestTooLargeToRoundIsRefused) {
  EXPECT_THAT(error_text<Error>([&] { allocate(std::numeric_limits<size_t>::max()); }),
              ::testing::StartsWith("CUDA out of memory: could not allocate"));
  EXPECT_THAT(host_->allocations(), IsEmpty());
}

TEST_F(HostAllocatorTest, EmptyCacheKeepsBlocksInUseOrWithPendingCopies) {
  void* in_use = allocate(KiB);
  void* pending = allocate(2 * KiB);
  void* idle = allocate(4 * KiB);
  ASSERT_TRUE(alloc_->record_use(pending, kStreamA));
  alloc_->free(pending);
  alloc_->free(idle);
  alloc_->empty_cache();
  EXPECT_THAT(host_->releases(), ElementsAre(4 * KiB));
  host_->complete(kStreamA);
  alloc_->empty_cache();
  EXPECT_THAT(host_->releases(), ElementsAre(4 * KiB, 2 * KiB));
  EXPECT_EQ(stats().reserved_bytes, static_cast<int64_t>(KiB));
  alloc_->free(in_use);
}

TEST_F(HostAllocatorTest, DestructionWaitsForCopiesAndReleasesTheFreedBlocks) {
  void* a = allocate(KiB);
  void* b = allocate(MiB);
  void* c = allocate(2 * KiB);
  ASSERT_TRUE(alloc_->record_use(b, kStreamA));
  alloc_->free(b);
  alloc_->free(c);
  (void)a;  // still handed out: a tensor alive at process exit keeps its memory
  alloc_.reset();
  EXPECT_EQ(host_->synchronized(), 1) << "b's copy was waited for before b was released";
  EXPECT_THAT(host_->releases(), ::testing::UnorderedElementsAre(MiB, 2 * KiB));
  EXPECT_EQ(host_->live_blocks(), 1u);
  EXPECT_EQ(host_->live_events(), 0u);
}

TEST_F(HostAllocatorTest, ThreadsAllocateRecordAndFreeConcurrently) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 2000;
  std::atomic<int> overlaps{0};
  std::vector<std::thread> threads;
  std::mutex owned_mutex;
  std::set<void*> owned;  // blocks handed out now: never twice at once
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const StreamId stream = kStreamA + static_cast<StreamId>(t % 2);
      for (int i = 0; i < kRounds; ++i) {
        void* p = allocate(KiB << (i % 4));
        {
          std::lock_guard<std::mutex> lock(owned_mutex);
          if (!owned.insert(p).second) overlaps.fetch_add(1);
        }
        if (i % 3 == 0) alloc_->record_use(p, stream);
        {
          std::lock_guard<std::mutex> lock(owned_mutex);
          owned.erase(p);
        }
        alloc_->free(p);
        if (i % 64 == 0) host_->complete(stream);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(stats().allocated_bytes, 0);
  host_->complete(kStreamA);
  host_->complete(kStreamB);
  alloc_->empty_cache();
  EXPECT_EQ(stats().pending_events, 0);
  EXPECT_EQ(stats().reserved_bytes, 0);
  EXPECT_EQ(host_->live_blocks(), 0u);
}

}  // namespace
}  // namespace opd::cuda
