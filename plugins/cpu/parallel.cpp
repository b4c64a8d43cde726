#include "cpu/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "opd/thread_annotations.h"

namespace opd::cpu {
namespace {

thread_local bool t_in_parallel = false;

class ParallelRegionGuard {
 public:
  ParallelRegionGuard() : previous_(t_in_parallel) { t_in_parallel = true; }
  ~ParallelRegionGuard() { t_in_parallel = previous_; }
  ParallelRegionGuard(const ParallelRegionGuard&) = delete;
  ParallelRegionGuard& operator=(const ParallelRegionGuard&) = delete;

 private:
  bool previous_;
};

// One parallel_for call: its chunks are claimed through `next_` by the caller and by any worker
// that picks the job from the queue, so the caller never depends on a worker being free.
class Job {
 public:
  Job(const std::function<void(int64_t, int64_t)>& fn, int64_t begin, int64_t end, int64_t chunk)
      : fn_(fn),
        begin_(begin),
        end_(end),
        chunk_(chunk),
        num_chunks_((end - begin + chunk - 1) / chunk) {}

  int64_t num_chunks() const { return num_chunks_; }

  // Claims and runs chunks until none is left. A worker may call it after the caller returned
  // (a stale queue entry): it then claims nothing and never touches fn_.
  void run_chunks() {
    ParallelRegionGuard region;
    int64_t finished = 0;
    std::exception_ptr error;
    for (int64_t i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < num_chunks_;) {
      if (!failed_.load(std::memory_order_relaxed)) {
        int64_t b = begin_ + i * chunk_;
        try {
          fn_(b, std::min(end_, b + chunk_));
        } catch (...) {
          failed_.store(true, std::memory_order_relaxed);
          if (!error) error = std::current_exception();
        }
      }
      ++finished;
    }
    if (finished == 0) return;
    MutexLock lock(mutex_);
    // The exception changes hands under the lock (see wait()): this thread keeps no reference.
    if (error && !error_) error_ = std::move(error);
    error = nullptr;
    done_ += finished;
    if (done_ == num_chunks_) done_cv_.notify_all();
  }

  // Blocks until every chunk has run; rethrows the first exception a chunk threw. The job gives
  // the exception up, so that a worker dropping the last reference to the job never destroys an
  // exception the caller is still reading (libstdc++ counts exception references in code that
  // ThreadSanitizer does not see, and reported that as a race).
  void wait() {
    std::exception_ptr error;
    {
      MutexLock lock(mutex_);
      while (done_ != num_chunks_) done_cv_.wait(mutex_);
      error = std::move(error_);
      error_ = nullptr;
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  const std::function<void(int64_t, int64_t)>& fn_;  // the caller's; valid until wait() returns
  const int64_t begin_, end_, chunk_, num_chunks_;
  std::atomic<int64_t> next_{0};
  std::atomic<bool> failed_{false};
  Mutex mutex_;
  std::condition_variable_any done_cv_;
  int64_t done_ OPD_GUARDED_BY(mutex_) = 0;
  std::exception_ptr error_ OPD_GUARDED_BY(mutex_);  // the first chunk failure
};

// OPD_NUM_THREADS when set to a positive number, else the hardware threads; read once.
int64_t num_threads() {
  static const int64_t n = [] {
    if (const char* env = std::getenv("OPD_NUM_THREADS")) {
      char* end = nullptr;
      long long v = std::strtoll(env, &end, 10);
      if (end != env && *end == '\0' && v > 0) return static_cast<int64_t>(v);
    }
    return std::max<int64_t>(std::thread::hardware_concurrency(), 1);
  }();
  return n;
}

class Pool {
 public:
  // Queues `job` for up to `helpers` workers, starting the workers on first use. Returns false
  // when no worker can help (none on this machine, or the pool is shut down).
  bool submit(const std::shared_ptr<Job>& job, int64_t helpers) OPD_EXCLUDES(mutex_) {
    {
      MutexLock lock(mutex_);
      if (!enabled_) return false;
      if (!started_) start_locked();
      if (workers_.empty()) return false;
      helpers = std::min<int64_t>(helpers, static_cast<int64_t>(workers_.size()));
      for (int64_t i = 0; i < helpers; ++i) queue_.push_back(job);
    }
    for (int64_t i = 0; i < helpers; ++i) cv_.notify_one();
    return true;
  }

  void shutdown() OPD_EXCLUDES(mutex_) {
    std::vector<std::thread> workers;
    {
      MutexLock lock(mutex_);
      enabled_ = false;
      started_ = false;
      ++generation_;
      workers.swap(workers_);
      queue_.clear();
    }
    cv_.notify_all();
    for (std::thread& t : workers) t.join();
  }

  void enable() OPD_EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    enabled_ = true;
  }

 private:
  void start_locked() OPD_REQUIRES(mutex_) {
    started_ = true;
    int64_t n = num_threads() - 1;
    workers_.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) workers_.emplace_back([this, g = generation_] { work(g); });
  }

  // A worker of `generation` leaves once shutdown() has moved past it.
  void work(uint64_t generation) OPD_EXCLUDES(mutex_) {
    t_in_parallel = true;  // nested parallel_for calls on a worker run inline
    for (;;) {
      std::shared_ptr<Job> job;
      {
        MutexLock lock(mutex_);
        while (generation_ == generation && queue_.empty()) cv_.wait(mutex_);
        if (generation_ != generation) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job->run_chunks();
    }
  }

  Mutex mutex_;
  std::condition_variable_any cv_;
  std::deque<std::shared_ptr<Job>> queue_ OPD_GUARDED_BY(mutex_);  // may hold finished jobs
  std::vector<std::thread> workers_ OPD_GUARDED_BY(mutex_);
  uint64_t generation_ OPD_GUARDED_BY(mutex_) = 0;  // bumped by each shutdown
  bool started_ OPD_GUARDED_BY(mutex_) = false;
  bool enabled_ OPD_GUARDED_BY(mutex_) = true;
};

// A plain static object, not a leaked heap one: when the plugin is unloaded its memory goes with
// the library (a leaked pool would be lost for good at each unload). It is destroyed after the
// guard below, which is defined after it, has joined the workers.
Pool the_pool;
Pool& pool() { return the_pool; }

// Joins the workers at dlclose or exit if the plugin's shutdown hook did not (a plugin used
// without the plugin manager). See Note [CPU pool and unloading].
struct PoolJoiner {
  ~PoolJoiner() { pool().shutdown(); }
} pool_joiner;

}  // namespace

void parallel_for(int64_t begin, int64_t end, int64_t grain_size,
                  const std::function<void(int64_t, int64_t)>& fn) {
  if (begin >= end) return;
  const int64_t n = end - begin;
  const int64_t grain = std::max<int64_t>(grain_size, 1);
  const int64_t threads = get_num_threads();
  if (n <= grain || threads == 1 || t_in_parallel) {
    fn(begin, end);
    return;
  }
  const int64_t max_chunks = std::min(threads, (n + grain - 1) / grain);
  const int64_t chunk = (n + max_chunks - 1) / max_chunks;
  auto job = std::make_shared<Job>(fn, begin, end, chunk);
  if (!pool().submit(job, job->num_chunks() - 1)) {
    fn(begin, end);
    return;
  }
  job->run_chunks();
  job->wait();
}

bool in_parallel_region() { return t_in_parallel; }

int64_t get_num_threads() { return num_threads(); }

void shutdown_pool() { pool().shutdown(); }

void enable_pool() { pool().enable(); }

}  // namespace opd::cpu
