#include "cuda/caching_allocator.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "error_text.h"
#include "opd/error.h"

namespace opd::cuda {
namespace {

using test_util::error_text;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;
constexpr size_t GiB = size_t{1} << 30;
constexpr StreamId kStreamA = 1;
constexpr StreamId kStreamB = 2;

struct DeviceCall {
  enum Kind { kAllocate, kRelease };
  Kind kind;
  size_t nbytes;  // allocate: the request; release: the size of the segment released
  void* ptr;      // allocate: the result (null: out of memory); release: the argument
};

// A device that hands out host memory, records every call and, given a capacity, answers null
// past it. Shared between the test and the DeviceMemory the allocator owns, so that it outlives
// the allocator (whose destructor's releases are checked). Thread-safe.
class FakeDevice {
 public:
  static constexpr std::align_val_t kAlign{512};

  ~FakeDevice() {
    for (auto& [ptr, size] : live_) ::operator delete(ptr, kAlign);
  }

  void set_capacity(size_t capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = capacity;
  }

  void* allocate(size_t nbytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    void* ptr = nullptr;
    if (nbytes <= capacity_ - std::min(capacity_, in_use_) && nbytes > 0) {
      ptr = ::operator new(nbytes, kAlign);
      live_.emplace(static_cast<char*>(ptr), nbytes);
      in_use_ += nbytes;
    }
    calls_.push_back({DeviceCall::kAllocate, nbytes, ptr});
    return ptr;
  }

  void release(void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(static_cast<char*>(ptr));
    if (it == live_.end()) {
      ADD_FAILURE() << "release of " << ptr << ", which the device did not hand out";
      calls_.push_back({DeviceCall::kRelease, 0, ptr});
      return;
    }
    calls_.push_back({DeviceCall::kRelease, it->second, ptr});
    in_use_ -= it->second;
    ::operator delete(ptr, kAlign);
    live_.erase(it);
  }

  std::vector<DeviceCall> calls() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  // The sizes of the allocate calls, successful or not.
  std::vector<size_t> allocations() const {
    std::vector<size_t> out;
    for (const DeviceCall& c : calls())
      if (c.kind == DeviceCall::kAllocate) out.push_back(c.nbytes);
    return out;
  }
  std::vector<void*> releases() const {
    std::vector<void*> out;
    for (const DeviceCall& c : calls())
      if (c.kind == DeviceCall::kRelease) out.push_back(c.ptr);
    return out;
  }
  size_t num_live_segments() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.size();
  }
  size_t in_use() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return in_use_;
  }
  // Whether [ptr, ptr + nbytes) lies inside one segment handed out and not released.
  bool holds(const void* ptr, size_t nbytes) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const char* p = static_cast<const char*>(ptr);
    auto it = live_.upper_bound(const_cast<char*>(p));
    if (it == live_.begin()) return false;
    --it;
    return p + nbytes <= it->first + it->second;
  }

 private:
  mutable std::mutex mutex_;
  size_t capacity_ = std::numeric_limits<size_t>::max();
  size_t in_use_ = 0;
  std::map<char*, size_t> live_;
  std::vector<DeviceCall> calls_;
};

class FakeDeviceMemory : public DeviceMemory {
 public:
  explicit FakeDeviceMemory(std::shared_ptr<FakeDevice> device) : device_(std::move(device)) {}
  void* allocate(size_t nbytes) override { return device_->allocate(nbytes); }
  void release(void* ptr) override { device_->release(ptr); }
  std::string name() const override { return "cuda:0"; }

 private:
  std::shared_ptr<FakeDevice> device_;
};

class CachingAllocatorTest : public ::testing::Test {
 protected:
  CachingAllocator& alloc() { return *alloc_; }
  AllocatorStats stats() const { return alloc_->stats(); }
  char* allocate(size_t nbytes, StreamId stream = kStreamA) {
    return static_cast<char*>(alloc_->allocate(nbytes, stream));
  }

