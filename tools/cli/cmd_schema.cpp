// opd schema: parse schemas, print their canonical form or the parse error.

#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "opd/function_schema.h"

namespace opd::cli {

void add_schema(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "schema", "Parse schemas (arguments, or one per line on stdin) and print the canonical form");
  static std::vector<std::string> schemas;
  static bool json = false;
  cmd->add_option("schemas", schemas, "Schema strings; read from stdin when none");
  cmd->add_flag("--json", json, "Print the parsed structure as JSON");
  cmd->callback([&exit_code] {
    std::vector<std::string> inputs = schemas;
    if (inputs.empty()) {
      for (std::string line; std::getline(std::cin, line);) {
        if (!line.empty()) inputs.push_back(line);
      }
    }
    for (const auto& text : inputs) {
      try {
        FunctionSchema s = parse_schema(text);
        std::cout << (json ? schema_to_json(s) : s.to_string()) << "\n";
      } catch (const SchemaParseError& e) {
        std::cout << "error: " << e.msg() << "\n";
        exit_code = 1;
      }
    }
  });
}

}  // namespace opd::cli
