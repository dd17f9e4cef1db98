#include "compile/build_modes.h"

#include <map>
#include <optional>
#include <set>

#include "compile/ninja_file.h"
#include "compile/source_rewrite.h"
#include "util/fs.h"

namespace kz::compile {
namespace {
struct Originals {
  std::optional<std::string> main, cu;
  CudaSplit split;
};

std::optional<std::string> Read(const std::string& path) {
  std::string text, err;
  if (!util::ReadFile(path, &text, &err)) return std::nullopt;
  return text;
}

// Header modes to try, fastest first.
std::vector<std::string> Modes(const Originals& o, nlohmann::json* report) {
  if (!o.cu || !o.main) return {"full"};
  std::vector<std::string> modes;
  if (o.split.ok) {
    (*report)["split_kernels"] = o.split.kernels.size();
    modes.push_back("split");
  } else if (!o.split.reason.empty()) {
    (*report)["split_skipped"] = o.split.reason;
  }
  if (HasTorchInclude(*o.cu)) modes.push_back("lite");
  modes.push_back("full");
  return modes;
}

// Writes cuda.cu and main.cpp for `mode` and host header `header` ("slim" or "torch") from
// the originals. A file whose text changes loses its object, so a retry never links a stale
// one and keeps one that is still right. `slim_file`: kSlimName is written into the build
// directory (no PCH of it); otherwise it is removed (-include would take it before the PCH).
void Apply(const std::string& dir, const std::string& mode, const Originals& o, const std::string& header,
           bool slim_file) {
  std::map<std::string, std::optional<std::string>> texts;
  if (mode == "split") {
    texts["cuda.cu"] = o.split.device;
    texts["main.cpp"] = o.split.host + "#line 1 \"main.cpp\"\n" + *o.main;
  } else {
    texts["main.cpp"] = o.main;
    texts["cuda.cu"] = o.cu && mode == "lite" ? ReplaceTorchIncludes(*o.cu, kLiteName) : o.cu;
  }
  if (header == "slim" && texts["main.cpp"]) texts["main.cpp"] = ReplaceTorchIncludes(*texts["main.cpp"], kSlimName);
  std::string err;
  for (const auto& [name, obj] : {std::pair{"main.cpp", "main.o"}, std::pair{"cuda.cu", "cuda.cuda.o"}}) {
    const auto& text = texts[name];
    if (!text || Read(dir + "/" + name) == text) continue;
    util::RemoveAll(dir + "/" + obj);
    util::WriteFileAtomic(dir + "/" + name, *text, &err);
  }
  if (mode == "lite") util::WriteFileAtomic(dir + "/" + kLiteName, kLiteHeader, &err);
  if (slim_file)
    util::WriteFileAtomic(dir + "/" + kSlimName, kSlimHeader, &err);
  else
    util::RemoveAll(dir + "/" + kSlimName);
}

// Rewrites torch's link rule to try ld.lld (else ld.gold) first, when installed.
void FastLink(const std::string& dir, nlohmann::json* report) {
  const char* path = std::getenv("PATH");
  std::string ld = ChooseLinker(path ? path : ""), text, err;
  if (ld.empty() || !util::ReadFile(dir + "/build.ninja", &text, &err)) return;
  auto fast = UseFastLinker(text, ld);
  if (!fast) return;
  util::WriteFileAtomic(dir + "/build.ninja", *fast, &err);
  (*report)["linker"] = ld;
}

void AddFallback(nlohmann::json* report, const std::string& what) {
  if (!report->contains("fallbacks")) (*report)["fallbacks"] = nlohmann::json::array();
  (*report)["fallbacks"].push_back(what);
}

// One attempt: ninja, then (split mode) the symbol check.
NinjaOutcome Attempt(const std::string& mode, const Originals& o, const ModeHooks& hooks) {
  NinjaOutcome out = hooks.run_ninja();
  if (out.ok && mode == "split" && hooks.check_split) {
    std::string why = hooks.check_split(o.split);
    if (!why.empty()) out = {false, why};
  }
  return out;
}
}  // namespace

NinjaOutcome RunModes(const std::string& dir, HostHeader& host, const ModeHooks& hooks, nlohmann::json* report) {
  FastLink(dir, report);
  Originals o{Read(dir + "/main.cpp"), Read(dir + "/cuda.cu"), {}};
  if (o.cu && o.main && hooks.split) o.split = hooks.split(*o.cu);
  std::vector<std::string> modes = Modes(o, report);
  std::string refused = !o.main ? "no main.cpp" : host.SlimRefusal({*o.main, o.cu.value_or("")});
  if (!refused.empty()) (*report)["slim_skipped"] = refused;
  bool slim = refused.empty();
  for (size_t i = 0;;) {
    const std::string& mode = modes[i];
    bool last = i + 1 == modes.size();
    std::string header = slim && !last ? "slim" : "torch";
    if (host.Use(header == "slim" ? kSlimName : kPchName)) util::RemoveAll(dir + "/main.o");
    Apply(dir, mode, o, header, header == "slim" && !report->value("pch", false));
    (*report)["header_mode"] = mode, (*report)["host_header"] = header;
    NinjaOutcome out = Attempt(mode, o, hooks);
    if (out.ok || out.machine) return out;
    std::set<std::string> failed = FailedOutputs(out.message);
    AddFallback(report, header == "torch" ? mode : mode + "+slim");
    if (mode == "split" && failed == std::set<std::string>{"cuda.cuda.o"} && HeaderIndependentErrors(out.message)) {
      (*report)["fallbacks_skipped"] = "the device part's errors do not depend on headers";
      return out;  // lite and full would fail the same way
    }
    if (header == "slim" && failed.count("main.o")) {
      slim = false;                                // the host part needs more: torch's header
      if (!failed.count("cuda.cuda.o")) continue;  // same mode again; its device object is kept
    }
    if (last) return out;
    ++i;
  }
}

}  // namespace kz::compile
