// Allocates storages whose deleter and deleter context are this plugin's code and objects: a
// Buffer with a virtual destructor, so that freeing one after the library was unmapped would
// jump into unmapped memory. The manager must keep the library mapped until the last one is
// freed (Note [Storage ownership]).
//   allocator::make(like, n)  a Float32 tensor of n zeros owned by this plugin
//   allocator::live(like)     how many such buffers are alive
//   allocator::block(flags)   a call that stays inside this library: sets flags[0] (Int32) to 1,
//                             then waits until the caller sets flags[1]

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "opd/plugin.h"
#include "opd/tensor.h"

namespace {

std::atomic<int64_t> live_buffers{0};

class Buffer {
 public:
  explicit Buffer(int64_t n) : data_(std::calloc(static_cast<size_t>(n), sizeof(float))) {
    live_buffers.fetch_add(1);
  }
  virtual ~Buffer() {
    std::free(data_);
    live_buffers.fetch_sub(1);
  }
  void* data() const { return data_; }

 private:
  void* data_;
};

void release(void*, void* ctx) { delete static_cast<Buffer*>(ctx); }

opd::Tensor make(const opd::Tensor&, int64_t n) {
  auto* buffer = new Buffer(n);
  return opd::from_blob(buffer->data(), std::vector<int64_t>{n}, std::vector<int64_t>{1},
                        opd::ScalarType::Float32, opd::Device(opd::DeviceType::CPU), &release,
                        buffer, opd::this_plugin_reference());
}

int64_t live(const opd::Tensor&) { return live_buffers.load(); }

int64_t block(const opd::Tensor& flags) {
  auto* f = flags.data_ptr<int32_t>();
  std::atomic_ref<int32_t>(f[0]).store(1);
  while (std::atomic_ref<int32_t>(f[1]).load() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return 0;
}

}  // namespace

OPD_PLUGIN(allocator, "0.1.0") {}

OPD_LIBRARY(allocator, m) {
  m.def("make(Tensor like, int n) -> Tensor");
  m.def("live(Tensor like) -> int");
  m.def("block(Tensor flags) -> int");
}

OPD_LIBRARY_IMPL(allocator, CPU, m) {
  m.impl("make", &make);
  m.impl("live", &live);
  m.impl("block", &block);
}
