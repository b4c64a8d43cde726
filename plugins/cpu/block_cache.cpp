#include "cpu/block_cache.h"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>

namespace opd::cpu {
namespace {

// Blocks of 1 MiB and more are kept after free, by rounded size: Note [Large block cache].
constexpr size_t kMinCachedBytes = size_t(1) << 20;
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kMaxCachedBytes = 0;
#else
constexpr size_t kMaxCachedBytes = size_t(512) << 20;
#endif
// Sizes are rounded up so that nearby sizes share blocks.
constexpr size_t kRounding = size_t(64) << 10;

class BlockCache {
 public:
  ~BlockCache() { clear(); }

  void* take(size_t capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(capacity);
    if (it == free_.end()) return nullptr;
    void* data = it->second;
    free_.erase(it);
    cached_ -= capacity;
    return data;
  }

  bool keep(void* data, size_t capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cached_ + capacity > kMaxCachedBytes) return false;
    free_.emplace(capacity, data);
    cached_ += capacity;
    return true;
  }

  void clear() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [capacity, data] : free_) std::free(data);
    free_.clear();
    cached_ = 0;
  }

 private:
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;
  size_t cached_ = 0;
};

// Destroyed when the library is unmapped, after the last storage (whose owner pins the
// library) has given its block back.
BlockCache cache;

// Note [Small blocks]
// Small tensors (a few elements: scalars, biases, the results of small ops in a loop) come and go
// at a high rate. glibc serves plain malloc of small sizes from per-thread caches (tcache)
// without any lock, while posix_memalign takes the arena's lock and carves an aligned piece out
// of a larger chunk. So a block up to 4 KiB is a malloc of 64 bytes more than asked, aligned up
// within it to 64 bytes, with malloc's own pointer kept in the 8 bytes just below the aligned
// block (there are always at least 16: malloc's blocks are 16-byte aligned) for free. This
// replaced a free-list cache behind a mutex, which cost the 2x3 + 3 add about 25 ns of 235.
constexpr size_t kSmallMaxBytes = 4096;
constexpr size_t kSmallAlignment = 64;

void* acquire_small(size_t capacity) {
  char* raw = static_cast<char*>(std::malloc(capacity + kSmallAlignment));
  if (raw == nullptr) return nullptr;
  const uintptr_t aligned =
      (reinterpret_cast<uintptr_t>(raw) + kSmallAlignment) & ~uintptr_t{kSmallAlignment - 1};
  char* data = reinterpret_cast<char*>(aligned);
  reinterpret_cast<char**>(data)[-1] = raw;
  return data;
}

void release_small(void* data) noexcept { std::free(static_cast<char**>(data)[-1]); }

}  // namespace

void* acquire_block(size_t nbytes, size_t alignment, size_t* capacity) {
  if (nbytes <= kSmallMaxBytes && alignment <= kSmallAlignment) {
    *capacity = (nbytes + kSmallAlignment - 1) / kSmallAlignment * kSmallAlignment;
    return acquire_small(*capacity);
  }
  const bool cacheable = nbytes >= kMinCachedBytes;
  *capacity = cacheable ? (nbytes + kRounding - 1) / kRounding * kRounding : nbytes;
  if (cacheable) {
    if (void* data = cache.take(*capacity)) return data;
  }
  void* data = nullptr;
  return ::posix_memalign(&data, alignment, *capacity) == 0 ? data : nullptr;
}

void release_block(void* data, size_t capacity) noexcept {
  if (capacity <= kSmallMaxBytes) return release_small(data);
  if (capacity >= kMinCachedBytes && cache.keep(data, capacity)) return;
  std::free(data);
}

void empty_block_cache() noexcept { cache.clear(); }

}  // namespace opd::cpu
