// Runs the benchmarks, then prints each declared ratio against its reference measured in the
// same run: the machines are shared and noisy, so absolute times alone prove little.

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "ratios.h"

namespace opd::bench {
namespace {

struct Ratio {
  std::string name, reference, goal;
};

std::vector<Ratio>& ratios() {
  static std::vector<Ratio> r;
  return r;
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

void add_ratio(std::string name, std::string reference, std::string goal) {
  ratios().push_back({std::move(name), std::move(reference), std::move(goal)});
}

}  // namespace opd::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  opd::bench::RecordingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nRatios (measured in this run):\n");
  for (const auto& r : opd::bench::ratios()) {
    auto a = reporter.times.find(r.name);
    auto b = reporter.times.find(r.reference);
    if (a == reporter.times.end() || b == reporter.times.end() || a->second == 0 ||
        b->second == 0) {
      continue;
    }
    std::printf("  %-40s / %-32s = %6.3f   (goal %s)\n", r.name.c_str(), r.reference.c_str(),
                a->second / b->second, r.goal.c_str());
  }
  benchmark::Shutdown();
  return 0;
}
