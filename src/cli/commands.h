// Every kz subcommand, in one place: each Add…Command declares its options on a CLI::App and
// returns the Command that runs once the command line is parsed. `kz` (main.cc) runs verify,
// screen, bench and task itself and execs a sibling executable for the others, which link
// libraries kz must not need (exec_sibling.h; each sibling's main is <name>_main.cc).
#pragma once
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "verify/status.h"

namespace kz::scoring {
class RemoteBackend;
}

namespace kz::cli {

class Command {
 public:
  virtual ~Command() = default;
  virtual bool Parsed() const { return true; }  // its subcommand was given (kz's own commands)
  virtual int Run() = 0;                        // the process exit code (below, per command)
};

// Prints "<who>: <what>" on stderr and returns verify::kExitUsage (2).
inline int UsageError(const std::string& who, const std::string& what) {
  std::cerr << who << ": " << what << "\n";
  return verify::kExitUsage;
}

// `kz verify`: one sample (--ref/--candidate) or many (--manifest); exit codes in docs/cli.md.
std::unique_ptr<Command> AddVerifyCommand(CLI::App& app, const std::string& argv0);

// `kz screen`: the static integrity screen of candidate files (docs/screen-rules.md), through
// the worker op `screen` (no torch import, no candidate code executed). 0 pass, 14 reject,
// 2 usage, 3 internal.
std::unique_ptr<Command> AddScreenCommand(CLI::App& app, const std::string& argv0);

// `kz bench`: score a model's generations on a KernelBench-format suite (docs/bench.md);
// `kz bench report` recomputes the report from a finished or interrupted run. `remote`:
// --server's verifier (kz-bench passes one; kz passes none and execs kz-bench for --server,
// see IsBenchServerInvocation).
std::unique_ptr<Command> AddBenchCommand(CLI::App& app, const std::string& argv0,
                                         scoring::RemoteBackend* remote = nullptr);
// True for `kz bench ... --server URL` (before any `--`): kz hands it to kz-bench, which
// links libcurl.
bool IsBenchServerInvocation(int argc, char** argv);

// `kz task check TASK.py`: whether kz can judge a reference task on this device and what it
// costs (footprint before allocation, the reference's time and peak memory, determinism,
// input sensitivity, finite and non-degenerate outputs), through the worker op `task_check`
// (docs/cli.md, docs/worker-protocol.md). As kz verify's: 0 ok, 15 invalid_task, 13 timeout,
// 2 usage (missing file, bad flag, no such GPU), 3 internal (the worker failed).
std::unique_ptr<Command> AddTaskCommand(CLI::App& app, const std::string& argv0);

// `kz serve` (kz-serve, links HTTP and SQLite): the verification service (docs/api.md) on one
// host. 0 after a graceful shutdown.
std::unique_ptr<Command> AddServeCommand(CLI::App& app, const std::string& argv0);

// `kz worker` (kz-worker, links Redis): a verification worker on a Redis Streams job queue
// (docs/queue.md). 0 after a graceful shutdown.
std::unique_ptr<Command> AddWorkerCommand(CLI::App& app, const std::string& argv0);

// `kz generate` (kz-generate, links libcurl): sample kernels from an OpenAI-compatible model
// for a KernelBench-format suite into a run directory that `kz bench` scores
// (docs/generate.md). The exit code of generate::RunGenerate, or 2 for bad flags or an
// unreadable --prompt or --replay file.
std::unique_ptr<Command> AddGenerateCommand(CLI::App& app, const std::string& argv0);

// `kz propose` (the curriculum: apis, mine, sample, validate) and `kz frontier` (stats, list,
// export of the frontier pool); docs/curriculum.md. kz-propose, links SQLite. Registers both
// on `app`. 0 ok, 1 some modules refused (validate), 2 usage / bad input.
std::unique_ptr<Command> AddProposeCommand(CLI::App& app, const std::string& argv0);
// `kz frontier ...` (frontier_command.cc): registers its subcommands on `frontier`.
std::unique_ptr<Command> AddFrontierCommand(CLI::App* frontier);

// `kz optimize` (kz-optimize, libcurl for the model client): test-time search for one task's
// kernel (docs/optimize.md). 0: the run ended (iterations done or budget reached); 2: refused
// (bad flags, a task that cannot be verified, a corrupted or busy run directory); 3: a failure
// mid-run.
std::unique_ptr<Command> AddOptimizeCommand(CLI::App& app, const std::string& argv0);

// `kz train` (kz-train; docs/training.md): the SFT teacher, the run, compare and the other
// subcommands. Registers `train` and its subcommands on `app`. 0 ok, 1 some pairs not judged
// correct, 2 usage / bad input.
std::unique_ptr<Command> AddTrainCommand(CLI::App& app, const std::string& argv0);

}  // namespace kz::cli