  std::shared_ptr<FakeDevice> device_ = std::make_shared<FakeDevice>();
  std::unique_ptr<CachingAllocator> alloc_ =
      std::make_unique<CachingAllocator>(std::make_unique<FakeDeviceMemory>(device_));
};

std::string oom(const std::string& tried, const std::string& allocated,
                const std::string& reserved) {
  return "CUDA out of memory. Tried to allocate " + tried + " (cuda:0; " + allocated +
         " allocated, " + reserved + " reserved by the caching allocator)";
}

// The device calls, one line each: "allocate 20 MiB", "allocate 20 MiB: null", "release 2 MiB".
std::vector<std::string> trace(const std::vector<DeviceCall>& calls) {
  std::vector<std::string> out;
  for (const DeviceCall& c : calls) {
    std::string size = c.nbytes % MiB == 0 ? std::to_string(c.nbytes / MiB) + " MiB"
                                           : std::to_string(c.nbytes) + " bytes";
    if (c.kind == DeviceCall::kRelease) {
      out.push_back("release " + size);
    } else {
      out.push_back("allocate " + size + (c.ptr == nullptr ? ": null" : ""));
    }
  }
  return out;
}

// ---- rounding and pools -----------------------------------------------------------------------

TEST_F(CachingAllocatorTest, RoundSizeRoundsUpTo512) {
  EXPECT_EQ(CachingAllocator::round_size(1), 512u);
  EXPECT_EQ(CachingAllocator::round_size(511), 512u);
  EXPECT_EQ(CachingAllocator::round_size(512), 512u);
  EXPECT_EQ(CachingAllocator::round_size(513), 1024u);
  EXPECT_EQ(CachingAllocator::round_size(MiB + 1), MiB + 512);
}

TEST_F(CachingAllocatorTest, ZeroBytesGivesNullWithoutTouchingTheDevice) {
  EXPECT_EQ(allocate(0), nullptr);
  EXPECT_THAT(trace(device_->calls()), IsEmpty());
  EXPECT_EQ(stats().num_allocs, 0);
  EXPECT_EQ(stats().allocated_bytes, 0);
}

TEST_F(CachingAllocatorTest, SmallRequestsShareOneTwoMiBSegment) {
  char* a = allocate(KiB);
  char* b = allocate(KiB);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_THAT(device_->calls(), ::testing::SizeIs(1));
  char* base = static_cast<char*>(device_->calls()[0].ptr);
  EXPECT_EQ(device_->calls()[0].nbytes, 2 * MiB);
  EXPECT_EQ(a, base);
  EXPECT_EQ(b, base + KiB);  // cut off the front of the rest: adjacent, not overlapping
  EXPECT_TRUE(device_->holds(a, KiB));
  EXPECT_TRUE(device_->holds(b, KiB));
  EXPECT_EQ(stats().allocated_bytes, static_cast<int64_t>(2 * KiB));
  EXPECT_EQ(stats().reserved_bytes, static_cast<int64_t>(2 * MiB));
}

TEST_F(CachingAllocatorTest, SmallSegmentIsUsedToTheLastByteBeforeANewOne) {
  // 1 MiB (the largest small request) + 1 MiB - 512 + 512 fill the 2 MiB segment exactly.
  char* a = allocate(MiB);
  char* b = allocate(MiB - 512);
  char* c = allocate(1);
  EXPECT_EQ(b, a + MiB);
  EXPECT_EQ(c, a + 2 * MiB - 512);
  EXPECT_THAT(device_->allocations(), ElementsAre(2 * MiB));
  char* d = allocate(1);
  EXPECT_THAT(device_->allocations(), ElementsAre(2 * MiB, 2 * MiB));
  EXPECT_FALSE(d >= a && d < a + 2 * MiB);
  EXPECT_EQ(stats().allocated_bytes, static_cast<int64_t>(2 * MiB + 512));
}

