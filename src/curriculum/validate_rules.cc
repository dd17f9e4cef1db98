#include "curriculum/validate_rules.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace kz::curriculum {
using nlohmann::json;

namespace {
bool StartsWith(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

const std::set<std::string> kBannedBuiltins = {"eval", "exec", "compile", "__import__", "open", "input",
                                               "breakpoint", "exit", "quit", "globals", "locals", "vars",
                                               "setattr", "delattr", "memoryview"};
const std::vector<std::string> kBannedPrefixes = {"torch.save", "torch.load", "torch.hub.", "torch.compile",
                                                  "torch.jit.", "torch.ops.", "torch.utils.cpp_extension.",
                                                  "torch.cuda.", "torch.distributed.", "torch.multiprocessing."};
const std::set<std::string> kRandom = {
    "torch.rand", "torch.randn", "torch.randint", "torch.randperm", "torch.rand_like", "torch.randn_like",
    "torch.randint_like", "torch.normal", "torch.bernoulli", "torch.multinomial", "torch.poisson",
    "torch.manual_seed", "torch.seed", "torch.nn.functional.dropout", "torch.nn.functional.dropout1d",
    "torch.nn.functional.dropout2d", "torch.nn.functional.dropout3d", "torch.nn.functional.alpha_dropout",
    "torch.nn.functional.feature_alpha_dropout", "torch.nn.functional.rrelu", "torch.nn.functional.gumbel_softmax",
    "torch.nn.Dropout", "torch.nn.Dropout1d", "torch.nn.Dropout2d", "torch.nn.Dropout3d", "torch.nn.AlphaDropout",
    "torch.nn.FeatureAlphaDropout", "torch.nn.RReLU", "torch.dropout", "Tensor.uniform_", "Tensor.normal_",
    "Tensor.random_", "Tensor.bernoulli_", "Tensor.bernoulli", "Tensor.exponential_", "Tensor.geometric_",
    "Tensor.cauchy_", "Tensor.log_normal_", "Tensor.multinomial"};

Refusal Ast(const std::string& rule, const std::string& detail) { return {"ast", rule, detail}; }

std::optional<Refusal> Format(const ModuleFacts& m) {
  if (!m.has_model) return Ast("format", "no class Model");
  if (std::find(m.model_methods.begin(), m.model_methods.end(), "forward") == m.model_methods.end())
    return Ast("format", "Model has no forward method");
  for (const char* fn : {"get_inputs", "get_init_inputs"})
    if (std::find(m.functions.begin(), m.functions.end(), fn) == m.functions.end())
      return Ast("format", std::string("no top-level function ") + fn);
  return std::nullopt;
}

std::optional<Refusal> Calls(const ModuleFacts& m) {
  for (const auto& [fn, f] : m.by_function)
    for (const auto& c : f.calls) {
      if (StartsWith(c, "builtins.") && kBannedBuiltins.count(c.substr(9)))
        return Ast("banned_call", c.substr(9) + "() in " + fn);
      for (const auto& p : kBannedPrefixes)
        if (c == p || StartsWith(c, p)) return Ast("banned_call", c + " in " + fn);
    }
  for (const auto& name : NamesIn(m, Scope::kForward, false)) {
    if (kRandom.count(name)) return Ast("randomness", name + " reached from forward");
    if (name == "builtins.print") return Ast("io", "print() reached from forward");
  }
  return std::nullopt;
}

std::optional<Refusal> Unused(const ModuleFacts& m, const std::vector<size_t>& apis, const Catalog& catalog) {
  auto in_forward = ApisUsed(m, catalog, Scope::kForward, true);
  auto in_model = ApisUsed(m, catalog, Scope::kModel, true);
  for (size_t a : apis) {
    if (std::binary_search(in_forward.begin(), in_forward.end(), a)) continue;
    bool init_only = std::binary_search(in_model.begin(), in_model.end(), a);
    return Ast("unused_api", "API " + catalog.api(a).id + " of the set is " +
                                 (init_only ? "used only outside forward (__init__)" : "not used in forward"));
  }
  return std::nullopt;
}
std::optional<Refusal> NearCopy(const ModuleFacts& m, const KnownHashes& known) {
  const EvalModule* closest = nullptr;
  double best = 0;
  for (const auto& e : known.eval_sketches)
    if (double sim = SketchSimilarity(m.sketch, e.sketch); sim > best) best = sim, closest = &e;
  if (!closest || best < known.near_copy) return std::nullopt;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", best);
  return Ast("contaminated", "a near copy of evaluation task " + closest->name + " (structural similarity " + buf +
                                 " >= " + std::to_string(known.near_copy).substr(0, 4) + ")");
}
}  // namespace

bool AllowedImport(const std::string& module) {
  return module == "torch" || StartsWith(module, "torch.") || module == "math" || module == "__future__";
}

std::optional<Refusal> CheckAst(const ModuleFacts& m, const std::vector<size_t>& apis, const Catalog& catalog,
                                const KnownHashes& known) {
  if (m.status == "syntax_error")
    return Ast("syntax", m.error + (m.line ? " (line " + std::to_string(m.line) + ")" : ""));
  if (m.status == "not_utf8") return Ast("encoding", "not UTF-8: " + m.error);
  if (m.status != "ok") return Ast("unreadable", m.status + ": " + m.error);
  if (auto r = Format(m)) return r;
  for (const auto& imp : m.imports)
    if (!AllowedImport(imp)) return Ast("imports", "imports " + imp + " (only torch and math)");
  if (auto r = Calls(m)) return r;
  if (auto r = Unused(m, apis, catalog)) return r;
  if (auto it = known.eval.find(m.canonical_hash); it != known.eval.end())
    return Ast("contaminated", "the same module as evaluation task " + it->second + " (canonical AST)");
  if (auto r = NearCopy(m, known)) return r;
  if (auto it = known.seen.find(m.canonical_hash); it != known.seen.end())
    return Ast("duplicate", "the same module as " + it->second + " (canonical AST)");
  return std::nullopt;
}

namespace {
std::string Bytes(double b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", b);
  return std::string(buf) + " bytes";
}

std::optional<Refusal> Runnable(const json& f, const ValidationOptions& o) {
  auto R = [](const std::string& rule, const std::string& d) { return Refusal{"runnable", rule, d}; };
  std::string end = f.value("end", "crashed");
  if (end == "timeout") return R("timeout", "no result within " + std::to_string(int(o.timeout_s)) + " s");
  if (end != "result") return R("crashed", "the child ended without a result (" + f.value("exit", "?") + ")");
  if (f.contains("child_error")) return R("crashed", f["child_error"].dump());
  if (f["load_error"].is_string()) return R("load", f["load_error"].get<std::string>());
  const json fp = f.value("footprint", json::object());
  json total = fp.is_object() ? fp.value("total_bytes", json()) : json();
  if (f["skipped_run"].is_string() || (total.is_number() && total.get<double>() > o.max_total_bytes))
    return R("size_band", "too large to verify: footprint " +
                              (total.is_number() ? Bytes(total.get<double>()) : std::string("beyond the band")) +
                              " > " + Bytes(double(o.max_total_bytes)));
  if (total.is_number() && total.get<double>() < o.min_total_bytes)
    return R("size_band", "too small to time: footprint " + Bytes(total.get<double>()) + " < " +
                              Bytes(double(o.min_total_bytes)));
  if (f["run_error"].is_string()) {
    std::string e = f["run_error"];
    bool memory = e.find("MemoryError") != std::string::npos || e.find("allocate") != std::string::npos ||
                  e.find("out of memory") != std::string::npos;
    bool setup = e.find("get_inputs()") != std::string::npos || e.find("get_init_inputs()") != std::string::npos ||
                 e.find("Model constructor") != std::string::npos;
    return R(memory ? "memory" : setup ? "load" : "forward", e);
  }
  return std::nullopt;
}

std::optional<Refusal> Numeric(const json& f, const ValidationOptions& o) {
  auto R = [](const std::string& rule, const std::string& d) { return Refusal{"numeric", rule, d}; };
  const json ref = f.value("reference", json::object());
  if (!f.value("finite", true)) return R("non_finite", "the output holds NaN or Inf");
  if (f["weak_task"].is_string()) return R("near_constant", f["weak_task"].get<std::string>());
  if (!ref.value("inputs_reproducible", true))
    return R("nondeterministic", "get_inputs() gives other inputs under the same seed");
  if (ref.value("repeat", "") == "differ")
    return R("nondeterministic", "two calls on the same inputs give different outputs beyond tolerance (max |diff| " +
                                     ref.value("max_abs_diff", json()).dump() + ")");
  if (!ref.value("input_sensitive", true)) return R("input_insensitive", "another seed's inputs give the same output");
  const json fp64 = f.value("fp64", json::object());
  if (fp64.contains("rel_l2") && fp64["rel_l2"].is_number() && fp64["rel_l2"].get<double>() > o.fp64_rel_l2) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "fp32 is %.3g (relative L2) from fp64 on the same inputs, above %.3g",
                  fp64["rel_l2"].get<double>(), o.fp64_rel_l2);
    return R("ill_conditioned", buf);
  }
  return std::nullopt;
}
}  // namespace

std::optional<Refusal> CheckRun(const json& facts, const ValidationOptions& options) {
  if (auto r = Runnable(facts, options)) return r;
  return Numeric(facts, options);
}

}  // namespace kz::curriculum
