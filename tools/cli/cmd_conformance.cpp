// opd conformance PLUGIN: the vendor conformance run (issue 33 §2), which is Python
// (python/opdispatch/conformance.py, over the OpInfo table the package ships): this runs
// Debian's interpreter on it, with the package that belongs to this opd: the build tree's
// (<build>/bin/opd, <build>/python) or the installed one (<prefix>/bin/opd,
// <prefix>/lib/python3/dist-packages).

#include <spawn.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"

extern char** environ;

namespace opd::cli {
namespace {

namespace fs = std::filesystem;

// The folder holding the opdispatch package for the opd binary in `bin`, or empty.
fs::path package_root(const fs::path& bin) {
  for (const fs::path& candidate :
       {bin.parent_path() / "python", bin.parent_path() / OPD_PYTHON_INSTALL_DIR}) {
    if (fs::exists(candidate / "opdispatch" / "conformance.py")) return candidate;
  }
  return {};
}

// Runs the interpreter on the module with `args`, PYTHONPATH starting with `root`; its exit
// status (127 when it cannot start, 128 + N when signal N ended it).
int run_module(const fs::path& root, const std::vector<std::string>& args) {
  const char* python = std::getenv("OPD_PYTHON");
  std::vector<std::string> argv_storage = {
      python && *python ? python
                        : (fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3"),
      "-m", "opdispatch.conformance"};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);

  std::string path = root.string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) path += std::string(":") + old;
  std::vector<std::string> env_storage = {"PYTHONPATH=" + path};
  for (char** e = environ; *e; ++e) {
    if (std::string(*e).rfind("PYTHONPATH=", 0) != 0) env_storage.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  pid_t pid;
  if (posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data()) != 0) {
    std::cerr << "opd conformance: cannot start " << argv_storage[0] << "\n";
    return 127;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    std::cerr << "opd conformance: the run crashed (signal " << WTERMSIG(status)
              << "): a kernel brought the process down; the last call is in the report of "
                 "a narrower run (--ops)\n";
    return 128 + WTERMSIG(status);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

void add_conformance(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "conformance",
      "Check a plugin's kernels against the CPU plugin over the OpInfo table's samples: "
      "opd conformance PLUGIN [--ops REGEX] [--json] [--budget SECONDS] [--samples N] "
      "[--dtypes LIST]; exit 1 on any failure, 2 on bad usage");
  // Every argument goes to the Python module, which parses and documents them (--help too).
  cmd->prefix_command();
  cmd->set_help_flag();
  cmd->callback([cmd, &exit_code] {
    fs::path bin = fs::canonical("/proc/self/exe").parent_path();
    fs::path root = package_root(bin);
    if (root.empty()) {
      std::cerr << "opd conformance: the Python package opdispatch was not found next to opd ("
                << (bin.parent_path() / "python").string() << " or "
                << (bin.parent_path() / OPD_PYTHON_INSTALL_DIR).string()
                << "); it is built where Python's headers and pybind11 are installed\n";
      exit_code = 2;
      return;
    }
    exit_code = run_module(root, cmd->remaining());
  });
}

}  // namespace opd::cli
