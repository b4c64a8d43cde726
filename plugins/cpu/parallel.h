#pragma once

// The CPU plugin's thread pool: ATen's at::parallel_for over a pool of std::thread workers.
//
// Note [CPU pool and unloading]
// Worker threads run this plugin's code, so none may outlive the plugin's mapping. The plugin's
// shutdown hook calls shutdown_pool(), which joins them; from then on parallel_for runs inline
// (a kernel still in flight when the plugin is unloaded finishes on its caller's thread) until
// the plugin is registered again and calls enable_pool().

#include <cstdint>
#include <functional>

namespace opd::cpu {

// Runs fn(chunk_begin, chunk_end) over disjoint chunks covering [begin, end), each of at least
// `grain_size` elements (the last may be shorter), possibly on several threads at once, and
// returns when every chunk is done. The calling thread runs chunks too. Does nothing when
// begin >= end. Runs fn(begin, end) inline when the range fits in one grain, when the pool has no
// workers (one hardware thread) or is shut down, and when called from inside another
// parallel_for (nested calls never wait on the pool). The pool starts on the first call that
// needs it, with get_num_threads() - 1 workers.
//
// If a chunk throws, chunks not yet started are skipped, and the first exception is rethrown in
// the caller once the running chunks are done. Thread-safe: any number of threads may call it at
// once. `fn` must be safe to call concurrently on disjoint ranges.
void parallel_for(int64_t begin, int64_t end, int64_t grain_size,
                  const std::function<void(int64_t, int64_t)>& fn);

// True on a thread that is running a chunk of a parallel_for (a worker, or a caller inside fn).
bool in_parallel_region();

// Number of threads a parallel_for may use, the caller included: OPD_NUM_THREADS when it is set
// to a positive integer when first read, else std::thread::hardware_concurrency().
int64_t get_num_threads();

// Stops and joins the workers; later parallel_for calls run inline. Blocks until chunks already
// running on workers are done; callers waiting on them finish their remaining chunks themselves.
// Idempotent. Must not be called from inside a parallel_for. See Note [CPU pool and unloading].
void shutdown_pool();

// Lets the pool start again (lazily) after shutdown_pool(): called when the plugin registers.
void enable_pool();

}  // namespace opd::cpu
