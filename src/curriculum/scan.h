// Module facts of many files: the worker's `module_scan` op (no torch import, ~2 ms a
// file) behind an interface, so that logic tests use a fake.
#pragma once
#include <string>
#include <vector>

#include "curriculum/module_facts.h"
#include "worker/worker_client.h"

namespace kz::curriculum {

class Scanner {
 public:
  virtual ~Scanner() = default;
  // Facts of every path, in order (a file that cannot be read or parsed is an entry with
  // its status, not an error). False with *err only when the scan itself failed.
  virtual bool Scan(const std::vector<std::string>& paths, std::vector<ModuleFacts>* out, std::string* err) = 0;
};

// One `module_scan` child per kBatch files, each under a wall-time limit.
class WorkerScanner : public Scanner {
 public:
  static constexpr size_t kBatch = 500;
  explicit WorkerScanner(worker::WorkerConfig config) : config_(std::move(config)) {}
  bool Scan(const std::vector<std::string>& paths, std::vector<ModuleFacts>* out, std::string* err) override;

 private:
  worker::WorkerConfig config_;
};

}  // namespace kz::curriculum
