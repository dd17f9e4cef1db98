#include "scoring/remote_run.h"

#include <algorithm>
#include <iostream>
#include <map>

#include "scoring/http.h"
#include "scoring/remote.h"
#include "util/fs.h"

namespace kz::scoring {
using nlohmann::json;

namespace {
// The job options sent with each sample to kz serve: only what was asked for, so that
// the server's defaults apply otherwise.
json JobOptions(const BenchOptions& o) {
  json opts = json::object();
  if (o.trials_given) opts["trials"] = o.verify.trials;
  if (o.policy_given) opts["policy"] = o.verify.policy;
  return opts;
}
}  // namespace

bool KzServeBackend::Check(const BenchOptions& o, bool* usage, std::string* err) {
  HttpUrl url;
  if (!ParseHttpUrl(o.server, &url, err)) return *usage = true, false;
  json health;
  RemoteOptions probe;
  probe.url = o.server;
  probe.request_timeout_s = 15;
  if (!RemoteVerifier(probe).Check(&health, err)) return false;
  std::cerr << "kz bench: verifying through kz serve at " << o.server << " (device " << health.value("device", "?")
            << ", queue depth " << health.value("queue_depth", 0) << ")\n";
  return true;
}

bool KzServeBackend::VerifyAll(const BenchOptions& o, const std::vector<RemoteJob>& jobs,
                               const std::function<void(size_t, const json&, const json&)>& on_done,
                               const std::function<void(const std::string&)>& note, std::string* err) {
  std::map<std::string, std::string> task_sources;
  for (const auto& j : jobs) {
    auto [src, fresh] = task_sources.try_emplace(j.task_path);
    if (fresh && !util::ReadFile(j.task_path, &src->second, err)) return false;
  }
  std::vector<RemoteSample> samples;
  for (const auto& j : jobs) samples.push_back({&task_sources[j.task_path], j.code, j.backend});
  RemoteOptions ro;
  ro.url = o.server;
  ro.client = o.client;
  ro.job_options = JobOptions(o);
  ro.batch = o.batch;
  ro.window = std::max(4 * o.batch, 16);
  ro.note = note;
  RemoteVerifier remote(ro);
  return remote.VerifyAll(samples, [&](size_t i, const RemoteOutcome& out) {
    json server = {{"url", o.server}, {"job", out.job_id.empty() ? json(nullptr) : json(out.job_id)},
                   {"deduplicated", out.deduplicated}};
    on_done(i, out.verdict, server);
  }, err);
}

}  // namespace kz::scoring
