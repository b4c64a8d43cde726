// Runs the benchmarks, then prints each declared ratio against its reference measured in the
// same run: the machines are shared and noisy, so absolute times alone prove little.

#include "bench_main.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ratios.h"

namespace opd::bench {
namespace {

struct Ratio {
  std::string name, reference, goal;
  std::string name_baseline, reference_baseline;  // empty: none
};

std::vector<Ratio>& ratios() {
  static std::vector<Ratio> r;
  return r;
}

bool smoke_mode = false;

struct Requirement {
  std::string suite;
  std::function<std::string()> unavailable;
};

std::vector<Requirement>& requirements() {
  static std::vector<Requirement> r;
  return r;
}

// Removes --opd_bench_smoke from argv (Google Benchmark refuses flags it does not know).
bool take_smoke_flag(int& argc, char** argv) {
  bool found = false;
  int kept = 0;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strcmp(argv[i], "--opd_bench_smoke") == 0) {
      found = true;
      continue;
    }
    argv[kept++] = argv[i];
  }
  argc = kept;
  argv[kept] = nullptr;
  return found;
}

class RecordingReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      // A skipped or failed case (no GPU, an operator that threw) has no time to compare.
      if (run.error_occurred) continue;
      if (run.run_type == Run::RT_Iteration || run.aggregate_name == "median") {
        const auto& n = run.run_name;
        times[n.args.empty() ? n.function_name : n.function_name + "/" + n.args] =
            run.GetAdjustedRealTime();
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> times;
};

}  // namespace

bool smoke() { return smoke_mode; }

void require_for_suite(std::string suite, std::function<std::string()> unavailable) {
  requirements().push_back({std::move(suite), std::move(unavailable)});
}

void add_ratio(std::string name, std::string reference, std::string goal) {
  ratios().push_back({std::move(name), std::move(reference), std::move(goal), {}, {}});
}

void add_ratio_over_baselines(std::string name, std::string name_baseline, std::string reference,
                              std::string reference_baseline, std::string goal) {
  ratios().push_back({std::move(name), std::move(reference), std::move(goal),
                      std::move(name_baseline), std::move(reference_baseline)});
}

}  // namespace opd::bench

int main(int argc, char** argv) {
  opd::bench::smoke_mode = opd::bench::take_smoke_flag(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  for (const auto& r : opd::bench::requirements()) {
    if (std::string why = r.unavailable(); !why.empty()) {
      std::printf("%s suite skipped: %s\n", r.suite.c_str(), why.c_str());
      return 0;
    }
  }
  opd::bench::RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nRatios (measured in this run):\n");
  // A time of the last run, 0 when the benchmark did not run (or `name` is empty).
  auto time = [&](const std::string& name) {
    auto it = reporter.times.find(name);
    return it == reporter.times.end() ? 0.0 : it->second;
  };
  for (const auto& r : opd::bench::ratios()) {
    double a = time(r.name), b = time(r.reference);
    if (a == 0 || b == 0) continue;
    if (r.name_baseline.empty()) {
      std::printf("  %-40s / %-32s = %6.3f   (goal %s)\n", r.name.c_str(), r.reference.c_str(),
                  a / b, r.goal.c_str());
      continue;
    }
    double af = time(r.name_baseline), bf = time(r.reference_baseline);
    if (af == 0 || bf == 0 || b <= bf) continue;
    std::printf(
        "  %-40s / %-32s = %6.3f   above their baselines %s, %s (%.1f / %.1f ns) (goal %s)\n",
        r.name.c_str(), r.reference.c_str(), (a - af) / (b - bf), r.name_baseline.c_str(),
        r.reference_baseline.c_str(), a - af, b - bf, r.goal.c_str());
  }
  benchmark::Shutdown();
  return 0;
}
