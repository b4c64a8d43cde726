#include "cuda/host_allocator.h"

#include <bit>
#include <limits>

#include "cuda/byte_size.h"
#include "opd/error.h"

namespace opd::cuda {

namespace {
// The largest request that rounds up to a power of two without wrapping.
constexpr size_t kMaxRequest = size_t{1} << (std::numeric_limits<size_t>::digits - 1);

int bucket_of(size_t size) { return std::countr_zero(size); }
}  // namespace

HostCachingAllocator::HostCachingAllocator(std::unique_ptr<PinnedMemory> memory)
    : memory_(std::move(memory)) {}

HostCachingAllocator::~HostCachingAllocator() {
  for (auto& [event, block] : events_) {
    memory_->synchronize(event);
    memory_->destroy(event);
  }
  for (auto& [ptr, block] : blocks_) {
    if (!block->allocated) memory_->release(ptr);
  }
}

size_t HostCachingAllocator::round_size(size_t nbytes) { return std::bit_ceil(nbytes); }

void* HostCachingAllocator::allocate(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  OPD_CHECK(nbytes <= kMaxRequest,
            "CUDA out of memory: could not allocate {} of pinned host memory ({} reserved by the "
            "pinned host allocator)",
            format_bytes(nbytes), format_bytes(static_cast<size_t>(stats_.reserved_bytes)));
  const size_t size = round_size(nbytes);
  process_events();
  Block* block = nullptr;
  auto& bucket = free_[bucket_of(size)];
  if (!bucket.empty()) {
    block = bucket.back();
    bucket.pop_back();
  } else {
    auto owned = std::make_unique<Block>();  // before the memory: a bad_alloc leaks nothing
    void* ptr = memory_->allocate(size);
    if (ptr == nullptr) {
      release_free_blocks();
      ptr = memory_->allocate(size);
    }
    OPD_CHECK(ptr != nullptr,
              "CUDA out of memory: could not allocate {} of pinned host memory ({} reserved by "
              "the pinned host allocator)",
              format_bytes(size), format_bytes(static_cast<size_t>(stats_.reserved_bytes)));
    owned->ptr = ptr;
    owned->size = size;
    block = owned.get();
    try {
      blocks_.emplace(ptr, std::move(owned));
    } catch (...) {
      memory_->release(ptr);
      throw;
    }
    stats_.reserved_bytes += static_cast<int64_t>(size);
    ++stats_.num_host_allocs;
  }
  block->allocated = true;
  stats_.allocated_bytes += static_cast<int64_t>(size);
  return block->ptr;
}

void HostCachingAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(ptr);
  OPD_CHECK(it != blocks_.end() && it->second->allocated,
            "pinned host allocator: free of {} which it did not hand out", ptr);
  Block* block = it->second.get();
  block->allocated = false;
  stats_.allocated_bytes -= static_cast<int64_t>(block->size);
  if (block->pending == 0) make_available(block);
}

bool HostCachingAllocator::record_use(void* ptr, StreamId stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = blocks_.find(ptr);
  if (it == blocks_.end() || !it->second->allocated) return false;
  Block* block = it->second.get();
  events_.emplace_back(nullptr, block);  // the room first: a bad_alloc leaks no event
  try {
    events_.back().first = memory_->record(stream);
  } catch (...) {
    events_.pop_back();
    throw;
  }
  ++block->pending;
  ++stats_.pending_events;
  return true;
}

void HostCachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  process_events();
  release_free_blocks();
}

HostAllocatorStats HostCachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

// Events complete in recording order on one stream but not across streams; like PyTorch, the
// walk stops at the first pending one, so a slow stream may hold back blocks used only on a
// fast one until its own work is done.
void HostCachingAllocator::process_events() {
  while (!events_.empty()) {
    auto [event, block] = events_.front();
    if (!memory_->query(event)) break;
    events_.pop_front();
    memory_->destroy(event);
    --stats_.pending_events;
    if (--block->pending == 0 && !block->allocated) make_available(block);
  }
}

void HostCachingAllocator::make_available(Block* block) {
  free_[bucket_of(block->size)].push_back(block);
}

void HostCachingAllocator::release_free_blocks() {
  for (auto& bucket : free_) {
    for (Block* block : bucket) {
      void* ptr = block->ptr;
      stats_.reserved_bytes -= static_cast<int64_t>(block->size);
      ++stats_.num_host_frees;
      blocks_.erase(ptr);  // destroys block
      memory_->release(ptr);
    }
    bucket.clear();
  }
}

}  // namespace opd::cuda
