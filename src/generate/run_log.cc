#include "generate/run_log.h"

#include <algorithm>
#include <sstream>
#include <tuple>
#include <vector>

#include "scoring/generations.h"
#include "util/fs.h"

namespace kz::generate {
using nlohmann::json;

json CommonRecord(const SampleOutcome& s) {
  const Extraction& x = s.extraction;
  json j = {{"sample", s.sample},
            {"code", x.code},
            {"output_tokens", s.choice->completion_tokens},
            {"tokens",
             {{"prompt", s.usage->prompt_tokens},
              {"completion", s.choice->completion_tokens},
              {"reasoning", s.usage->reasoning_tokens}}},
            {"finish_reason", s.choice->finish_reason},
            {"latency_s", s.latency_s},
            {"attempts", s.attempts},
            {"model", s.model},
            {"prompt", s.prompt_name},
            {"prompt_xxh", s.prompt_xxh},
            {"reason", x.reason ? json(ReasonName(*x.reason)) : json(nullptr)}};
  if (x.reason) j["reply"] = scoring::ReplaceInvalidUtf8(s.choice->text);  // for a look at what went wrong
  if (!s.backend.empty()) j["backend"] = s.backend;
  return j;
}

json SampleRecord(const scoring::SuiteTask& task, const SampleOutcome& s) {
  json j = CommonRecord(s);
  j["format"] = "kz.generation/1";
  j["task"] = task.id;
  j["level"] = task.level;
  j["problem"] = task.problem;
  return j;
}

std::string KernelFileName(int level, int problem, int sample) {
  return "level_" + std::to_string(level) + "_problem_" + std::to_string(problem) + "_sample_" +
         std::to_string(sample) + "_kernel.py";
}

LoadedRun LoadRun(const std::string& path, const RunFormat& format) {
  LoadedRun out;
  std::string text, err;
  if (!util::ReadFile(path, &text, &err)) return out;
  if (!text.empty() && text.back() != '\n') {  // torn by a kill; VerdictLog::Open cuts it
    ++out.ignored_lines;
    size_t nl = text.rfind('\n');
    text.erase(nl == std::string::npos ? 0 : nl + 1);
  }
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json r = json::parse(line, nullptr, false);
    const std::string& key = format.key_field;
    bool ok = !r.is_discarded() && r.is_object() && r.value("format", "") == format.format && r.contains(key) &&
              r[key].is_string() && r.contains("sample") && r["sample"].is_number_integer();
    if (!ok) {
      ++out.ignored_lines;
      continue;
    }
    out.records.emplace(std::make_pair(r[format.key_field].get<std::string>(), r["sample"].get<int>()), std::move(r));
  }
  return out;
}

bool RewriteSorted(const std::string& path, const LoadedRun& run, std::string* err) {
  // The map's order is (key, sample): a stable sort by (level, problem) keeps it within a task.
  std::vector<const json*> rows;
  for (const auto& [key, r] : run.records) rows.push_back(&r);
  auto key = [](const json* r) { return std::make_tuple(r->value("level", 0), r->value("problem", 0)); };
  std::stable_sort(rows.begin(), rows.end(), [&](const json* a, const json* b) { return key(a) < key(b); });
  std::string text;
  for (const json* r : rows) text += r->dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  return util::WriteFileAtomic(path, text, err);
}

json RunTotals(const LoadedRun& run) {
  long prompt = 0, completion = 0, reasoning = 0, with_code = 0;
  double latency = 0;
  json reasons = json::object();
  for (const auto& [key, r] : run.records) {
    const json t = r.value("tokens", json::object());
    prompt += t.value("prompt", 0L);
    completion += t.value("completion", 0L);
    reasoning += t.value("reasoning", 0L);
    latency += r.value("latency_s", 0.0);
    if (r.contains("reason") && r["reason"].is_string())
      reasons[r["reason"].get<std::string>()] = reasons.value(r["reason"].get<std::string>(), 0) + 1;
    else
      ++with_code;
  }
  size_t n = run.records.size();
  return {{"samples", n}, {"with_code", with_code}, {"reasons", reasons},
          {"tokens", {{"prompt", prompt}, {"completion", completion}, {"reasoning", reasoning}}},
          {"mean_output_tokens", n ? static_cast<double>(completion) / n : 0.0},
          {"mean_latency_s", n ? latency / n : 0.0}};
}

}  // namespace kz::generate