TEST_F(CachingAllocatorTest, SegmentSizesFollowTheRequestSize) {
  // One stream each, so that no request is served from an earlier one's segment.
  allocate(MiB, 1);             // small: 2 MiB
  allocate(MiB + 1, 2);         // 1..10 MiB: 20 MiB
  allocate(10 * MiB - 512, 3);  // still below 10 MiB: 20 MiB
  allocate(10 * MiB, 4);        // from 10 MiB: its own, rounded to 2 MiB
  allocate(10 * MiB + 1, 5);    // 10 MiB + 512 -> 12 MiB
  allocate(30 * MiB, 6);        // 30 MiB
  EXPECT_THAT(device_->allocations(),
              ElementsAre(2 * MiB, 20 * MiB, 20 * MiB, 10 * MiB, 12 * MiB, 30 * MiB));
  EXPECT_EQ(stats().reserved_bytes, static_cast<int64_t>(94 * MiB));
  EXPECT_EQ(stats().allocated_bytes, static_cast<int64_t>(MiB + (MiB + 512) + (10 * MiB - 512) +
                                                          10 * MiB + (10 * MiB + 512) + 30 * MiB));
}

TEST_F(CachingAllocatorTest, LargeRequestsShareATwentyMiBSegment) {
  char* a = allocate(4 * MiB);
  char* b = allocate(4 * MiB);
  char* c = allocate(4 * MiB);
  EXPECT_THAT(device_->allocations(), ElementsAre(20 * MiB));
  EXPECT_EQ(b, a + 4 * MiB);
  EXPECT_EQ(c, a + 8 * MiB);
}

TEST_F(CachingAllocatorTest, SmallAndLargePoolsAreSeparate) {
  char* small = allocate(KiB);
  alloc().free(small);
  char* large = allocate(MiB + 512);  // the free 2 MiB small segment is not used
  EXPECT_THAT(device_->allocations(), ElementsAre(2 * MiB, 20 * MiB));
  alloc().free(large);
  EXPECT_EQ(allocate(KiB), small);  // nor is the free 20 MiB segment for a small request
  EXPECT_THAT(device_->allocations(), ElementsAre(2 * MiB, 20 * MiB));
}

// ---- reuse ----------------------------------------------------------------------------------

TEST_F(CachingAllocatorTest, FreedBlockIsReusedForTheSameSizeAndStream) {
  char* a = allocate(3000);
  alloc().free(a);
  EXPECT_EQ(allocate(3000), a);
  EXPECT_EQ(stats().num_device_allocs, 1);
  EXPECT_THAT(device_->allocations(), ElementsAre(2 * MiB));

  char* big = allocate(40 * MiB);
  alloc().free(big);
  EXPECT_EQ(allocate(40 * MiB), big);
  EXPECT_THAT(device_->allocations(), ElementsAre(2 * MiB, 40 * MiB));
}

TEST_F(CachingAllocatorTest, BestFitTakesTheSmallestFreeBlockThatIsLargeEnough) {
  // Holes of 4 KiB, 2 KiB and 3 KiB, kept apart by live blocks, and the segment's free tail.
  char* h4 = allocate(4 * KiB);
  allocate(512);
  char* h2 = allocate(2 * KiB);
  allocate(512);
  char* h3 = allocate(3 * KiB);
  allocate(512);
  alloc().free(h4);
  alloc().free(h2);
  alloc().free(h3);

  EXPECT_EQ(allocate(2 * KiB + 1), h3);        // 2.5 KiB: the 3 KiB hole, not the 4 KiB one
  EXPECT_EQ(allocate(1), h3 + 2 * KiB + 512);  // 512: what remained of the 3 KiB hole
  EXPECT_EQ(allocate(KiB), h2);                // the 2 KiB hole, split
  EXPECT_EQ(allocate(KiB), h2 + KiB);          // the rest of it
  EXPECT_EQ(allocate(4 * KiB), h4);
  EXPECT_EQ(stats().num_device_allocs, 1);
}

TEST_F(CachingAllocatorTest, BestFitAmongSegments) {
  char* a = allocate(12 * MiB);  // own 12 MiB segment
  char* b = allocate(16 * MiB);  // own 16 MiB segment
  alloc().free(b);
  alloc().free(a);
  EXPECT_EQ(allocate(11 * MiB), a);  // fits both: the smaller segment
  EXPECT_EQ(allocate(11 * MiB), b);
  EXPECT_THAT(device_->allocations(), ElementsAre(12 * MiB, 16 * MiB));
}

