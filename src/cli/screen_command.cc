#include "cli/commands.h"

#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/fs.h"
#include "verify/sample.h"
#include "verify/status.h"
#include "worker/worker_client.h"

namespace kz::cli {
namespace {
using nlohmann::json;

constexpr double kScreenTimeoutS = 30;
constexpr uint64_t kScreenMaxRssBytes = uint64_t{2048} << 20;

// One finding or note as a compiler-style line: `CAND.py:LINE: what`.
std::string Located(const std::string& path, const json& line, const std::string& what) {
  std::string out = path;
  if (line.is_number_integer()) out += ":" + std::to_string(line.get<int>());
  return out + ": " + what + "\n";
}

std::string Summary(const std::string& path, const json& screen) {
  std::string out;
  int rejects = 0, warns = 0;
  for (const auto& f : screen.value("findings", json::array())) {
    std::string severity = f.value("severity", "?");
    (severity == "reject" ? rejects : warns)++;
    out += Located(path, f["line"], severity + " [" + f.value("rule", "?") + "] " + f.value("message", ""));
  }
  for (const auto& n : screen.value("notes", json::array()))
    out += Located(path, n["line"], "note: " + n.value("message", ""));
  out += path + ": " + screen.value("verdict", "?") + " (" + std::to_string(rejects) + " reject, " +
         std::to_string(warns) + " warn; policy " + screen.value("policy", "?") + ", backend " +
         screen.value("backend", "?") + ")\n";
  return out;
}

class ScreenCommandImpl : public Command {
 public:
  ScreenCommandImpl(CLI::App& app, std::string argv0) : argv0_(std::move(argv0)) {
    auto* c = app.add_subcommand("screen", "Statically screen candidates for integrity rule violations");
    c->add_option("candidates", files_, "Candidate files (ModelNew)")->required();
    c->add_option("--backend", backend_, "cuda or triton (default: detected from the candidate)")
        ->check(CLI::IsMember({"cuda", "triton"}));
    c->add_option("--policy", policy_, "strict (default) or kernelbench")
        ->check(CLI::IsMember({"strict", "kernelbench"}));
    c->add_flag("--json", json_, "Print each screen result as one JSON object a line");
    cmd_ = c;
  }

  int Run() override {
    if (!cmd_->parsed()) return verify::kExitUsage;
    std::vector<std::string> backends;
    for (const auto& path : files_) {
      std::string text, err;
      if (!util::ReadFile(path, &text, &err)) {
        std::cerr << "kz screen: cannot read " << err << "\n";
        return verify::kExitUsage;
      }
      backends.push_back(backend_.empty() ? verify::DetectBackend(text) : backend_);
    }
    worker::WorkerConfig config = worker::LocateWorker(argv0_);
    bool rejected = false, failed = false;
    for (size_t i = 0; i < files_.size(); ++i) {
      json screen;
      if (!Screen(config, files_[i], backends[i], &screen)) {
        failed = true;
        continue;
      }
      rejected |= screen.value("verdict", "") != "pass";
      std::cout << (json_ ? screen.dump() + "\n" : Summary(files_[i], screen)) << std::flush;
    }
    if (failed) return verify::kExitInternal;
    return rejected ? verify::ExitCode(verify::Status::kRejected) : 0;
  }

 private:
  // Runs the worker op; on failure says why on stderr and returns false.
  bool Screen(const worker::WorkerConfig& config, const std::string& path, const std::string& backend, json* screen) {
    worker::WorkerCall call;
    call.request = {
        {"op", "screen"}, {"candidate_path", util::AbsolutePath(path)}, {"backend", backend}, {"policy", policy_}};
    call.env = {{"CUDA_VISIBLE_DEVICES", ""}};
    call.wall_limit_s = kScreenTimeoutS;
    call.max_rss_bytes = kScreenMaxRssBytes;
    worker::WorkerReply reply = worker::RunWorker(config, call);
    std::string why;
    if (!reply.protocol_error.empty())
      why = reply.protocol_error;
    else if (!reply.result)
      why = "the worker " + worker::DescribeEnd(reply.process) + " without a result";
    else if (!reply.result->value("ok", false) || !(*reply.result)["screen"].is_object())
      why = reply.result->value("error", json::object()).dump();
    if (!why.empty()) {
      std::cerr << "kz screen: " << path << ": " << why << "\n";
      if (!reply.process.stderr_tail.empty()) std::cerr << reply.process.stderr_tail << "\n";
      return false;
    }
    *screen = (*reply.result)["screen"];
    (*screen)["candidate"] = {{"path", util::AbsolutePath(path)}};
    return true;
  }

  std::string argv0_;
  CLI::App* cmd_ = nullptr;
  std::vector<std::string> files_;
  std::string backend_, policy_ = "strict";
  bool json_ = false;
};
}  // namespace

std::unique_ptr<Command> AddScreenCommand(CLI::App& app, const std::string& argv0) {
  return std::make_unique<ScreenCommandImpl>(app, argv0);
}

}  // namespace kz::cli
