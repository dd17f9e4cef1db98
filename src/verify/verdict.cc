#include "verify/verdict.h"

#include "util/fs.h"
#include "util/hash.h"

namespace kz::verify {
using nlohmann::json;

json NewVerdict(const Sample& sample, const std::string& backend, const std::string& task_text,
                const std::string& candidate_text) {
  return {
      {"schema", kVerdictSchema},
      {"status", "not_run"},
      {"reason", ""},
      {"backend", backend},
      {"task", {{"path", util::AbsolutePath(sample.task_path)}, {"xxh128", util::Hash128Hex(task_text)}}},
      {"candidate",
       {{"path", util::AbsolutePath(sample.candidate_path)}, {"xxh128", util::Hash128Hex(candidate_text)}}},
      {"device", json::object()},
      {"checked",
       {{"compiled", false}, {"ran", false}, {"correctness", false}, {"trace", false}, {"timing", false}}},
      {"not_checked", json::array()},
      {"stages", json::object()},
      {"error", nullptr},
  };
}

void SetOutcome(json& verdict, Status status, const std::string& reason,
                const std::string& error_kind, const std::string& error_message) {
  verdict["status"] = std::string(StatusName(status));
  verdict["reason"] = reason;
  if (!error_kind.empty())
    verdict["error"] = {{"kind", error_kind}, {"message", error_message.empty() ? reason : error_message}};
}

Status VerdictStatus(const json& verdict) {
  return ParseStatus(verdict.value("status", "")).value_or(Status::kRuntimeError);
}

namespace {
// The child died without a result: say what killed it and how far it had got.
void ApplyDeath(json& v, const worker::WorkerReply& reply) {
  const auto& p = reply.process;
  std::string how = "the verification process " + worker::DescribeEnd(p);
  std::string last_stage = "start";
  for (const auto& e : reply.events) last_stage = e.value("stage", last_stage);
  std::string where = " (last completed stage: " + last_stage + ")";
  switch (p.end) {
    case util::ProcessEnd::kTimedOut:
      SetOutcome(v, Status::kTimeout, how + where, "timeout");
      break;
    case util::ProcessEnd::kMemoryExceeded:
      SetOutcome(v, Status::kRuntimeError, how + where, "memory_limit");
      break;
    case util::ProcessEnd::kSignaled:
      SetOutcome(v, Status::kRuntimeError, how + where, "crash");
      break;
    default: {
      std::string extra = reply.protocol_error.empty() ? "" : ": " + reply.protocol_error;
      SetOutcome(v, Status::kRuntimeError, how + " without a result" + extra + where, "crash");
    }
  }
  v["error"]["stderr_tail"] = p.stderr_tail.substr(p.stderr_tail.size() > 2000 ? p.stderr_tail.size() - 2000 : 0);
}

// "<stage>: <why>" for a stage that was not checked: the stage's own reason if it gave
// one, else what stopped it (no GPU, correctness).
std::string WhyNotChecked(const json& st, const std::string& stage, bool on_gpu, const std::string& corr) {
  std::string why = !on_gpu ? "no GPU" : corr != "pass" ? "correctness did not pass" : stage + " skipped";
  if (st.contains(stage) && st[stage].is_object() && st[stage].contains("reason") &&
      st[stage]["reason"].is_string())
    why = st[stage]["reason"].get<std::string>();
  return stage + ": " + why;
}

// One not_checked line per extra check (docs/verdict.md, stages.extra_checks) that did
// not run ("<check>: <reason>") or ran on part of what it meant to check
// ("<check>: <partial>"). Without the stage, one line saying why it is absent, unless
// integrity is off (that has its own line).
void ExtraChecksNotChecked(const json& v, const std::string& corr, json& nc) {
  const json& st = v["stages"];
  if (!st.contains("extra_checks") || !st["extra_checks"].is_object()) {
    if (v.value("policy", "") == "none") return;
    nc.push_back(corr == "pass"   ? "extra_checks: did not complete (" + v.value("status", "") + ")"
                 : corr == "fail" ? std::string("extra_checks: correctness did not pass")
                 : corr.empty()   ? std::string("extra_checks: correctness did not run")
                                  : std::string("extra_checks: correctness did not complete"));
    return;
  }
  const json& checks = st["extra_checks"].value("checks", json::array());
  if (!checks.is_array()) return;
  for (const auto& c : checks) {
    if (!c.is_object() || !c.value("check", json()).is_string()) continue;
    std::string name = c["check"].get<std::string>();
    auto text = [&](const char* key) {
      return c.value(key, json()).is_string() ? c[key].get<std::string>() : std::string();
    };
    if (c.value("ran", json()).is_boolean() && !c["ran"].get<bool>()) {
      std::string why = text("reason");
      nc.push_back(name + ": " + (why.empty() ? "did not run" : why));
    } else if (!text("partial").empty()) {
      nc.push_back(name + ": " + text("partial"));
    }
  }
}
}  // namespace

void ApplyRunReply(json& v, const worker::WorkerReply& reply) {
  for (const auto& e : reply.events)
    if (e.contains("stage") && e.contains("data")) v["stages"][e["stage"].get<std::string>()] = e["data"];
  const auto& p = reply.process;
  v["output"] = {{"stdout_tail", p.stdout_tail}, {"stderr_tail", p.stderr_tail},
                 {"stdout_bytes", p.stdout_bytes}, {"stderr_bytes", p.stderr_bytes}};
  v["child"] = {{"end", util::ProcessEndName(p.end)},
                {"exit_code", p.end == util::ProcessEnd::kExited ? json(p.exit_code) : json(nullptr)},
                {"signal", p.end == util::ProcessEnd::kSignaled ? json(util::SignalName(p.signal)) : json(nullptr)},
                {"wall_s", p.wall_s},
                {"peak_rss_mib", p.peak_rss_bytes >> 20}};
  if (!reply.result || p.end == util::ProcessEnd::kTimedOut || p.end == util::ProcessEnd::kMemoryExceeded) {
    ApplyDeath(v, reply);
    return;
  }
  const json& r = *reply.result;
  auto status = ParseStatus(r.value("status", ""));
  if (!status || *status == Status::kTimeout) {
    SetOutcome(v, Status::kRuntimeError, "the worker returned an invalid status", "worker_internal");
    return;
  }
  v["status"] = std::string(StatusName(*status));
  v["reason"] = r.value("reason", "");
  v["error"] = r.contains("error") ? r["error"] : json(nullptr);
  if (r.contains("stages") && r["stages"].is_object())
    for (auto& [k, s] : r["stages"].items()) v["stages"][k] = s;
  if (r.contains("device")) v["device"] = r["device"];
  if (r.contains("profile") && r["profile"].is_object()) v["profile"] = r["profile"];  // docs/memory.md
}

void FinishChecks(json& v, bool on_gpu) {
  const json& st = v["stages"];
  auto stage_status = [&](const char* name) {
    return st.contains(name) && st[name].is_object() ? st[name].value("status", "") : std::string();
  };
  bool cuda = v.value("backend", "") == "cuda";
  json& c = v["checked"];
  c["compiled"] = cuda && stage_status("compile") == "ok";
  c["ran"] = st.contains("correctness");
  std::string corr = stage_status("correctness");
  c["correctness"] = corr == "pass" || corr == "fail";
  c["timing"] = stage_status("timing") == "ok";
  json& nc = v["not_checked"];
  nc = json::array();
  if (!c["correctness"].get<bool>()) {
    std::string status = v.value("status", "");
    nc.push_back(status == "not_run" && cuda && !on_gpu ? "correctness: CUDA candidates need a GPU"
                 : c["ran"].get<bool>()                 ? "correctness: did not complete (" + status + ")"
                                                        : "correctness: did not run (" + status + ")");
  }
  // The launch trace (docs/trace.md) is checked when its rules were evaluated.
  std::string trace = stage_status("trace");
  c["trace"] = trace == "pass" || trace == "reject";
  if (!c["trace"].get<bool>()) nc.push_back(WhyNotChecked(st, "trace", on_gpu, corr));
  if (!c["timing"].get<bool>()) nc.push_back(WhyNotChecked(st, "timing", on_gpu, corr));
  ExtraChecksNotChecked(v, corr, nc);
  json flags = json::array();
  if (st.contains("extra_checks") && st["extra_checks"].value("weak_task", json()).is_string())
    flags.push_back("weak_task: " + st["extra_checks"]["weak_task"].get<std::string>());
  v["flags"] = flags;
  if (v.value("policy", "") == "none")
    nc.push_back("integrity: off (--no-integrity): no screen, trace, dataflow, extra inputs, "
                 "timed recheck or host cross-check");
  if (!on_gpu && !cuda && c["ran"].get<bool>())
    nc.push_back("gpu execution: the Triton kernel ran under TRITON_INTERPRET=1 on the CPU");
  if (v.value("self_check", false))
    nc.push_back("screen: self-check (the reference is its own candidate)");
}

}  // namespace kz::verify