// ---- streams --------------------------------------------------------------------------------

TEST_F(CachingAllocatorTest, FreedBlockIsReusedOnlyForItsStream) {
  char* a = allocate(KiB, kStreamA);
  alloc().free(a);
  char* b = allocate(KiB, kStreamB);
  EXPECT_NE(b, a);
  EXPECT_FALSE(b >= a && b < a + 2 * MiB);  // not cut from stream A's segment either
  EXPECT_THAT(device_->allocations(), ElementsAre(2 * MiB, 2 * MiB));
  EXPECT_EQ(allocate(KiB, kStreamA), a);
  EXPECT_EQ(stats().num_device_allocs, 2);
}

TEST_F(CachingAllocatorTest, LargeFreedBlockIsReusedOnlyForItsStream) {
  char* a = allocate(12 * MiB, kStreamB);
  alloc().free(a);
  // Stream A sorts before stream B: the lookup must not take B's block.
  char* b = allocate(12 * MiB, kStreamA);
  EXPECT_NE(b, a);
  EXPECT_THAT(device_->allocations(), ElementsAre(12 * MiB, 12 * MiB));
  EXPECT_EQ(allocate(12 * MiB, kStreamB), a);
}

// ---- splitting and merging -----------------------------------------------------------------

// Four blocks and the free tail of one small segment, freed in each of the 24 orders: the
// segment always becomes one free block again, which empty_cache then releases.
TEST_F(CachingAllocatorTest, FreeingInAnyOrderMergesTheSegmentBackIntoOne) {
  std::vector<int> order = {0, 1, 2, 3};
  int orders = 0;
  do {
    auto device = std::make_shared<FakeDevice>();
    CachingAllocator a(std::make_unique<FakeDeviceMemory>(device));
    std::vector<void*> blocks = {a.allocate(KiB, kStreamA), a.allocate(3 * KiB, kStreamA),
                                 a.allocate(512, kStreamA), a.allocate(64 * KiB, kStreamA)};
    ASSERT_THAT(device->allocations(), ElementsAre(2 * MiB));
    void* base = device->calls()[0].ptr;
    ASSERT_EQ(blocks[0], base);
    for (int i : order) a.free(blocks[i]);
    EXPECT_EQ(a.stats().allocated_bytes, 0);
    a.empty_cache();
    EXPECT_THAT(device->releases(), ElementsAre(base))
        << "order " << ::testing::PrintToString(order);
    EXPECT_EQ(a.stats().num_device_frees, 1);
    EXPECT_EQ(a.stats().reserved_bytes, 0);
    ++orders;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(orders, 24);
}

TEST_F(CachingAllocatorTest, AdjacentFreedBlocksMergeIntoOneHole) {
  char* a = allocate(KiB);
  char* b = allocate(KiB);
  char* c = allocate(KiB);
  allocate(KiB);  // d: keeps the merged hole apart from the tail
  alloc().free(c);
  alloc().free(b);  // merges with c (next): a 2 KiB hole at b
  EXPECT_EQ(allocate(2 * KiB), b);
  alloc().free(b);
  alloc().free(a);  // merges with the 2 KiB hole (a's next): 3 KiB at a
  EXPECT_EQ(allocate(3 * KiB), a);
  EXPECT_EQ(stats().num_device_allocs, 1);
}

TEST_F(CachingAllocatorTest, LargeSegmentMergesBackIntoOneBlock) {
  char* a = allocate(2 * MiB);
  char* b = allocate(3 * MiB);
  char* c = allocate(5 * MiB);
  alloc().free(b);
  alloc().free(c);  // merges with b before it and the free tail after it
  alloc().free(a);
  EXPECT_EQ(allocate(20 * MiB), a);  // the whole segment, free again
  EXPECT_THAT(device_->allocations(), ElementsAre(20 * MiB));
}

TEST_F(CachingAllocatorTest, LargeBlockIsSplitWhenMoreThanOneMiBRemains) {
  char* x = allocate(30 * MiB);  // a segment of its own
  alloc().free(x);
  EXPECT_NE(allocate(12 * MiB, kStreamB), x);  // not for another stream
  char* p = allocate(12 * MiB);
  EXPECT_EQ(p, x);
  char* q = allocate(12 * MiB);  // from the 18 MiB that remained free
  EXPECT_EQ(q, x + 12 * MiB);
  // 6 MiB remain: a 5 MiB request leaves 1 MiB, not worth a block, so it gets all 6 MiB.
  char* r = allocate(5 * MiB);
  EXPECT_EQ(r, x + 24 * MiB);
  EXPECT_THAT(device_->allocations(), ElementsAre(30 * MiB, 12 * MiB));
  EXPECT_EQ(stats().allocated_bytes, static_cast<int64_t>(30 * MiB + 12 * MiB));

  // 6 MiB free again; 5 MiB - 512 leaves 1 MiB + 512, which is split off and serves the next.
  alloc().free(r);
  EXPECT_EQ(allocate(5 * MiB - 512), r);
  EXPECT_EQ(allocate(MiB + 512), r + 5 * MiB - 512);
  EXPECT_THAT(device_->allocations(), ElementsAre(30 * MiB, 12 * MiB));
  EXPECT_EQ(stats().allocated_bytes, static_cast<int64_t>(30 * MiB + 12 * MiB));
}

// ---- stats and empty_cache -----------------------------------------------------------------

TEST_F(CachingAllocatorTest, StatsFollowAScriptedSequence) {
  char* a = allocate(1000);                    // 1 KiB of a 2 MiB segment
  char* b = allocate(3 * MiB);                 // 3 MiB of a 20 MiB segment
  char* c = allocate(12 * MiB + 1, kStreamB);  // 12 MiB + 512 of its own 14 MiB segment
  AllocatorStats s = stats();
  EXPECT_EQ(s.allocated_bytes, static_cast<int64_t>(15 * MiB + 1536));
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(36 * MiB));
  EXPECT_EQ(s.peak_allocated_bytes, static_cast<int64_t>(15 * MiB + 1536));
  EXPECT_EQ(s.num_allocs, 3);
  EXPECT_EQ(s.num_device_allocs, 3);
  EXPECT_EQ(s.num_device_frees, 0);

  alloc().free(b);
  s = stats();
  EXPECT_EQ(s.allocated_bytes, static_cast<int64_t>(12 * MiB + 1536));
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(36 * MiB));  // cached, not released
  EXPECT_EQ(s.peak_allocated_bytes, static_cast<int64_t>(15 * MiB + 1536));

  alloc().reset_peak();
  EXPECT_EQ(stats().peak_allocated_bytes, static_cast<int64_t>(12 * MiB + 1536));

  char* d = allocate(2 * MiB);  // from the cached 20 MiB segment
  s = stats();
  EXPECT_EQ(s.allocated_bytes, static_cast<int64_t>(14 * MiB + 1536));
  EXPECT_EQ(s.peak_allocated_bytes, static_cast<int64_t>(14 * MiB + 1536));
  EXPECT_EQ(s.num_allocs, 4);
  EXPECT_EQ(s.num_device_allocs, 3);

  alloc().free(d);
  alloc().free(a);
  alloc().empty_cache();  // the 2 MiB and the 20 MiB segments; c's stays
  s = stats();
  EXPECT_EQ(s.allocated_bytes, static_cast<int64_t>(12 * MiB + 512));
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(14 * MiB));
  EXPECT_EQ(s.peak_allocated_bytes, static_cast<int64_t>(14 * MiB + 1536));
  EXPECT_EQ(s.num_device_frees, 2);
  EXPECT_THAT(device_->releases(), ElementsAre(a, b));

  alloc().free(c);
  alloc().empty_cache();
  s = stats();
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_EQ(s.reserved_bytes, 0);
  EXPECT_EQ(s.num_allocs, 4);
  EXPECT_EQ(s.num_device_allocs, 3);
  EXPECT_EQ(s.num_device_frees, 3);
  EXPECT_THAT(device_->releases(), ElementsAre(a, b, c));
  EXPECT_EQ(device_->num_live_segments(), 0u);
}

