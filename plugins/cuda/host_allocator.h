#pragma once

// The CUDA plugin's cache of pinned host memory, written against an abstract source of pinned
// memory and stream events so that its policy is tested on any machine
// (tests/plugins/cuda/host_allocator_test.cpp uses a fake).
//
// Note [Pinned host allocator]
// cudaHostAlloc and cudaFreeHost are slow (they map and unmap pages for the device, and
// cudaFreeHost synchronises), so freed pinned blocks are kept and handed out again, as PyTorch's
// CachingHostAllocator does:
// - Sizes are rounded up to a power of two, and a request is served only by a free block of
//   exactly its rounded size (a 4 KiB tensor never holds on to a 1 GiB block).
// - A copy queued on a stream may still read or write a block after its tensor is freed. The
//   copy therefore records an event on its stream against the block (record_use), and a freed
//   block is reused only once every event recorded against it has completed. Events are checked
//   in the order they were recorded, at each allocation and at empty_cache.
// - When the host has no room, the free blocks are released and the allocation tried once more.
// - empty_cache() releases the free blocks none of whose events is pending.
// Thread-safe: one mutex.

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace opd::cuda {

using StreamId = uintptr_t;

// Where blocks and events come from: cudaHostAlloc / cudaFreeHost and cudaEvent* in the plugin.
class PinnedMemory {
 public:
  using Event = void*;
  virtual ~PinnedMemory() = default;
  // Null when the host has no room (any other failure throws).
  virtual void* allocate(size_t nbytes) = 0;
  virtual void release(void* ptr) = 0;
  // An event recorded now on `stream`; query() says whether the work queued before it is done.
  virtual Event record(StreamId stream) = 0;
  virtual bool query(Event event) = 0;
  // Waits for the work queued before the event (errors ignored: it runs from the destructor).
  virtual void synchronize(Event event) noexcept = 0;
  virtual void destroy(Event event) = 0;
};

struct HostAllocatorStats {
  int64_t allocated_bytes = 0;  // in blocks handed out (rounded sizes)
  int64_t reserved_bytes = 0;   // in blocks obtained from the host, free or not
  int64_t num_host_allocs = 0;  // blocks obtained (cudaHostAlloc calls that succeeded)
  int64_t num_host_frees = 0;   // blocks released
  int64_t pending_events = 0;   // recorded and not yet seen complete
};

class HostCachingAllocator {
 public:
  explicit HostCachingAllocator(std::unique_ptr<PinnedMemory> memory);
  // Waits for the copies still using blocks, then releases every block that was freed. Blocks
  // still handed out (tensors alive at process exit, after the plugin's statics) are left to
  // the process's end rather than unmapped under them.
  ~HostCachingAllocator();
  HostCachingAllocator(const HostCachingAllocator&) = delete;
  HostCachingAllocator& operator=(const HostCachingAllocator&) = delete;

  // A block of at least `nbytes` (nbytes 0 gives null). Throws opd::Error "CUDA out of memory:
  // could not allocate 2.00 GiB of pinned host memory (1.00 GiB reserved by the pinned host
  // allocator)" when the host has no room even after releasing the free blocks.
  void* allocate(size_t nbytes);
  // Returns a block from allocate() to the cache; it is reused once its events are complete.
  // Null is ignored; an address this allocator did not hand out throws opd::Error.
  void free(void* ptr);
  // Records that work queued on `stream` now uses the block at `ptr` (its start, as allocate()
  // returned it). Returns false, recording nothing, when `ptr` is not a block handed out here.
  bool record_use(void* ptr, StreamId stream);
  // Releases every free block whose events are complete.
  void empty_cache();
  HostAllocatorStats stats() const;

  // The size a request is served with: the next power of two.
  static size_t round_size(size_t nbytes);

 private:
  struct Block {
    void* ptr = nullptr;
    size_t size = 0;
    bool allocated = false;
    int pending = 0;  // events recorded against the block and not yet seen complete
  };
  static constexpr int kBuckets = 64;  // one per power of two

  void process_events();
  void release_free_blocks();
  void make_available(Block* block);

  mutable std::mutex mutex_;
  std::unique_ptr<PinnedMemory> memory_;
  std::unordered_map<void*, std::unique_ptr<Block>> blocks_;  // every block, by address
  std::array<std::vector<Block*>, kBuckets> free_;  // free, no event pending, by log2(size)
  std::deque<std::pair<PinnedMemory::Event, Block*>> events_;  // in recording order
  HostAllocatorStats stats_;
};

}  // namespace opd::cuda
