// `kz propose` (the curriculum: apis, mine, sample, validate) and `kz frontier` (stats,
// list, export of the frontier pool); docs/curriculum.md. Both run in the kz-propose
// executable, which links SQLite; kz execs it.
#pragma once
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace kz::cli {

class ProposeCommand {
 public:
  virtual ~ProposeCommand() = default;
  virtual int Run() = 0;  // 0 ok, 1 some modules refused (validate), 2 usage / bad input
};

// Registers `propose` and `frontier` on `app`.
std::unique_ptr<ProposeCommand> AddProposeCommand(CLI::App& app, const std::string& argv0);

// `kz frontier ...` (frontier_command.cc): registers its subcommands on `frontier`.
class FrontierCommand {
 public:
  virtual ~FrontierCommand() = default;
  virtual int Run() = 0;
};
std::unique_ptr<FrontierCommand> AddFrontierCommand(CLI::App* frontier);

}  // namespace kz::cli