TEST_F(CachingAllocatorTest, EmptyCacheReleasesOnlyWhollyFreeSegments) {
  char* live = allocate(KiB);
  char* freed = allocate(KiB);  // same segment as `live`
  char* other = allocate(KiB, kStreamB);
  char* big = allocate(11 * MiB);
  alloc().free(freed);
  alloc().free(other);
  alloc().free(big);
  alloc().empty_cache();
  EXPECT_THAT(device_->releases(), ::testing::UnorderedElementsAre(other, big));
  EXPECT_EQ(stats().reserved_bytes, static_cast<int64_t>(2 * MiB));
  EXPECT_EQ(stats().num_device_frees, 2);
  // The segment with a live block is still there and still serves requests.
  EXPECT_EQ(allocate(KiB), freed);
  EXPECT_EQ(stats().num_device_allocs, 3);
  EXPECT_TRUE(device_->holds(live, 2 * KiB));

  alloc().empty_cache();  // nothing wholly free: nothing released
  EXPECT_EQ(stats().num_device_frees, 2);
}

// ---- out of memory -------------------------------------------------------------------------

TEST_F(CachingAllocatorTest, OutOfMemoryReleasesTheCacheAndRetries) {
  device_->set_capacity(20 * MiB);
  alloc().free(allocate(KiB));  // a free 2 MiB segment, cached
  char* p = allocate(5 * MiB);  // needs a 20 MiB segment: fits only without the cached one
  ASSERT_NE(p, nullptr);
  EXPECT_THAT(trace(device_->calls()), ElementsAre("allocate 2 MiB", "allocate 20 MiB: null",
                                                   "release 2 MiB", "allocate 20 MiB"));
  AllocatorStats s = stats();
  EXPECT_EQ(s.allocated_bytes, static_cast<int64_t>(5 * MiB));
  EXPECT_EQ(s.reserved_bytes, static_cast<int64_t>(20 * MiB));
  EXPECT_EQ(s.num_device_allocs, 2);
  EXPECT_EQ(s.num_device_frees, 1);
  EXPECT_EQ(s.num_allocs, 2);
}

