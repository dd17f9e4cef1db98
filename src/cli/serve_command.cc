#include "cli/commands.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <thread>

#include "cli/stop_signals.h"
#include "cli/verifier_flags.h"
#include "service/api_server.h"
#include "service/scheduler.h"
#include "store/job_store.h"
#include "util/fs.h"
#include "util/log.h"
#include "verify/sample.h"
#include "verify/status.h"

namespace kz::cli {
namespace {

class ServeCommandImpl : public Command {
 public:
  ServeCommandImpl(CLI::App& app, std::string argv0) : argv0_(std::move(argv0)) {
    auto* c = app.add_subcommand("serve", "Serve the verifier over HTTP (docs/api.md)");
    c->add_option("--host", host_, "Address to listen on")->capture_default_str();
    c->add_option("--port", port_, "Port to listen on")->capture_default_str()->check(CLI::Range(1, 65535));
    c->add_option("--db", db_, "SQLite results store (default <cache-dir>/serve/jobs.db)");
    c->add_option("--max-queue", max_queue_, "Queued jobs at most; more get 429")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    c->add_option("--max-body-bytes", limits_.max_body_bytes, "Largest /v1/verify body; larger get 413")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    c->add_option("--max-batch", limits_.max_batch_samples, "Most samples in one /v1/batch; more get 413")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    c->add_option("--max-batch-bytes", limits_.max_batch_bytes, "Largest /v1/batch body; larger get 413")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    c->add_option("--wait-timeout", wait_s_, "Seconds a ?wait=true request waits at most")->capture_default_str();
    c->add_option("--shutdown-grace", shutdown_grace_s_,
                  "SIGINT/SIGTERM: seconds the running jobs get to finish; then they are killed and run "
                  "again at the next start")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    c->add_option("--device", device_, "Use only this GPU (one slot); default: every GPU, one slot each");
    c->add_option("--gpus", gpu_list_, "Use only these GPU indexes, one slot each (e.g. 0,1,3)")
        ->delimiter(',')
        ->excludes("--device");
    c->add_option("--cpu-slots", cpu_slots_, "CPU mode: samples run at once")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    c->add_option("--gpu-concurrency", o_.gpu_concurrency,
                  "Slots per GPU sharing it through its gate: correctness stages at once, timing exclusive "
                  "(default 1; docs/throughput.md). In CPU mode the --cpu-slots share one gate")
        ->check(CLI::Range(1, 64));
    c->add_option("--build-threads", build_threads_,
                  "Samples screened and compiled at once, ahead of the slots (default: max(2, cores / 4))")
        ->check(CLI::Range(1, 256));
    c->add_option("--queue", queue_url_,
                  "Run jobs on `kz worker`s through Redis Streams at redis://HOST:PORT[/DB] (docs/queue.md); "
                  "default: in this process");
    c->add_option("--queue-prefix", queue_prefix_, "Key prefix in Redis")->capture_default_str();
    c->add_flag("--no-prestart", no_prestart_,
                "Start each run child when its sample arrives (default: each slot keeps its next child "
                "started, torch imported)");
    c->add_option("--child-priority", child_priority_,
                  "CPU priority of verification children against the HTTP threads: idle (SCHED_IDLE), "
                  "nice (+10) or normal")
        ->check(CLI::IsMember({"idle", "nice", "normal"}));
    c->add_flag("--no-run", no_run_, "Accept and store jobs but run none (load tests; they stay queued)");
    c->add_flag("--cpu", o_.cpu_only, "Never use a GPU, even if one is present");
    AddTimingCiOption(c, &o_.timing_ci_rel, "the default of requests (their option timing_ci overrides it)");
    AddVerifierOptions(c, &o_, &sandbox_, {"require", "Default integrity policy: strict or kernelbench"});
    cmd_ = c;
  }

