#include "plugins/plugin_residency.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <link.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "logging.h"
#include "opd/thread_annotations.h"

namespace opd {
namespace {

struct CodeRange {
  uintptr_t begin, end;
};

struct LoadedObject {
  uintptr_t base = 0;           // its load address (dlpi_addr): one per mapping
  std::vector<CodeRange> code;  // its executable segments
};

// The loaded object that contains `addr`.
LoadedObject loaded_object_of(const void* addr) {
  struct Search {
    uintptr_t addr;
    LoadedObject found;
  } search{reinterpret_cast<uintptr_t>(addr), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        std::vector<CodeRange> code;
        bool contains = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          uintptr_t b = info->dlpi_addr + ph.p_vaddr, e = b + ph.p_memsz;
          contains = contains || (s->addr >= b && s->addr < e);
          if (ph.p_flags & PF_X) code.push_back({b, e});
        }
        if (!contains) return 0;
        s->found = {info->dlpi_addr, std::move(code)};
        return 1;
      },
      &search);
  return search.found;
}

// The end of the mapping that contains `addr`, from /proc/self/maps; 0 when none does.
uintptr_t mapping_end(uintptr_t addr) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long long b = 0, e = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx", &b, &e) != 2) continue;
    if (addr >= b && addr < e) return static_cast<uintptr_t>(e);
  }
  return 0;
}

enum class ThreadView { Gone, Running, Blocked };

// Where thread `tid` is: blocked in the kernel (then `*sp` is its user stack pointer), running,
// or gone. Unreadable: treated as running (cannot be inspected).
ThreadView view_thread(pid_t tid, uintptr_t* sp) {
  std::ifstream in(fmt::format("/proc/self/task/{}/syscall", tid));
  if (!in)
    return ::access(fmt::format("/proc/self/task/{}", tid).c_str(), F_OK) == 0 ? ThreadView::Running
                                                                               : ThreadView::Gone;
  std::string text;
  std::getline(in, text);
  if (text.empty()) return ThreadView::Gone;
  if (text.rfind("running", 0) == 0) return ThreadView::Running;
  // "NR ARG1 .. ARG6 SP PC", or "-1 SP PC" when blocked outside a system call.
  std::istringstream fields(text);
  std::vector<std::string> f;
  for (std::string w; fields >> w;) f.push_back(w);
  if (f.size() < 3) return ThreadView::Running;
  *sp = static_cast<uintptr_t>(std::strtoull(f[f.size() - 2].c_str(), nullptr, 16));
  return ThreadView::Blocked;
}

// Whether the live stack from `sp` holds an address inside `code`.
bool stack_refers_to(int mem_fd, uintptr_t sp, const std::vector<CodeRange>& code) {
  constexpr size_t kMaxStack = size_t{8} << 20;
  uintptr_t end = mapping_end(sp);
  if (end == 0) return true;  // not a mapping we know: cannot tell
  sp &= ~uintptr_t{7};
  if (end - sp > kMaxStack) end = sp + kMaxStack;
  std::vector<uint64_t> buf(size_t{1} << 13);
  for (uintptr_t at = sp; at < end;) {
    size_t want = std::min<size_t>(buf.size() * 8, end - at);
    ssize_t n = ::pread(mem_fd, buf.data(), want, static_cast<off_t>(at));
    if (n <= 0) return true;  // unreadable: cannot tell
    for (size_t i = 0; i < static_cast<size_t>(n) / 8; ++i) {
      for (const CodeRange& r : code) {
        if (buf[i] >= r.begin && buf[i] < r.end) return true;
      }
    }
    at += static_cast<uintptr_t>(n);
  }
  return false;
}