TEST_F(CachingAllocatorTest, OutOfMemoryMessageOnAnEmptyAllocator) {
  device_->set_capacity(0);
  EXPECT_EQ(error_text<Error>([&] { allocate(2 * MiB); }), oom("2.00 MiB", "0 bytes", "0 bytes"));
  EXPECT_THAT(trace(device_->calls()),
              ElementsAre("allocate 20 MiB: null", "allocate 20 MiB: null"));
  EXPECT_EQ(stats().num_allocs, 0);
  EXPECT_EQ(stats().num_device_allocs, 0);
}

TEST_F(CachingAllocatorTest, OutOfMemoryMessageFormatsEachUnit) {
  device_->set_capacity(0);
  EXPECT_EQ(error_text<Error>([&] { allocate(100); }), oom("512 bytes", "0 bytes", "0 bytes"));
  EXPECT_EQ(error_text<Error>([&] { allocate(1000 * KiB); }),
            oom("1000.00 KiB", "0 bytes", "0 bytes"));
  EXPECT_EQ(error_text<Error>([&] { allocate(MiB + MiB / 2); }),
            oom("1.50 MiB", "0 bytes", "0 bytes"));
  EXPECT_EQ(error_text<Error>([&] { allocate(3 * GiB); }), oom("3.00 GiB", "0 bytes", "0 bytes"));
}

