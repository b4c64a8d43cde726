#include "cpu/block_cache.h"

#include <cstdlib>
#include <map>
#include <mutex>

namespace opd::cpu {
namespace {

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

}  // namespace

void* acquire_block(size_t nbytes, size_t alignment, size_t* capacity) {
  const bool cacheable = nbytes >= kMinCachedBytes;
  *capacity = cacheable ? (nbytes + kRounding - 1) / kRounding * kRounding : nbytes;
  if (cacheable) {
    if (void* data = cache.take(*capacity)) return data;
  }
  void* data = nullptr;
  return ::posix_memalign(&data, alignment, *capacity) == 0 ? data : nullptr;
}

void release_block(void* data, size_t capacity) noexcept {
  if (capacity >= kMinCachedBytes && cache.keep(data, capacity)) return;
  std::free(data);
}

void empty_block_cache() noexcept { cache.clear(); }

}  // namespace opd::cpu
