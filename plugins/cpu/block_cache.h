#pragma once

// Note [Large block cache]
// A large tensor freed and allocated again (the result of an op in a loop) would otherwise go
// back to the kernel and come back as fresh pages: glibc serves big blocks with mmap, and the
// first touch of every page faults, which costs more than the op itself for a 64 MB add. So
// blocks of 1 MiB and more are kept after free, by exact size, up to 512 MiB in all, and reused.
// Blocks up to 4 KiB come from malloc's per-thread caches (Note [Small blocks] in
// block_cache.cpp); those in between stay with posix_memalign. The cache is emptied when the
// plugin shuts down and when its library is unmapped. Under AddressSanitizer it is off, so that
// a use after free is still caught.

#include <cstddef>

namespace opd::cpu {

// A block of at least `nbytes` bytes aligned to `alignment`, from the cache or the system;
// null when there is no memory. `*capacity` receives the block's size, for release_block.
void* acquire_block(size_t nbytes, size_t alignment, size_t* capacity);
// Gives a block back: kept for reuse, or freed.
void release_block(void* data, size_t capacity) noexcept;
// Frees every cached block.
void empty_block_cache() noexcept;

}  // namespace opd::cpu