TEST_F(CachingAllocatorTest, OutOfMemoryMessageCountsWhatIsLeftAfterReleasingTheCache) {
  device_->set_capacity(30 * MiB);
  char* live = allocate(KiB);       // 2 MiB segment, stays
  alloc().free(allocate(3 * MiB));  // 20 MiB segment, cached
  EXPECT_EQ(error_text<Error>([&] { allocate(30 * MiB); }),
            oom("30.00 MiB", "1.00 KiB", "2.00 MiB"));
  EXPECT_THAT(trace(device_->calls()),
              ElementsAre("allocate 2 MiB", "allocate 20 MiB", "allocate 30 MiB: null",
                          "release 20 MiB", "allocate 30 MiB: null"));
  EXPECT_EQ(stats().num_device_frees, 1);

  // Still usable after the error.
  alloc().free(live);
  EXPECT_EQ(allocate(KiB), live);
  EXPECT_EQ(stats().allocated_bytes, static_cast<int64_t>(KiB));
}

// Rounding such a request up would wrap around to a small size; it must fail, not hand out a
// block smaller than asked for.
TEST_F(CachingAllocatorTest, HugeRequestIsOutOfMemoryWithoutTouchingTheDevice) {
  const size_t max = std::numeric_limits<size_t>::max();
  EXPECT_EQ(error_text<Error>([&] { allocate(max); }),
            oom("17179869184.00 GiB", "0 bytes", "0 bytes"));
  EXPECT_THAT(error_text<Error>([&] { allocate(max - 100); }), HasSubstr("CUDA out of memory"));
  EXPECT_THAT(error_text<Error>([&] { allocate(max - MiB); }), HasSubstr("CUDA out of memory"));
  EXPECT_THAT(trace(device_->calls()), IsEmpty());
  EXPECT_EQ(stats().num_allocs, 0);
  EXPECT_EQ(stats().allocated_bytes, 0);
}

// ---- bad frees -----------------------------------------------------------------------------

TEST_F(CachingAllocatorTest, FreeingAnAddressNeverAllocatedThrows) {
  char* a = allocate(KiB);
  int on_stack = 0;
  for (void* bad : {static_cast<void*>(&on_stack), static_cast<void*>(a + 512)}) {
    const std::string text = error_text<Error>([&] { alloc().free(bad); });
    EXPECT_THAT(text, HasSubstr("did not allocate or already freed"));
    EXPECT_EQ(text, fmt::format("CUDA caching allocator (cuda:0): free of {} which it did not "
                                "allocate or already freed",
                                bad));
  }
  EXPECT_EQ(stats().allocated_bytes, static_cast<int64_t>(KiB));
  alloc().free(a);  // the real block is unaffected
  EXPECT_EQ(stats().allocated_bytes, 0);
}

TEST_F(CachingAllocatorTest, FreeingTwiceThrows) {
  char* a = allocate(KiB);
  char* b = allocate(KiB);
  alloc().free(a);
  EXPECT_THAT(error_text<Error>([&] { alloc().free(a); }),
              HasSubstr("did not allocate or already freed"));
  EXPECT_EQ(stats().allocated_bytes, static_cast<int64_t>(KiB));
  EXPECT_EQ(allocate(KiB), a);  // the cache is intact: a is handed out once, b still live
  alloc().free(b);
  alloc().free(a);
  EXPECT_EQ(stats().allocated_bytes, 0);
}

TEST_F(CachingAllocatorTest, FreeingNullIsANoOp) {
  alloc().free(nullptr);
  EXPECT_THAT(trace(device_->calls()), IsEmpty());
  EXPECT_EQ(stats().num_allocs, 0);
}

// ---- destruction ---------------------------------------------------------------------------

TEST_F(CachingAllocatorTest, DestructorReleasesEverySegmentLiveOrNot) {
  char* live_small = allocate(KiB);
  char* freed_large = allocate(3 * MiB);
  char* live_alone = allocate(12 * MiB, 3);
  char* freed_small_b = allocate(KiB, kStreamB);
  allocate(2 * MiB);  // live, in freed_large's segment
  alloc().free(freed_large);
  alloc().free(freed_small_b);
  EXPECT_EQ(device_->num_live_segments(), 4u);
  alloc_.reset();
  EXPECT_THAT(device_->releases(),
              ::testing::UnorderedElementsAre(live_small, freed_large, live_alone, freed_small_b));
  EXPECT_EQ(device_->num_live_segments(), 0u);
  EXPECT_EQ(device_->in_use(), 0u);
}

