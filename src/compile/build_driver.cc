#include "compile/build_driver.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <vector>

#include "compile/host_header.h"
#include "compile/inline_layout.h"
#include "compile/pch.h"
#include "compile/split_symbols.h"
#include "util/fs.h"

namespace kz::compile {
namespace fs = std::filesystem;
namespace {
std::string EnvValue(const ToolRunner& runner, const std::string& name) {
  for (auto it = runner.env.rbegin(); it != runner.env.rend(); ++it)
    if (it->first == name) return it->second;
  const char* v = std::getenv(name.c_str());
  return v ? v : "";
}

// torch 2.11's `_run_ninja_build` (non-verbose, POSIX): `ninja -v [-j MAX_JOBS]`; a failure
// reads "Error building extension '<name>': <output>".
NinjaOutcome RunNinja(const ToolRunner& runner, const std::string& dir, const std::string& name, bool* timed_out) {
  std::string ninja = FindInPath("ninja", EnvValue(runner, "PATH"));
  std::vector<std::string> argv{ninja.empty() ? "ninja" : ninja, "-v"};
  std::string jobs = EnvValue(runner, "MAX_JOBS");
  if (!jobs.empty() && std::all_of(jobs.begin(), jobs.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
    argv.insert(argv.end(), {"-j", jobs});
  ToolRun run = runner.Run(argv, dir);
  if (run.timed_out) *timed_out = true;
  if (run.ok) return {true, ""};
  std::string message = "Error building extension '" + name + "'";
  if (!run.output.empty()) message += ": " + run.output;
  if (run.exit_code < 0) message += "\n(ninja " + run.why + ")";
  return {false, message, run.timed_out || run.exit_code < 0};
}

bool WriteSources(const nlohmann::json& call, const std::string& dir, const std::string& tmpl, std::string* err) {
  auto src = LoadInlineSources(call, err);
  if (!src) return false;
  std::string name = call.value("name", "");
  return util::WriteFileAtomic(dir + "/main.cpp", src->main, err) &&
         (!src->cu || util::WriteFileAtomic(dir + "/cuda.cu", *src->cu, err)) &&
         util::WriteFileAtomic(dir + "/build.ninja", RenderNinja(tmpl, name, dir), err);
}

nlohmann::json Failure(const std::string& message) {
  return {{"type", "result"},
          {"ok", false},
          {"error", {{"kind", "compile_error"}, {"message", message.substr(0, kMaxBuildMessage)}}}};
}
}  // namespace

std::string FindLibrary(const std::string& dir, const std::string& name) {
  std::string exact = dir + "/" + name + ".so";
  if (fs::is_regular_file(exact)) return exact;
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string f = e.path().filename().string();
    if (f.rfind(name, 0) == 0 && f.size() >= 3 && f.compare(f.size() - 3, 3, ".so") == 0) found.push_back(e.path());
  }
  std::sort(found.begin(), found.end());
  return found.empty() ? "" : found.front();
}

DriverOutcome DriveBuild(const nlohmann::json& call, const std::string& build_dir, const std::string& ninja_template,
                         const DriverSetup& setup) {
  auto start = std::chrono::steady_clock::now();
  DriverOutcome out;
  nlohmann::json report = {{"driver", "kz"}, {"import_checked", false}};
  std::string name = call.value("name", ""), err;
  if (!util::MakeDirs(build_dir, &err) || !WriteSources(call, build_dir, ninja_template, &err)) {
    out.machine_error = "cannot write the build directory " + build_dir + ": " + err;
    return out;
  }
  std::unique_ptr<PchStore> store;
  if (!setup.pch_root.empty()) store = std::make_unique<PchStore>(setup.pch_root, setup.torch_version, setup.runner);
  HostHeader host(build_dir, store.get(), &report);
  ModeHooks hooks;
  hooks.run_ninja = [&] { return RunNinja(setup.runner, build_dir, name, &out.timed_out); };
  hooks.split = setup.split;
  hooks.check_split = [&](const CudaSplit& s) { return CheckSplitSymbols(setup.runner, build_dir, s.kernels); };
  NinjaOutcome built = RunModes(build_dir, host, hooks, &report);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string library = FindLibrary(build_dir, name);
  if (built.machine && !out.timed_out) {
    out.machine_error = built.message;  // killed or never started: not the sources' fault
    return out;
  }
  if (!built.ok || library.empty()) {
    out.result = Failure(built.ok ? "no library was produced" : built.message);
    return out;
  }
  out.result = {{"type", "result"},
                {"ok", true},
                {"library", util::AbsolutePath(library)},
                {"seconds", std::round(seconds * 1000) / 1000},
                {"build", report}};
  return out;
}

}  // namespace kz::compile
