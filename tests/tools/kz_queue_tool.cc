// kz_queue_tool: a test-only front for the Redis job queue (tests/e2e/worker_redis.sh).
//   enqueue --queue URL --id-prefix P --count N [--start K] TASK CAND [TASK CAND ...]
//       enqueues jobs P-K .. P-(K+N-1); job i gets pair i % pairs. Retries while Redis is away.
//   collect --queue URL --expect N --out FILE [--timeout S]
//       runs the verdict reader until N distinct job ids were delivered (or the timeout),
//       appending one JSON line per delivery to FILE; exit 0 iff N distinct, 0 duplicates.
#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "queue/job_queue.h"
#include "util/fs.h"
#include "util/log.h"

namespace {
using namespace kz::queue;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

int Enqueue(QueueConfig q, const std::string& prefix, int start, int count, const std::vector<std::string>& files) {
  std::string err;
  auto queue = RedisJobQueue::Open(q, &err);
  if (!queue || files.empty() || files.size() % 2) return std::cerr << "enqueue: " << err << " (need TASK CAND pairs)\n", 2;
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i = 0; i < files.size(); i += 2) {
    std::string task, cand;
    if (!kz::util::ReadFile(files[i], &task, &err) || !kz::util::ReadFile(files[i + 1], &cand, &err))
      return std::cerr << "enqueue: " << err << "\n", 2;
    pairs.emplace_back(task, cand);
  }
  int added = 0, dups = 0;
  for (int i = start; i < start + count; ++i) {
    const auto& [task, cand] = pairs[static_cast<size_t>(i) % pairs.size()];
    Job job{prefix + "-" + std::to_string(i), task, cand, "", "{}"};
    std::string entry;
    EnqueueResult r;
    while ((r = queue->Enqueue(job, &entry, &err)) == EnqueueResult::kError) {
      std::cerr << "enqueue: " << err << " (retrying)\n";
      std::this_thread::sleep_for(std::max(queue->RetryDelay(), std::chrono::milliseconds(100)));
    }
    (r == EnqueueResult::kEnqueued ? added : dups)++;
  }
  std::cout << "enqueued=" << added << " duplicates=" << dups << "\n";
  return 0;
}

int Collect(QueueConfig q, size_t expect, const std::string& out_path, double timeout_s) {
  std::string err;
  auto queue = RedisJobQueue::Open(q, &err);
  if (!queue) return std::cerr << "collect: " << err << "\n", 2;
  std::ofstream out(out_path, std::ios::app);
  std::map<std::string, int> seen;
  size_t deliveries = 0;
  auto t0 = Clock::now();
  auto deadline = t0 + std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  while (seen.size() < expect && Clock::now() < deadline) {
    int n = queue->ReadVerdicts("collector", [&](const Verdict& v) {
      json verdict = json::parse(v.verdict_json, nullptr, false);
      std::string status = verdict.is_object() ? verdict.value("status", "-") : "-";
      bool prestarted = verdict.is_object() && verdict.contains("child") && verdict["child"].is_object() &&
                        verdict["child"].value("prestarted", false);
      out << json{{"id", v.job_id}, {"state", ToString(v.state)}, {"status", status}, {"worker", v.worker},
                  {"prestarted", prestarted}}.dump()
          << "\n" << std::flush;
      ++deliveries;
      ++seen[v.job_id];
      return true;
    }, std::chrono::milliseconds(1000), &err);
    if (n < 0) {
      std::cerr << "collect: " << err << " (retrying)\n";
      std::this_thread::sleep_for(std::max(queue->RetryDelay(), std::chrono::milliseconds(100)));
    }
  }
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  size_t dups = deliveries - seen.size();
  std::cout << "delivered=" << deliveries << " unique=" << seen.size() << " expected=" << expect
            << " duplicates=" << dups << " seconds=" << secs << "\n";
  return seen.size() == expect && dups == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kz_queue_tool — test front for the Redis job queue"};
  app.require_subcommand(1);
  QueueConfig q;
  std::string prefix, out;
  int start = 0, count = 1;
  size_t expect = 0;
  double timeout_s = 300;
  std::vector<std::string> files;
  auto* enq = app.add_subcommand("enqueue", "Enqueue jobs");
  auto* col = app.add_subcommand("collect", "Collect verdicts");
  for (auto* c : {enq, col}) {
    c->add_option("--queue", q.url, "redis://HOST:PORT[/DB]")->required();
    c->add_option("--prefix", q.prefix, "Key prefix");
  }
  enq->add_option("--id-prefix", prefix, "Job id prefix")->required();
  enq->add_option("--start", start, "First job index");
  enq->add_option("--count", count, "Jobs to enqueue");
  enq->add_option("files", files, "TASK CAND pairs")->required();
  col->add_option("--expect", expect, "Distinct job ids to wait for")->required();
  col->add_option("--out", out, "JSONL file of deliveries")->required();
  col->add_option("--timeout", timeout_s, "Seconds at most");
  CLI11_PARSE(app, argc, argv);
  kz::util::SetLogLevel(kz::util::LogLevel::kInfo);
  return enq->parsed() ? Enqueue(q, prefix, start, count, files) : Collect(q, expect, out, timeout_s);
}
