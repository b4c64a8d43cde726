#pragma once

// The CUDA plugin's caching allocator, written against an abstract device allocator so that its
// policy is tested on any machine (tests/plugins/cuda/caching_allocator_test.cpp uses a fake).
//
// Note [Caching allocator]
// cudaMalloc and cudaFree synchronise the device and cost tens of microseconds, so freed memory
// is kept and handed out again, as PyTorch's CUDACachingAllocator does:
// - Sizes are rounded up to 512 bytes. Requests up to 1 MiB ("small") are cut from 2 MiB
//   segments; requests up to 10 MiB from 20 MiB segments; larger ones get a segment of their own,
//   rounded up to 2 MiB.
// - A free block is found by best fit (the smallest block of the same stream and pool that is
//   large enough). When the remainder is worth keeping (at least 512 bytes of a small block, more
//   than 1 MiB of a large one) the block is split and the rest stays free.
// - Blocks remember the stream they were allocated for, and a freed block is reused only for
//   that stream: work queued on one stream may still read it, and the stream's order makes the
//   next user wait. Using memory on another stream than its allocation's is not tracked (no
//   record_stream); such code must synchronise itself.
// - Freeing merges a block with its free neighbours of the same segment.
// - When the device is out of memory, every wholly free segment is released and the allocation
//   tried once more before the error.
// - empty_cache() releases every wholly free segment.
// Thread-safe: one mutex per allocator (one allocator per device).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

namespace opd::cuda {

// Where segments come from: cudaMalloc / cudaFree on one device in the plugin.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // Null when the device has no room (any other failure throws).
  virtual void* allocate(size_t nbytes) = 0;
  virtual void release(void* ptr) = 0;
  // "cuda:0", for messages.
  virtual std::string name() const = 0;
};

using StreamId = uintptr_t;

struct AllocatorStats {
  int64_t allocated_bytes = 0;       // in blocks handed out (whole blocks: a rounded request,
                                     // or more when the rest was too small to split off)
  int64_t reserved_bytes = 0;        // in segments obtained from the device
  int64_t peak_allocated_bytes = 0;  // highest allocated_bytes since creation or reset_peak
  int64_t num_allocs = 0;            // allocate() calls that returned memory
  int64_t num_device_allocs = 0;     // segments obtained (cudaMalloc calls that succeeded)
  int64_t num_device_frees = 0;      // segments released
};

class CachingAllocator {
 public:
  static constexpr size_t kRound = 512;
  static constexpr size_t kSmallSize = size_t{1} << 20;       // requests up to this are small
  static constexpr size_t kSmallSegment = size_t{2} << 20;    // segments small blocks come from
  static constexpr size_t kLargeSegment = size_t{20} << 20;   // segments for 1..10 MiB
  static constexpr size_t kMinLargeAlone = size_t{10} << 20;  // from here: a segment each
  static constexpr size_t kLargeRound = size_t{2} << 20;

  explicit CachingAllocator(std::unique_ptr<DeviceMemory> memory);
  ~CachingAllocator();  // releases every segment, whether or not its blocks were freed
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least `nbytes` (nbytes 0 gives null) for work on `stream`. Throws opd::Error
  // "CUDA out of memory. Tried to allocate 2.00 GiB (cuda:0; 1.50 GiB allocated, 1.75 GiB
  // reserved by the caching allocator)" when the device has no room even after emptying the
  // cache.
  void* allocate(size_t nbytes, StreamId stream);
  // Returns a block from allocate() to the cache. Null is ignored. An address this allocator did
  // not hand out (or handed out and took back) throws opd::Error.
  void free(void* ptr);
  // Releases every segment none of whose memory is handed out.
  void empty_cache();
  AllocatorStats stats() const;
  void reset_peak();

  // The size a request is served with.
  static size_t round_size(size_t nbytes);

 private:
  struct Block;
  struct BlockOrder {
    bool operator()(const Block* a, const Block* b) const;
  };
  using Pool = std::set<Block*, BlockOrder>;

  Block* find_free(Pool& pool, size_t size, StreamId stream);
  Block* new_segment(size_t segment_size, size_t size, StreamId stream, bool small);
  void release_free_segments();
  Block* split(Block* block, size_t size);
  void merge_free(Block* block);

  mutable std::mutex mutex_;
  std::unique_ptr<DeviceMemory> memory_;
  Pool small_free_;
  Pool large_free_;
  std::unordered_map<void*, Block*> allocated_;
  std::set<Block*> segments_;  // the first block of every segment
  AllocatorStats stats_;
};

}  // namespace opd::cuda
