// The farm's build driver (docs/compile-farm.md): builds one load_inline call in a directory
// without torch, from a build.ninja template (build_facts.h), with the same output as torch's
// load_inline: main.cpp and cuda.cu as load_inline writes them (inline_layout.h), then the
// header modes (build_modes.h) with precompiled headers (pch.h), ninja run by the runner
// (its deadline, environment and sandbox), and a split build's symbols checked with nm.
#pragma once
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "compile/build_modes.h"
#include "compile/tool_runner.h"

namespace kz::compile {

inline constexpr size_t kMaxBuildMessage = size_t{256} * 1024;

struct DriverSetup {
  std::string pch_root;       // precompiled headers ("" = none)
  std::string torch_version;  // part of every PCH key
  ToolRunner runner;          // every tool of this build: environment, sandbox, marker, deadline
  std::function<CudaSplit(const std::string& cu)> split;  // null: no split mode
};

struct DriverOutcome {
  bool timed_out = false;  // a tool passed the build's deadline: a machine failure, not the sources'
  std::string
      machine_error;  // the build directory could not be written, ninja killed or not started: not the sources' either
  // Op `build`'s result frame: {"type": "result", "ok": true, "library", "seconds", "build":
  // report} or {"ok": false, "error": {"kind": "compile_error", "message": <output>}}.
  nlohmann::json result;
};

// The path of `<name>.so` in `dir`, else of the first `<name>*.so` (sorted), else "".
std::string FindLibrary(const std::string& dir, const std::string& name);

// Writes `call`'s files into `build_dir` and builds them (the call must be one that
// build_facts.h's FactsKeyText accepts).
DriverOutcome DriveBuild(const nlohmann::json& call, const std::string& build_dir, const std::string& ninja_template,
                         const DriverSetup& setup);

}  // namespace kz::compile
