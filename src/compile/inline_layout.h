// The files torch 2.11's load_inline writes for a call, reproduced without torch: main.cpp
// (with the pybind11 binding boilerplate of `functions`) and cuda.cu, and build.ninja from a
// template of build_facts.h. build_facts checks this rendering against torch's own files.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kz::compile {

inline constexpr const char* kNinjaName = "@KZ_NAME@";  // placeholders of a build.ninja template
inline constexpr const char* kNinjaDir = "@KZ_DIR@";

struct InlineSources {
  std::string main;
  std::optional<std::string> cu;  // none without cuda_sources
};

// main.cpp and cuda.cu exactly as load_inline writes them with its defaults (with_pytorch_
// error_handling, implicit headers), or nullopt with *why for a call whose fields it does not
// reproduce (e.g. cpp_sources not a string or a list of strings).
std::optional<InlineSources> LoadInlineSources(const nlohmann::json& call, std::string* why);

// The build.ninja of extension `name` in `build_dir` from a template (one pass: a value that
// holds a placeholder is not substituted again). Spaces in the directory are escaped as torch does.
std::string RenderNinja(const std::string& tmpl, const std::string& name, const std::string& build_dir);

}  // namespace kz::compile
