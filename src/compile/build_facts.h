// What the C++ build driver needs from torch for a call: the build.ninja torch 2.11 writes
// for its flags (include paths, compile/link flags, CUDA arch flags, the ABI flag) as a
// template (inline_layout.h's placeholders), from the Python op `build_facts`. Answers are
// cached on disk as <facts_dir>/<key>.json, the key a util::LabelledHasher over a format
// version and everything that shapes the file: torch's and Python's versions and install,
// the environment variables torch reads, and the call's flags, include paths, with_cuda and
// whether it has CUDA sources. A torn or mismatching file is asked again and rewritten.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kz::compile {

inline constexpr int kFactsFormat = 1;

// The facts' key text of `call` (its digest: util::Hash128Hex), or nullopt with *why for a
// call the driver does not reproduce (torch builds it: op `build`). `env`: the variables the
// build sees; `probe`: worker::ProbeEnvironment's answer plus "python" (the interpreter).
std::optional<std::string> FactsKeyText(const nlohmann::json& call, const std::map<std::string, std::string>& env,
                                        const nlohmann::json& probe, std::string* why);

// Runs op `build_facts` with this request (call fields, scratch build_dir) and returns its
// result frame, or nullopt when the worker failed (then *why says how).
using AskFacts = std::function<std::optional<nlohmann::json>(const nlohmann::json& request, std::string* why)>;

struct NinjaFacts {
  std::string ninja;  // the template; "" when none (see why)
  std::string why;
  bool cached = false;  // read from facts_dir
};

// The template for `call` (key text `key_text`): from <facts_dir>, else asked (`scratch`: a
// writable directory for torch's probe files) and checked against LoadInlineSources.
NinjaFacts NinjaTemplateFor(const nlohmann::json& call, const std::string& key_text, const std::string& facts_dir,
                            const std::string& scratch, const AskFacts& ask);

}  // namespace kz::compile
