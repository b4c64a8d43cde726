// opd: the opdispatch command-line tool.

#include <iostream>

#include "commands.h"
#include "opd/error.h"

int main(int argc, char** argv) {
  CLI::App app{"opd: operators, schemas and kernels of opdispatch"};
  app.require_subcommand(1);
  int exit_code = 0;
  opd::cli::add_schema(app, exit_code);
  opd::cli::add_ops(app, exit_code);
  opd::cli::add_dump(app, exit_code);
  opd::cli::add_plugins(app, exit_code);
  opd::cli::add_check(app, exit_code);
  opd::cli::add_eval(app, exit_code);
  opd::cli::add_demo(app, exit_code);
  opd::cli::add_bench(app, exit_code, argv[0]);
  opd::cli::add_conformance(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const opd::Error& e) {
    std::cerr << "opd: " << e.msg() << "\n";
    return 1;
  }
  return exit_code;
}
