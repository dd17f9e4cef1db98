#include "compile/pch_frontend.h"

#include <filesystem>
#include <sstream>

#include "compile/pch.h"
#include "compile/source_rewrite.h"
#include "util/fs.h"
#include "util/hash.h"

namespace kz::compile {
namespace fs = std::filesystem;
namespace {
std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}
}  // namespace

bool HeaderDeps(const ToolRunner& runner, const std::string& cxx, const std::vector<std::string>& flags,
                const std::string& header, std::set<std::string>* deps) {
  std::vector<std::string> argv{cxx};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-M", "-x", "c++", header});
  ToolRun run = runner.Run(argv);
  if (!run.ok) return false;
  std::istringstream words(run.out);  // the make rule
  bool first = true;
  for (std::string w; words >> w;) {
    if (first || w == "\\" || w.back() == ':') {
      first = false;
      continue;
    }
    std::error_code ec;
    fs::path real = fs::weakly_canonical(w, ec);
    deps->insert(ec ? w : real.string());
  }
  return true;
}

void WriteFrontendList(const ToolRunner& runner, const std::string& pch_dir, const std::string& cxx,
                       const std::vector<std::string>& flags) {
  std::string err, full = pch_dir + "/kz_full_closure.h";
  std::set<std::string> all, slim;
  if (!util::WriteFileAtomic(full, PchHeaderText(kPchName), &err) || !HeaderDeps(runner, cxx, flags, full, &all) ||
      !HeaderDeps(runner, cxx, flags, pch_dir + "/" + kSlimName, &slim))
    return;
  std::string list;
  for (const auto& p : all)  // torch's own headers (pybind11's too), not <queue>
    if (!slim.count(p) && p.find("/torch/include/") != std::string::npos) list += p + "\n";
  util::WriteFileAtomic(pch_dir + "/" + kFrontendList, list, &err);
}

std::vector<std::string> TorchIncludes(const std::vector<std::string>& texts) {
  std::set<std::string> names;
  for (const auto& text : texts)
    for (const auto& name : IncludedHeaders(text))
      for (const char* dir : {"torch/", "ATen/", "c10/", "caffe2/", "pybind11/"})
        if (name.rfind(dir, 0) == 0 && name != "torch/types.h" && name != "torch/extension.h") names.insert(name);
  return {names.begin(), names.end()};
}

std::string FrontendRefusal(const ToolRunner& runner, const std::string& slim_dir, const std::string& cxx,
                            const std::vector<std::string>& flags, const std::vector<std::string>& texts) {
  std::string listed, found, err;
  std::vector<std::string> names = TorchIncludes(texts);
  if (!util::ReadFile(slim_dir + "/" + kFrontendList, &listed, &err) || listed.empty() || names.empty()) return "";
  util::LabelledHasher h;
  for (const auto& n : names) h.Add("include", n);
  std::string answer = slim_dir + "/includes/" + h.HexDigest().substr(0, 24);
  if (!util::ReadFile(answer, &found, &err)) {
    // Under slim_dir, not this process's temp dir: a sandboxed compiler has a private /tmp
    // but sees the PCH root (docs/sandbox.md).
    std::string tmp = util::MakeTempDir(slim_dir, "kz-includes-", &err), probe;
    for (const auto& n : names) probe += "#include <" + n + ">\n";
    std::set<std::string> deps;
    bool ok = !tmp.empty() && util::WriteFileAtomic(tmp + "/includes.h", probe, &err) &&
              HeaderDeps(runner, cxx, flags, tmp + "/includes.h", &deps);
    if (!tmp.empty()) util::RemoveAll(tmp);
    if (!ok) return "";  // a missing header fails either way
    for (const auto& p : SplitLines(listed))
      if (deps.count(p)) {
        found = p;
        break;
      }
    if (util::MakeDirs(slim_dir + "/includes", &err)) util::WriteFileAtomic(answer, found, &err);
  }
  if (found.empty()) return "";
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : ", ") + n;
  size_t at = found.rfind("/include/");
  return "its includes (" + joined + ") pull in torch's C++ frontend (" +
         (at == std::string::npos ? found : found.substr(at + 9)) + ")";
}

}  // namespace kz::compile
