#include "compile/build_facts.h"

#include <sys/stat.h>

#include <filesystem>
#include <vector>

#include "compile/inline_layout.h"
#include "util/fs.h"
#include "util/hash.h"

namespace kz::compile {
namespace {
// The environment variables torch 2.11's cpp_extension reads that can change build.ninja.
constexpr const char* kTorchEnv[] = {"CXX",
                                     "CC",
                                     "CUDA_HOME",
                                     "CUDA_PATH",
                                     "PYTORCH_NVCC",
                                     "TORCH_CUDA_ARCH_LIST",
                                     "CUDA_INC_PATH",
                                     "CUDNN_HOME",
                                     "CUDNN_PATH",
                                     "TORCH_EXTENSION_SKIP_NVCC_GEN_DEPENDENCIES",
                                     "TORCH_DONT_CHECK_COMPILER_ABI",
                                     "ROCM_HOME",
                                     "ROCM_PATH",
                                     "PYTORCH_ROCM_ARCH",
                                     "TORCH_XPU_ARCH_LIST",
                                     "WINDOWS_CUDA_HOME",
                                     "PATH"};
constexpr const char* kFlagFields[] = {"extra_cflags", "extra_cuda_cflags", "extra_ldflags", "extra_include_paths"};

bool IsStringList(const nlohmann::json& v) {
  if (v.is_null()) return true;
  if (!v.is_array()) return false;
  for (const auto& s : v)
    if (!s.is_string()) return false;
  return true;
}

std::string FileStamp(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return "";
  return std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

// The fields of op build_facts' probe call.
nlohmann::json FactsCall(const nlohmann::json& call, bool cuda) {
  nlohmann::json out = {{"cuda", cuda}};
  for (const char* k : kFlagFields)
    if (call.contains(k) && !call[k].is_null()) out[k] = call[k];
  if (call.contains("with_cuda") && !call["with_cuda"].is_null()) out["with_cuda"] = call["with_cuda"];
  return out;
}

bool HasCuda(const nlohmann::json& call) {
  std::string ignored;
  auto src = LoadInlineSources(call, &ignored);
  return src && src->cu.has_value();
}

// Which of <home>/lib64 and <home>/lib exist, for each CUDA home torch may pick (CUDA_HOME,
// CUDA_PATH, /usr/local/cuda): torch's -L flags follow them, so they key the template.
std::string CudaLibDirs(const std::map<std::string, std::string>& env) {
  std::string out;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH", ""}) {
    auto it = *var ? env.find(var) : env.end();
    std::string home = *var ? (it == env.end() ? "" : it->second) : "/usr/local/cuda";
    if (home.empty()) continue;
    for (const char* sub : {"/lib64", "/lib"}) {
      std::error_code ec;
      out += home + sub + (std::filesystem::is_directory(home + sub, ec) ? "=1;" : "=0;");
    }
  }
  return out;
}

// Checks torch's probe files against this process's rendering of the same call.
std::string CheckProbe(const nlohmann::json& probe, bool cuda) {
  if (!probe.is_object()) return "build_facts sent no probe files";
  nlohmann::json call = {{"name", probe.value("name", "")},
                         {"cpp_sources", ""},
                         {"functions", probe.value("functions", nlohmann::json())}};
  if (cuda) call["cuda_sources"] = nlohmann::json::array({""});
  std::string why;
  auto mine = LoadInlineSources(call, &why);
  if (!mine) return why;
  auto theirs = probe.value("cuda_cu", nlohmann::json());
  if (mine->main != probe.value("main_cpp", "") || (mine->cu.has_value() != theirs.is_string()) ||
      (mine->cu && *mine->cu != theirs.get<std::string>()))
    return "main.cpp / cuda.cu differ from the known load_inline layout";
  return "";
}
}  // namespace

std::optional<std::string> FactsKeyText(const nlohmann::json& call, const std::map<std::string, std::string>& env,
                                        const nlohmann::json& probe, std::string* why) {
  nlohmann::json with_cuda = call.value("with_cuda", nlohmann::json());
  if (!with_cuda.is_null() && !with_cuda.is_boolean()) {
    *why = "with_cuda: expected null, true or false";
    return std::nullopt;
  }
  for (const char* k : kFlagFields)
    if (!IsStringList(call.value(k, nlohmann::json()))) {
      *why = std::string(k) + ": expected a list of strings";
      return std::nullopt;
    }
  if (!LoadInlineSources(call, why)) return std::nullopt;
  bool cuda = HasCuda(call), uses_cuda = with_cuda.is_null() ? cuda : with_cuda.get<bool>();
  auto arch = env.find("TORCH_CUDA_ARCH_LIST");
  if (uses_cuda && (arch == env.end() || arch->second.empty() || arch->second == "native")) {
    *why = "TORCH_CUDA_ARCH_LIST unset: torch picks archs from the visible GPUs";
    return std::nullopt;
  }
  util::LabelledHasher h;
  h.Add("format", std::to_string(kFactsFormat)).Add("layout", "torch-2.11-load_inline");
  for (const char* k : {"python", "torch", "cuda", "version_file"}) h.Add(k, probe.value(k, nlohmann::json()).dump());
  h.Add("python_binary", FileStamp(probe.value("python", "")))
      .Add("torch_file", FileStamp(probe.value("version_file", "")));
  for (const char* k : kTorchEnv) {
    auto it = env.find(k);
    h.Add(k, it == env.end() ? "(unset)" : "=" + it->second);
  }
  h.Add("cuda", cuda ? "1" : "0").Add("with_cuda", with_cuda.dump()).Add("cwd", util::AbsolutePath("."));
  h.Add("cuda_lib_dirs", CudaLibDirs(env));
  for (const char* k : kFlagFields) h.Add(k, call.value(k, nlohmann::json()).dump());
  return h.Text();
}

NinjaFacts NinjaTemplateFor(const nlohmann::json& call, const std::string& key_text, const std::string& facts_dir,
                            const std::string& scratch, const AskFacts& ask) {
  NinjaFacts out;
  std::string path = facts_dir + "/" + util::Hash128Hex(key_text) + ".json", text, err;
  if (util::ReadFile(path, &text, &err)) {
    auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_object() && doc.value("format", 0) == kFactsFormat && doc.value("inputs", "") == key_text &&
        doc.value("ninja", nlohmann::json()).is_string()) {
      out.ninja = doc["ninja"].get<std::string>(), out.cached = true;
      return out;
    }
  }
  bool cuda = HasCuda(call);
  auto reply = ask({{"op", "build_facts"}, {"call", FactsCall(call, cuda)}, {"build_dir", scratch}}, &out.why);
  if (!reply) return out;
  if (!reply->value("ok", false) || !reply->value("ninja", nlohmann::json()).is_string()) {
    // ASCII dump: a cut never splits a UTF-8 character (the text reaches verdicts)
    out.why = "build_facts: " + reply->value("reason", reply->dump(-1, ' ', true).substr(0, 300));
    return out;
  }
  if (std::string bad = CheckProbe(reply->value("probe", nlohmann::json()), cuda); !bad.empty()) {
    out.why = bad;
    return out;
  }
  out.ninja = (*reply)["ninja"].get<std::string>();
  nlohmann::json doc = {{"format", kFactsFormat}, {"inputs", key_text}, {"ninja", out.ninja}};
  if (util::MakeDirs(facts_dir, &err)) util::WriteFileAtomic(path, doc.dump(), &err);  // best effort
  return out;
}

}  // namespace kz::compile
