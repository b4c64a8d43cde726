#pragma once

#include <CLI/CLI.hpp>

namespace opd::cli {

// Each add_* registers one subcommand on `app`; the subcommand's callback runs it and stores
// the process exit code in `exit_code`.
void add_schema(CLI::App& app, int& exit_code);
void add_ops(CLI::App& app, int& exit_code);
void add_dump(CLI::App& app, int& exit_code);
void add_demo(CLI::App& app, int& exit_code);
void add_plugins(CLI::App& app, int& exit_code);
void add_check(CLI::App& app, int& exit_code);
void add_eval(CLI::App& app, int& exit_code);
void add_bench(CLI::App& app, int& exit_code, const char* argv0);
void add_conformance(CLI::App& app, int& exit_code);

}  // namespace opd::cli
