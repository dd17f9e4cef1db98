#include "generate/prompt.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "scoring/generations.h"
#include "util/fs.h"

namespace kz::generate {
namespace fs = std::filesystem;

namespace {
// Length of the placeholder name at text[i] (just after "{{") when "}}" follows it, else 0.
size_t NameLength(const std::string& text, size_t i) {
  size_t j = i;
  while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
  return j > i && text.compare(j, 2, "}}") == 0 ? j - i : 0;
}
}  // namespace

bool RenderTemplate(const std::string& text, const std::map<std::string, std::string>& values, std::string* out,
                    std::string* err) {
  out->clear();
  for (size_t i = 0; i < text.size();) {
    size_t open = text.find("{{", i);
    if (open == std::string::npos) {
      out->append(text, i, std::string::npos);
      break;
    }
    size_t len = NameLength(text, open + 2);
    if (len == 0) {
      out->append(text, i, open + 2 - i);
      i = open + 2;
      continue;
    }
    std::string name = text.substr(open + 2, len);
    auto it = values.find(name);
    if (it == values.end()) return *err = "the template uses {{" + name + "}}, which has no value", false;
    out->append(text, i, open - i).append(it->second);
    i = open + 2 + len + 2;
  }
  return true;
}

bool LoadTemplate(const std::string& path, PromptTemplate* out, std::string* err) {
  if (!util::ReadFile(path, &out->text, err)) return false;
  out->name = fs::path(path).filename().string();
  if (!scoring::IsValidUtf8(out->text)) return *err = path + ": the template is not valid UTF-8", false;
  bool any = false;
  for (size_t p = out->text.find("{{"); p != std::string::npos && !any; p = out->text.find("{{", p + 2))
    any = NameLength(out->text, p + 2) > 0;
  if (!any) return *err = path + ": the template has no {{placeholder}} (e.g. {{task_source}})", false;
  return true;
}

std::string DefaultTemplateName(const std::string& backend, bool proposer) {
  if (proposer) return "proposer_module.v1.txt";
  return backend == "triton" ? "coder_triton_oneshot.v1.txt" : "coder_cuda_oneshot.v1.txt";
}

std::string LocatePromptsDir(const std::string& exe) {
  if (const char* p = std::getenv("KZ_PROMPTS_DIR"); p && *p) return p;
  fs::path exe_dir = fs::path(util::AbsolutePath(exe)).parent_path();
  for (const fs::path& dir : {exe_dir.parent_path().parent_path() / "prompts", fs::path(KZ_SOURCE_DIR) / "prompts"}) {
    std::error_code ec;
    if (fs::is_directory(dir, ec)) return dir.string();
  }
  return "";
}

}  // namespace kz::generate