// Threads not in `before`, other than the calling one, that may run code in `code`: those
// blocked with a frame in it, and those of `started_in_registration` that stay running.
size_t threads_left_running(const std::set<pid_t>& before,
                            const std::set<pid_t>& started_in_registration,
                            const std::vector<CodeRange>& code) {
  // A library's own worker threads (OpenBLAS's, started when a plugin maps it) may spin for a
  // while before they block: threads of the registration get this long to be seen blocked.
  constexpr auto kPatience = std::chrono::milliseconds(250);
  const pid_t self = static_cast<pid_t>(::gettid());
  int mem_fd = -1;
  size_t n = 0;
  for (pid_t tid : process_threads()) {
    if (tid == self || before.count(tid)) continue;
    const bool ours = started_in_registration.count(tid) > 0;
    uintptr_t sp = 0;
    ThreadView v = view_thread(tid, &sp);
    const auto start = std::chrono::steady_clock::now();
    while (ours && v == ThreadView::Running) {
      auto waited = std::chrono::steady_clock::now() - start;
      if (waited > kPatience) break;
      if (waited < std::chrono::milliseconds(1)) {
        sched_yield();
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      v = view_thread(tid, &sp);
    }
    if (v == ThreadView::Gone || (v == ThreadView::Running && !ours)) continue;
    if (v == ThreadView::Blocked) {
      if (mem_fd < 0) mem_fd = ::open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
      if (mem_fd >= 0 && !stack_refers_to(mem_fd, sp, code)) continue;
    }
    ++n;
  }
  if (mem_fd >= 0) ::close(mem_fd);
  return n;
}

// Note [Loads sharing a mapping]
// A load of a library that is still mapped (unloaded, but a tensor of the earlier load keeps it:
// a plugin loaded again, which then claims its vendor slot back) gets the same mapping from the
// loader. Each load's owner holds its own dlopen handle, and the mapping goes with the last
// handle. So an owner released while others of its mapping remain is not closed yet: its
// dlclose would unmap nothing and report the library resident ("still mapped after dlclose").
// It waits for the mapping's last owner; then they all close, in load order, the newest last,
// whose record (the plugin's current load) sees the mapping go.

// One mapping of a library file, shared by every load the loader answered with it.
struct Mapping {
  size_t owners = 0;
  uint64_t loads = 0;                       // owners made for it so far: their load order
  std::vector<LibraryOwner*> released;      // owners released while others remained
  std::set<pid_t> threads_before;           // before the first load mapped it
  std::set<pid_t> started_in_registration;  // by the first load's registration
  bool registered = false;                  // started_in_registration is known
  std::vector<CodeRange> code;
};

struct Mappings {
  Mutex mutex;
  std::map<uintptr_t, Mapping> by_base OPD_GUARDED_BY(mutex);
  // Owners kept because threads were left running: reachable, never freed.
  std::vector<LibraryOwner*> kept OPD_GUARDED_BY(mutex);
};

Mappings& mappings() {
  static auto* m = new Mappings();  // leaked: owners may be released during static destruction
  return *m;
}

void release_owner(LibraryOwner* owner) noexcept {
  Mappings& all = mappings();
  std::optional<Mapping> last;
  std::vector<LibraryOwner*> closing{owner};  // in load order once sorted
  {
    MutexLock lock(all.mutex);
    auto it = all.by_base.find(owner->mapping_base);
    if (it != all.by_base.end() && --it->second.owners > 0) {
      try {
        it->second.released.push_back(owner);  // Note [Loads sharing a mapping]
        return;
      } catch (...) {  // out of memory: close it now, as before the note
      }
    } else if (it != all.by_base.end()) {
      last = std::move(it->second);
      all.by_base.erase(it);
      closing.insert(closing.end(), last->released.begin(), last->released.end());
      std::sort(closing.begin(), closing.end(), [](const LibraryOwner* a, const LibraryOwner* b) {
        return a->load_order < b->load_order;
      });
    }
  }
  owner = closing.back();  // the newest load: kept or closed last
  size_t left = 0;
  if (last) {
    try {
      left = threads_left_running(last->threads_before, last->started_in_registration, last->code);
    } catch (const std::exception& e) {
      logger()->error("plugin {}: cannot look for threads left running: {}",
                      owner->library->path().string(), e.what());
    }
  }
  if (left == 0) {
    for (LibraryOwner* o : closing) delete o;
    return;
  }
  std::string reason = fmt::format(
      "{} thread(s) started while it was mapped were left running (its shutdown did not stop "
      "them) and may run its code; the library stays mapped",
      left);
  logger()->error("plugin {}: {}", owner->library->path().string(), reason);
  {
    MutexLock lock(all.mutex);
    all.kept.insert(all.kept.end(), closing.begin(), closing.end());
  }
  // Every load of the mapping is kept: each one's record hears it.
  for (LibraryOwner* o : closing) {
    if (!o->on_kept) continue;
    try {
      o->on_kept(true, reason);
    } catch (const std::exception& e) {
      logger()->error("plugin {}: {}", o->library->path().string(), e.what());
    }
  }
}

}  // namespace

std::set<pid_t> process_threads() {
  std::set<pid_t> out;
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return out;
  while (dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    long tid = std::strtol(e->d_name, &end, 10);
    if (end != e->d_name && *end == '\0') out.insert(static_cast<pid_t>(tid));
  }
  ::closedir(dir);
  return out;
}

std::shared_ptr<LibraryOwner> own_library(std::shared_ptr<PluginLibrary> library,
                                          const void* entry_point, std::set<pid_t> threads_before) {
  LoadedObject object = loaded_object_of(entry_point);
  uint64_t load_order = 0;
  {
    Mappings& all = mappings();
    MutexLock lock(all.mutex);
    Mapping& m = all.by_base[object.base];
    if (m.owners++ == 0) {
      m.threads_before = std::move(threads_before);
      m.code = std::move(object.code);
    }
    load_order = ++m.loads;
  }
  return std::shared_ptr<LibraryOwner>(
      new LibraryOwner{std::move(library), {}, object.base, load_order}, &release_owner);
}

void registration_ran(const LibraryOwner& owner, const std::set<pid_t>& threads_now) {
  Mappings& all = mappings();
  MutexLock lock(all.mutex);
  auto it = all.by_base.find(owner.mapping_base);
  if (it == all.by_base.end() || it->second.registered) return;
  Mapping& m = it->second;
  for (pid_t tid : threads_now) {
    if (!m.threads_before.count(tid)) m.started_in_registration.insert(tid);
  }
  m.registered = true;
}

}  // namespace opd
