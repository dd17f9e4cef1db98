#include "compile/inline_layout.h"

#include <vector>

#include "util/fs.h"

namespace kz::compile {
namespace {
// A string or a list of strings as a list (null: empty when `allow_null`); false otherwise.
bool Strings(const nlohmann::json& v, bool allow_null, std::vector<std::string>* out) {
  if (v.is_null()) return allow_null;
  if (v.is_string()) {
    out->push_back(v.get<std::string>());
    return true;
  }
  if (!v.is_array()) return false;
  for (const auto& s : v) {
    if (!s.is_string()) return false;
    out->push_back(s.get<std::string>());
  }
  return true;
}

// (name, doc) pairs of `functions`: a string, a list of strings or an object of strings.
bool Functions(const nlohmann::json& v, std::vector<std::pair<std::string, std::string>>* out) {
  if (v.is_object()) {
    for (const auto& [k, doc] : v.items()) {
      if (!doc.is_string()) return false;
      out->emplace_back(k, doc.get<std::string>());
    }
    return true;
  }
  std::vector<std::string> names;
  if (!Strings(v, false, &names)) return false;
  for (const auto& n : names) out->emplace_back(n, n);
  return true;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" : "") + lines[i];
  return out;
}

bool Empty(const nlohmann::json& v) {  // (nlohmann's empty() is false for every string)
  return v.is_null() || (v.is_string() && v.get_ref<const std::string&>().empty()) || (v.is_array() && v.empty());
}
}  // namespace

std::optional<InlineSources> LoadInlineSources(const nlohmann::json& call, std::string* why) {
  std::vector<std::string> cpp{"#include <torch/extension.h>"}, cuda;
  if (!Strings(call.value("cpp_sources", nlohmann::json()), false, &cpp)) {
    *why = "cpp_sources: expected a string or a list of strings";
    return std::nullopt;
  }
  nlohmann::json fns = call.value("functions", nlohmann::json());
  std::vector<std::pair<std::string, std::string>> functions;
  if (!fns.is_null() && !Functions(fns, &functions)) {
    *why = "functions: expected a string, a list of strings or an object";
    return std::nullopt;
  }
  if (!fns.is_null()) {
    cpp.emplace_back("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {");
    for (const auto& [f, doc] : functions)
      cpp.push_back("m.def(\"" + f + "\", torch::wrap_pybind_function(" + f + "), \"" + doc + "\");");
    cpp.emplace_back("}");
  }
  nlohmann::json cu = call.value("cuda_sources", nlohmann::json());
  if (!Empty(cu) && !Strings(cu, true, &cuda)) {
    *why = "cuda_sources: expected a string or a list of strings";
    return std::nullopt;
  }
  InlineSources out{Join(cpp), std::nullopt};
  if (!cuda.empty()) {
    cuda.insert(cuda.begin(), {"#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"});
    out.cu = Join(cuda);
  }
  return out;
}

std::string RenderNinja(const std::string& tmpl, const std::string& name, const std::string& build_dir) {
  std::string dir = util::AbsolutePath(build_dir), escaped, out;
  for (char c : dir) escaped += c == ' ' ? std::string("$ ") : std::string(1, c);
  const std::string name_mark = kNinjaName, dir_mark = kNinjaDir;
  for (size_t at = 0; at < tmpl.size();) {
    if (tmpl.compare(at, name_mark.size(), name_mark) == 0) {
      out += name, at += name_mark.size();
    } else if (tmpl.compare(at, dir_mark.size(), dir_mark) == 0) {
      out += escaped, at += dir_mark.size();
    } else {
      out += tmpl[at++];
    }
  }
  return out;
}

}  // namespace kz::compile
