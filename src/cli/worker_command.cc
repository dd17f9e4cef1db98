#include "cli/commands.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <thread>

#include "cli/stop_signals.h"
#include "cli/verifier_flags.h"
#include "queue/queue_worker.h"
#include "util/fs.h"
#include "verify/device.h"
#include "verify/status.h"

namespace kz::cli {
namespace {

constexpr const char* kNameChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-";

std::string DefaultName() {
  char host[256] = "host";
  gethostname(host, sizeof host - 1);
  std::string name = host;
  for (char& ch : name)
    if (std::string_view(kNameChars).find(ch) == std::string_view::npos) ch = '_';
  return name.substr(0, 48) + "-" + std::to_string(getpid());
}

class WorkerCommandImpl : public Command {
 public:
  WorkerCommandImpl(CLI::App& app, std::string argv0) : argv0_(std::move(argv0)) {
    auto* c = app.add_subcommand("worker", "Verify jobs from a Redis Streams queue (docs/queue.md)");
    c->add_option("--queue", q_.url, "Redis URL: redis://HOST:PORT[/DB]")->required();
    c->add_option("--name", name_, "Consumer name, unique among live workers (default HOST-PID)");
    c->add_option("--prefix", q_.prefix, "Key prefix of the queue's streams")->capture_default_str();
    auto* gpu = c->add_option("--gpu", gpu_, "GPU index to run on (default: the first GPU, else the CPU)");
    c->add_flag("--cpu", o_.cpu_only, "Never use a GPU, even if one is present")->excludes(gpu);
    c->add_option("--reclaim-after", reclaim_s_,
                  "Seconds a claimed job may go without a heartbeat before other workers take it over")
        ->capture_default_str()
        ->check(CLI::Range(0.5, 86400.0));
    c->add_option("--max-deliveries", max_deliveries_,
                  "A job handed out more often than this fails (it keeps killing workers)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    c->add_option("--gpu-concurrency", o_.gpu_concurrency,
                  "Consumers in this process sharing the GPU through its gate: correctness stages at once, timing "
                  "exclusive (default 1; docs/throughput.md); named NAME.0 .. NAME.K-1")
        ->check(CLI::Range(1, 64));
    c->add_flag("--no-prestart", no_prestart_,
                "Start each run child when its job arrives (default: the next child is started ahead, torch imported)");
    AddVerifierOptions(c, &o_, &sandbox_, {"require", "Default integrity policy: strict or kernelbench"});
    cmd_ = c;
  }

  int Run() override {
    if (!cmd_->parsed()) return verify::kExitUsage;
    std::string err;
    if (!queue::ParseRedisUrl(q_.url, &url_, &err)) return Usage(err);
    auto gpus = o_.cpu_only ? std::vector<verify::Gpu>{} : verify::DetectGpus();
    if (gpu_) {
      std::erase_if(gpus, [&](const verify::Gpu& g) { return g.index != *gpu_; });
      if (gpus.empty()) return Usage("no GPU with index " + std::to_string(*gpu_));
    }
    if (gpus.size() > 1) gpus.resize(1);  // one job at a time, on one GPU
    FinishOptions();
    if (name_.size() > 64 || name_.find_first_not_of(kNameChars) != std::string::npos)
      return Usage("--name must be 1..64 of [A-Za-z0-9._-] (it names the work directory)");
    worker::WorkerConfig child = worker::LocateWorker(argv0_);
    if (!ApplySandbox(sandbox_, o_.cache_dir, &child, &err)) return Usage(err);
    const int k = o_.gpu_concurrency;
    std::shared_ptr<verify::GateHub> gate;  // 10 % of the GPU's memory kept back, as kz verify
    if (k > 1) gate = std::make_shared<verify::GateHub>(gpus.empty() ? 0 : gpus.front().memory_bytes / 10 * 9, k);
    std::vector<std::unique_ptr<queue::QueueWorker>> workers;
    for (int i = 0; i < k; ++i) {
      std::string name = k == 1 ? name_ : name_ + "." + std::to_string(i);
      queue::QueueWorker::Config config{q_, name, child, o_, gpus, o_.cache_dir + "/worker/" + name};
      config.max_deliveries = max_deliveries_;
      config.prestart = !no_prestart_;
      config.gate = gate;
      workers.push_back(std::make_unique<queue::QueueWorker>(std::move(config)));
    }
    std::vector<int> rcs(workers.size(), 0);
    {  // on SIGINT/SIGTERM: stop the workers (running jobs are cancelled, left for others to reclaim)
      StopSignals signals([&] {
        for (auto& w : workers) w->Stop();
      });
      std::vector<std::thread> loops;
      for (size_t i = 1; i < workers.size(); ++i) loops.emplace_back([&, i] { rcs[i] = workers[i]->Run(); });
      rcs[0] = workers[0]->Run();
      for (auto& t : loops) t.join();
    }  // the signal thread is woken and joined
    return *std::max_element(rcs.begin(), rcs.end());
  }

 private:
  SandboxFlags sandbox_;
  void FinishOptions() {
    o_.device = gpu_;
    FinishVerifierOptions(&o_);
    if (name_.empty()) name_ = DefaultName();
    q_.reclaim_after = std::chrono::milliseconds(static_cast<int64_t>(reclaim_s_ * 1000));
  }

  int Usage(const std::string& msg) { return UsageError("kz worker", msg); }

  std::string argv0_;
  CLI::App* cmd_ = nullptr;
  queue::QueueConfig q_;
  queue::RedisUrl url_;
  std::string name_;
  std::optional<int> gpu_;
  double reclaim_s_ = 60;
  int64_t max_deliveries_ = 5;
  bool no_prestart_ = false;
  verify::VerifyOptions o_ = ServiceVerifyDefaults();
};
}  // namespace

std::unique_ptr<Command> AddWorkerCommand(CLI::App& app, const std::string& argv0) {
  return std::make_unique<WorkerCommandImpl>(app, argv0);
}

}  // namespace kz::cli
