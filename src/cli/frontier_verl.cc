#include "cli/frontier_verl.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "generate/prompt.h"
#include "util/fs.h"
#include "util/subprocess.h"
#include "verify/status.h"

namespace kz::cli {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

int Fail(const std::string& what) { return UsageError("kz frontier export", what); }

// $KZ_PYTHON, else the project venv's python beside the prompts' tree, else python3.
std::string Python(const fs::path& root) {
  if (const char* p = std::getenv("KZ_PYTHON"); p && *p) return p;
  std::error_code ec;
  if (fs::exists(root / ".venv/bin/python", ec)) return (root / ".venv/bin/python").string();
  return "python3";
}

json Row(const curriculum::PoolEntry& e, size_t index, const std::string& prompt) {
  json info = {{"index", index},           {"id", e.id},
               {"hash", e.module.hash},    {"api_set", e.module.api_set},
               {"status", e.status},       {"attempts", e.attempts},
               {"successes", e.successes}, {"p_hat", e.p_hat ? json(*e.p_hat) : json(nullptr)},
               {"split", "train"}};
  return {{"data_source", "kernelzero/frontier"},
          {"prompt", json::array({{{"role", "user"}, {"content", prompt}}})},
          {"ability", "kernel"},
          {"reward_model", {{"style", "rule"}, {"ground_truth", e.module.source}}},
          {"extra_info", info}};
}
}  // namespace

int ExportVerl(const std::vector<curriculum::PoolEntry>& entries, const std::string& out, const std::string& backend) {
  std::error_code ec;
  std::string dir = generate::LocatePromptsDir(fs::read_symlink("/proc/self/exe", ec).string()), err;
  generate::PromptTemplate t;
  if (dir.empty() || !generate::LoadTemplate(dir + "/" + generate::DefaultTemplateName(backend, false), &t, &err))
    return Fail("no Coder prompt template: " + (dir.empty() ? std::string("prompts/ not found") : err));
  std::string lines;
  for (size_t i = 0; i < entries.size(); ++i) {
    std::string prompt;
    const auto& e = entries[i];
    if (!generate::RenderTemplate(t.text, {{"task_name", e.module.name}, {"task_source", e.module.source}}, &prompt,
                                  &err))
      return Fail(err);
    lines += Row(e, i, prompt).dump() + "\n";
  }
  if (!util::MakeDirs(out, &err) || !util::WriteFileAtomic(out + "/verl.jsonl", lines, &err)) return Fail(err);
  fs::path root = fs::path(dir).parent_path();
  util::ProcessSpec spec;
  spec.argv = {Python(root), (root / "scripts/verl_parquet.py").string(), out + "/verl.jsonl", out + "/train.parquet"};
  spec.wall_limit_s = 600;
  util::ProcessResult r = util::RunProcess(spec);
  if (r.end != util::ProcessEnd::kExited || r.exit_code != 0)
    return Fail("verl.jsonl written; train.parquet not: " + (r.spawn_error.empty() ? r.stderr_tail : r.spawn_error));
  std::cerr << "kz frontier: " << entries.size() << " verl rows to " << out << "/train.parquet\n";
  return 0;
}

}  // namespace kz::cli
