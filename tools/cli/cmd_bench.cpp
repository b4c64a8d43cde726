// opd bench: runs the Google Benchmark suites built next to opd.

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"

namespace opd::cli {

void add_bench(CLI::App& app, int& exit_code, const char* argv0) {
  auto* cmd =
      app.add_subcommand("bench", "Run the benchmarks (arguments after -- go to Google Benchmark)");
  cmd->allow_extras();
  cmd->callback([cmd, &exit_code, argv0] {
    std::filesystem::path self = std::filesystem::canonical("/proc/self/exe");
    std::filesystem::path bench = self.parent_path() / "opd_bench";
    if (!std::filesystem::exists(bench)) {
      std::cerr << "opd bench: " << bench
                << " was not built (configure with OPD_BUILD_BENCHMARKS=ON)\n";
      exit_code = 1;
      return;
    }
    std::vector<std::string> args = {bench.string()};
    for (const auto& a : cmd->remaining()) args.push_back(a);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    std::perror("opd bench: execv");
    exit_code = 1;
  });
}

}  // namespace opd::cli
