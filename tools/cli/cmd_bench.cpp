// opd bench: runs the Google Benchmark suites built next to opd: opd_bench, then the GPU cases
// (opd_bench_cuda) where the CUDA plugin was built, then, where libtorch was found at build time,
// the same cases through PyTorch's dispatcher, side by side, then the Python package's
// benchmarks (tests/bench/python_bench.py) where it was built.

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"

extern char** environ;

namespace opd::cli {
namespace {

// Runs `program` with `args`; returns its exit status (127 when it cannot be started).
int run(const std::filesystem::path& program, const std::vector<std::string>& args) {
  std::vector<std::string> argv_storage = {program.string()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return 127;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

void add_bench(CLI::App& app, int& exit_code, const char* argv0) {
  auto* cmd =
      app.add_subcommand("bench", "Run the benchmarks (arguments after -- go to Google Benchmark)");
  // `opd bench -- ARGS` (as the README shows it) and `opd bench --benchmark_filter=X` both pass
  // their arguments on. CLI11 hands what follows "--" to positionals only, so without one the
  // documented form failed with "The following arguments were not expected".
  static std::vector<std::string> after_separator;
  static bool smoke = false;
  cmd->add_option("args", after_separator, "Arguments for Google Benchmark (after --)");
  cmd->add_flag("--smoke", smoke,
                "Run every case briefly, once, to prove it runs (CI); the times mean nothing");
  cmd->allow_extras();
  cmd->callback([cmd, &exit_code] {
    std::filesystem::path dir = std::filesystem::canonical("/proc/self/exe").parent_path();
    std::filesystem::path bench = dir / "opd_bench";
    if (!std::filesystem::exists(bench)) {
      std::cerr << "opd bench: " << bench
                << " was not built (configure with OPD_BUILD_BENCHMARKS=ON)\n";
      exit_code = 1;
      return;
    }
    // Three repetitions in random order, each ratio from the medians: on a shared machine a
    // slow spell then falls on both sides of a ratio rather than on one. The caller's arguments
    // come after these and override them.
    std::vector<std::string> args = {"--benchmark_repetitions=3",
                                     "--benchmark_enable_random_interleaving=true",
                                     "--benchmark_report_aggregates_only=true"};
    // The smoke mode: one repetition of at least a millisecond per case, and the suites' own
    // shortening of the cases that set their duration (opd::bench::smoke(), python_bench.py).
    if (smoke) {
      args = {"--benchmark_repetitions=1", "--benchmark_enable_random_interleaving=true",
              "--benchmark_min_time=0.001", "--opd_bench_smoke"};
    }
    // The extras are the unknown options before "--", and "--" itself, which CLI11 keeps.
    std::vector<std::string> extras = cmd->remaining();
    if (auto it = std::find(extras.begin(), extras.end(), "--"); it != extras.end()) {
      extras.erase(it);
    }
    args.insert(args.end(), extras.begin(), extras.end());
    args.insert(args.end(), after_separator.begin(), after_separator.end());
    exit_code = run(bench, args);
    std::filesystem::path cuda = dir / "opd_bench_cuda";
    if (exit_code == 0 && std::filesystem::exists(cuda)) {
      std::cout << "\nGPU cases (the cuda plugin):\n" << std::flush;
      exit_code = run(cuda, args);
    }
    std::filesystem::path torch = dir / "opd_bench_torch";
    if (exit_code == 0 && std::filesystem::exists(torch)) {
      std::cout << "\nThe same cases through PyTorch's dispatcher (libtorch):\n" << std::flush;
      exit_code = run(torch, args);
    }
    std::filesystem::path python = dir / "opd_bench_python";
    if (exit_code == 0 && std::filesystem::exists(python)) {
      std::cout << "\nThe Python package (against torch's Python API where installed):\n"
                << std::flush;
      exit_code = run(python, args);
    }
  });
}

}  // namespace opd::cli