  int Run() override {
    if (!cmd_->parsed()) return verify::kExitUsage;
    FinishOptions();
    auto gpus = o_.cpu_only ? std::vector<verify::Gpu>{} : verify::DetectGpus();
    if (device_) gpu_list_ = {*device_};
    if (!gpu_list_.empty()) {
      for (int want : gpu_list_)
        if (std::none_of(gpus.begin(), gpus.end(), [&](const verify::Gpu& g) { return g.index == want; }))
          return Usage("no GPU with index " + std::to_string(want) + " (" + std::to_string(gpus.size()) + " found)");
      std::erase_if(gpus, [&](const verify::Gpu& g) {
        return std::find(gpu_list_.begin(), gpu_list_.end(), g.index) == gpu_list_.end();
      });
    }
    std::string err;
    if (!util::MakeDirs(std::filesystem::path(db_).parent_path().string(), &err)) return Usage(err);
    auto store = store::JobStore::Open(db_, &err);
    if (!store) return Usage(err);
    service::Scheduler::Config config;
    config.worker = worker::LocateWorker(argv0_);
    // Verification children yield the CPU to the HTTP threads (submit latency, docs/api.md).
    config.worker.nice = child_priority_ == "nice" ? 10 : 0;
    config.worker.idle_class = child_priority_ == "idle";
    if (!ApplySandbox(sandbox_, o_.cache_dir, &config.worker, &err)) return Usage(err);
    config.base = o_;
    config.gpus = gpus;
    config.cpu_slots = cpu_slots_;
    config.build_threads = build_threads_;
    config.work_dir = db_ + ".work";
    config.max_queue = max_queue_;
    config.run_jobs = !no_run_;
    config.prestart = !no_prestart_;
    config.shutdown_grace_s = shutdown_grace_s_;
    config.remote.url = queue_url_;
    config.remote.prefix = queue_prefix_;
    service::Scheduler scheduler(store.get(), config);
    service::ApiServer api(&scheduler, limits_);
    if (!api.Bind(host_, port_, &err)) return Usage(err);
    if (!scheduler.Start(&err)) return Usage(err);
    {  // on SIGINT/SIGTERM: drain the scheduler (so ?wait=true handlers return), stop the listener
      StopSignals signals([&] {
        scheduler.Drain();
        api.Stop();
      });
      util::LogInfo("serve: listening on http://" + host_ + ":" + std::to_string(port_) + " (" +
                    (queue_url_.empty() ? std::to_string(scheduler.Slots()) + (gpus.empty() ? " CPU" : " GPU") +
                                              " slot(s), " + std::to_string(build_threads_) + " build thread(s)"
                                        : "jobs to kz workers via " + queue_url_) +
                    ", store " + db_ + ")");
      api.Serve();
      util::LogInfo("serve: stopped accepting; finishing the running jobs (at most " +
                    std::to_string(static_cast<int>(shutdown_grace_s_)) + " s)");
      scheduler.Stop();
    }  // the signal thread is woken and joined
    util::LogInfo("serve: shut down");
    return 0;
  }

 private:
  SandboxFlags sandbox_;
  void FinishOptions() {
    o_.device = device_;
    FinishVerifierOptions(&o_);
    if (build_threads_ == 0) build_threads_ = std::max(2u, std::thread::hardware_concurrency() / 4);
    if (db_.empty()) db_ = o_.cache_dir + "/serve/jobs.db";
    db_ = util::AbsolutePath(db_);
    limits_.wait_timeout = std::chrono::milliseconds(static_cast<int64_t>(wait_s_ * 1000));
  }

  int Usage(const std::string& msg) { return UsageError("kz serve", msg); }

  std::string argv0_;
  CLI::App* cmd_ = nullptr;
  std::string host_ = "127.0.0.1", db_;
  int port_ = 8470;
  size_t max_queue_ = 4096;
  bool no_run_ = false, no_prestart_ = false;
  std::string child_priority_ = "nice";
  double wait_s_ = 600;
  double shutdown_grace_s_ = 20;
  std::optional<int> device_;
  std::vector<int> gpu_list_;
  std::string queue_url_, queue_prefix_ = "kz";
  size_t cpu_slots_ = 1, build_threads_ = 0;
  service::ApiLimits limits_;
  verify::VerifyOptions o_ = ServiceVerifyDefaults();
};
}  // namespace

std::unique_ptr<Command> AddServeCommand(CLI::App& app, const std::string& argv0) {
  return std::make_unique<ServeCommandImpl>(app, argv0);
}

}  // namespace kz::cli