// ---- threads -------------------------------------------------------------------------------

// Four threads allocate and free at random, each on its own stream, while a fifth empties the
// cache and reads the stats. The test keeps every live block's range and checks that no two
// ever overlap and that each lies inside a segment the device handed out.
TEST_F(CachingAllocatorTest, ConcurrentAllocateFreeNeverOverlaps) {
  constexpr int kThreads = 4;
  constexpr int kOps = 2000;
  constexpr size_t kMaxLive = 16;
  std::mutex mutex;
  std::map<uintptr_t, size_t> live;  // start -> rounded size
  std::atomic<int> overlaps{0};
  std::atomic<int> outside{0};
  std::atomic<int> clobbered{0};
  std::atomic<bool> done{false};
  std::atomic<int> ready{0};

  auto worker = [&](int t) {
    const StreamId stream = static_cast<StreamId>(t + 1);
    const auto tag = static_cast<unsigned char>(0x40 + t);
    std::mt19937 rng(1234 + t);
    std::vector<std::pair<char*, size_t>> mine;
    ++ready;
    while (ready.load() < kThreads) std::this_thread::yield();  // start together
    for (int op = 0; op < kOps; ++op) {
      if (mine.empty() || (mine.size() < kMaxLive && rng() % 2 == 0)) {
        const unsigned kind = rng() % 100;
        const size_t nbytes = kind < 80   ? 1 + rng() % MiB
                              : kind < 97 ? MiB + 1 + rng() % (9 * MiB)
                                          : 10 * MiB + rng() % (6 * MiB);
        char* p = static_cast<char*>(alloc().allocate(nbytes, stream));
        const size_t size = CachingAllocator::round_size(nbytes);
        {
          std::lock_guard<std::mutex> lock(mutex);
          const auto start = reinterpret_cast<uintptr_t>(p);
          auto next = live.lower_bound(start);
          if (next != live.end() && next->first < start + size) ++overlaps;
          if (next != live.begin() && std::prev(next)->first + std::prev(next)->second > start)
            ++overlaps;
          live.emplace(start, size);
        }
        if (!device_->holds(p, size)) ++outside;
        p[0] = static_cast<char>(tag);
        p[nbytes - 1] = static_cast<char>(tag);
        mine.emplace_back(p, nbytes);
      } else {
        const size_t i = rng() % mine.size();
        auto [p, nbytes] = mine[i];
        mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(i));
        if (static_cast<unsigned char>(p[0]) != tag ||
            static_cast<unsigned char>(p[nbytes - 1]) != tag)
          ++clobbered;
        {
          std::lock_guard<std::mutex> lock(mutex);
          live.erase(reinterpret_cast<uintptr_t>(p));
        }
        alloc().free(p);
      }
    }
    for (auto [p, nbytes] : mine) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        live.erase(reinterpret_cast<uintptr_t>(p));
      }
      alloc().free(p);
    }
  };

  std::thread janitor([&] {
    while (!done.load()) {
      alloc().empty_cache();
      const AllocatorStats s = alloc().stats();
      if (s.allocated_bytes > s.reserved_bytes) ++overlaps;
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  for (std::thread& t : threads) t.join();
  done = true;
  janitor.join();

  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(outside.load(), 0);
  EXPECT_EQ(clobbered.load(), 0);
  EXPECT_TRUE(live.empty());
  AllocatorStats s = stats();
  EXPECT_EQ(s.allocated_bytes, 0);
  EXPECT_GT(s.num_allocs, kThreads * kOps / 4);
  alloc().empty_cache();
  s = stats();
  EXPECT_EQ(s.reserved_bytes, 0);
  EXPECT_EQ(s.num_device_allocs, s.num_device_frees);
  EXPECT_EQ(device_->num_live_segments(), 0u);
}

}  // namespace
}  // namespace opd::cuda
