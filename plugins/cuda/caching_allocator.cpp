#include "cuda/caching_allocator.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

#include "cuda/byte_size.h"
#include "opd/error.h"

namespace opd::cuda {

// One piece of a segment: handed out or free. The blocks of a segment form a list in address
// order (prev/next), so that freeing can merge neighbours.
struct CachingAllocator::Block {
  char* ptr = nullptr;
  size_t size = 0;
  StreamId stream = 0;
  bool small = false;
  bool allocated = false;
  Block* prev = nullptr;
  Block* next = nullptr;
};

bool CachingAllocator::BlockOrder::operator()(const Block* a, const Block* b) const {
  return std::tie(a->stream, a->size, a->ptr) < std::tie(b->stream, b->size, b->ptr);
}

namespace {

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Rounding a larger request up would wrap around to a small size; no device has this much.
constexpr size_t kMaxRequest = std::numeric_limits<size_t>::max() / 2;

}  // namespace

CachingAllocator::CachingAllocator(std::unique_ptr<DeviceMemory> memory)
    : memory_(std::move(memory)) {}

CachingAllocator::~CachingAllocator() {
  for (Block* first : segments_) {
    memory_->release(first->ptr);
    for (Block* b = first; b != nullptr;) {
      Block* next = b->next;
      delete b;
      b = next;
    }
  }
}

size_t CachingAllocator::round_size(size_t nbytes) {
  return nbytes < kRound ? kRound : round_up(nbytes, kRound);
}

void* CachingAllocator::allocate(size_t nbytes, StreamId stream) {
  if (nbytes == 0) return nullptr;
  const bool too_large = nbytes > kMaxRequest;
  const size_t size = too_large ? nbytes : round_size(nbytes);
  const bool small = size <= kSmallSize;
  std::lock_guard<std::mutex> lock(mutex_);
  Pool& pool = small ? small_free_ : large_free_;
  Block* block = find_free(pool, size, stream);
  if (block == nullptr) {
    if (!too_large) {
      const size_t segment_size = small                   ? kSmallSegment
                                  : size < kMinLargeAlone ? kLargeSegment
                                                          : round_up(size, kLargeRound);
      block = new_segment(segment_size, size, stream, small);
      if (block == nullptr) {
        release_free_segments();
        block = new_segment(segment_size, size, stream, small);
      }
    }
    OPD_CHECK(block != nullptr,
              "CUDA out of memory. Tried to allocate {} ({}; {} allocated, {} reserved by the "
              "caching allocator)",
              format_bytes(size), memory_->name(),
              format_bytes(static_cast<size_t>(stats_.allocated_bytes)),
              format_bytes(static_cast<size_t>(stats_.reserved_bytes)));
  }
  block = split(block, size);
  block->allocated = true;
  allocated_.emplace(block->ptr, block);
  stats_.allocated_bytes += static_cast<int64_t>(block->size);
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  ++stats_.num_allocs;
  return block->ptr;
}

void CachingAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocated_.find(ptr);
  OPD_CHECK(it != allocated_.end(),
            "CUDA caching allocator ({}): free of {} which it did not allocate or already freed",
            memory_->name(), ptr);
  Block* block = it->second;
  allocated_.erase(it);
  block->allocated = false;
  stats_.allocated_bytes -= static_cast<int64_t>(block->size);
  merge_free(block);
}

void CachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_free_segments();
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_allocated_bytes = stats_.allocated_bytes;
}

CachingAllocator::Block* CachingAllocator::find_free(Pool& pool, size_t size, StreamId stream) {
  Block key;
  key.stream = stream;
  key.size = size;
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->stream != stream) return nullptr;
  Block* block = *it;
  pool.erase(it);
  return block;
}

CachingAllocator::Block* CachingAllocator::new_segment(size_t segment_size, size_t size,
                                                       StreamId stream, bool small) {
  (void)size;
  void* ptr = memory_->allocate(segment_size);
  if (ptr == nullptr) return nullptr;
  auto* block = new Block;
  block->ptr = static_cast<char*>(ptr);
  block->size = segment_size;
  block->stream = stream;
  block->small = small;
  segments_.insert(block);
  stats_.reserved_bytes += static_cast<int64_t>(segment_size);
  ++stats_.num_device_allocs;
  return block;
}

// Cuts `size` bytes off the front of a free block (not in any pool) when the rest is worth
// keeping, and returns the front part.
CachingAllocator::Block* CachingAllocator::split(Block* block, size_t size) {
  const size_t rest = block->size - size;
  const bool worth = block->small ? rest >= kRound : rest > kSmallSize;
  if (!worth) return block;
  auto* tail = new Block;
  tail->ptr = block->ptr + size;
  tail->size = rest;
  tail->stream = block->stream;
  tail->small = block->small;
  tail->prev = block;
  tail->next = block->next;
  if (tail->next != nullptr) tail->next->prev = tail;
  block->next = tail;
  block->size = size;
  (block->small ? small_free_ : large_free_).insert(tail);
  return block;
}

void CachingAllocator::merge_free(Block* block) {
  Pool& pool = block->small ? small_free_ : large_free_;
  if (Block* prev = block->prev; prev != nullptr && !prev->allocated) {
    pool.erase(prev);
    prev->size += block->size;
    prev->next = block->next;
    if (prev->next != nullptr) prev->next->prev = prev;
    delete block;
    block = prev;
  }
  if (Block* next = block->next; next != nullptr && !next->allocated) {
    pool.erase(next);
    block->size += next->size;
    block->next = next->next;
    if (block->next != nullptr) block->next->prev = block;
    delete next;
  }
  pool.insert(block);
}

void CachingAllocator::release_free_segments() {
  for (Pool* pool : {&small_free_, &large_free_}) {
    std::vector<Block*> whole;
    for (Block* b : *pool) {
      if (b->prev == nullptr && b->next == nullptr) whole.push_back(b);
    }
    for (Block* b : whole) {
      pool->erase(b);
      segments_.erase(b);
      memory_->release(b->ptr);
      stats_.reserved_bytes -= static_cast<int64_t>(b->size);
      ++stats_.num_device_frees;
      delete b;
    }
  }
}

}  // namespace opd::cuda
