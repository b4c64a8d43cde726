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

// Note [Small block cache]
// Small tensors (a few elements: scalars, biases, the results of small ops in a loop) come and go
// at a high rate, and an aligned allocation from glibc (posix_memalign) costs several times a
// plain malloc: it carves an aligned piece out of a larger chunk and frees the rest. Blocks up
// to 4 KiB are therefore kept on free lists by 64-byte size class, at most kSmallPerClass per
// class, each list threaded through the free blocks themselves. Off under AddressSanitizer.
constexpr size_t kSmallMaxBytes = 4096;
constexpr size_t kSmallRounding = 64;
constexpr size_t kSmallClasses = kSmallMaxBytes / kSmallRounding;
#if defined(__SANITIZE_ADDRESS__)
constexpr int kSmallPerClass = 0;
#else
constexpr int kSmallPerClass = 64;
#endif

class SmallBlockCache {
 public:
  ~SmallBlockCache() { clear(); }

  void* take(size_t cls) {
    std::lock_guard<std::mutex> lock(mutex_);
    void* data = heads_[cls];
    if (data != nullptr) {
      heads_[cls] = *static_cast<void**>(data);
      --counts_[cls];
    }
    return data;
  }

  bool keep(void* data, size_t cls) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (counts_[cls] >= kSmallPerClass) return false;
    *static_cast<void**>(data) = heads_[cls];
    heads_[cls] = data;
    ++counts_[cls];
    return true;
  }

  void clear() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t c = 0; c < kSmallClasses; ++c) {
      while (void* data = heads_[c]) {
        heads_[c] = *static_cast<void**>(data);
        std::free(data);
      }
      counts_[c] = 0;
    }
  }

 private:
  std::mutex mutex_;
  void* heads_[kSmallClasses] = {};
  int counts_[kSmallClasses] = {};
};

SmallBlockCache small_cache;

// The class of a small capacity (a multiple of kSmallRounding).
size_t small_class(size_t capacity) { return capacity / kSmallRounding - 1; }

}  // namespace

void* acquire_block(size_t nbytes, size_t alignment, size_t* capacity) {
  if (nbytes <= kSmallMaxBytes && alignment <= kSmallRounding) {
    *capacity = nbytes == 0 ? kSmallRounding
                            : (nbytes + kSmallRounding - 1) / kSmallRounding * kSmallRounding;
    if (void* data = small_cache.take(small_class(*capacity))) return data;
    void* data = nullptr;
    return ::posix_memalign(&data, kSmallRounding, *capacity) == 0 ? data : nullptr;
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
  if (capacity <= kSmallMaxBytes && small_cache.keep(data, small_class(capacity))) return;
  if (capacity >= kMinCachedBytes && cache.keep(data, capacity)) return;
  std::free(data);
}

void empty_block_cache() noexcept {
  cache.clear();
  small_cache.clear();
}

}  // namespace opd::cpu
