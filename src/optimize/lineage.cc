#include "optimize/lineage.h"

#include <algorithm>
#include <cstdio>

#include "scoring/svg.h"
#include "util/fs.h"

namespace kz::optimize {
using json = nlohmann::json;

bool WriteLineage(const RunStore& store, const std::vector<json>& records, const std::string& best_id,
                  std::string* err) {
  json nodes = json::array();
  std::string tsv = "iteration\tid\toutcome\tstatus\ttokens\tgpu_s\tbest_speedup\n";
  double tokens = 0, gpu_s = 0, best = 0;
  scoring::Series by_tokens{"best speedup", {}};
  for (const auto& r : records) {
    json n = {{"id", r.value("id", "")}, {"iteration", r.value("iteration", 0)}, {"parent", r.value("parent", "")},
              {"other", r.value("other", "")}, {"mutation", r.value("mutation", "")},
              {"outcome", r.value("outcome", "")}, {"status", r.value("status", "")},
              {"speedup", r.value("speedup", 0.0)}, {"kept", r.value("kept", false)}};
    nodes.push_back(n);
    if (r.contains("spent")) {
      tokens += r["spent"].value("tokens", 0.0);
      gpu_s += r["spent"].value("gpu_s", 0.0);
    }
    if (r.value("status", "") == "correct" && r.value("kept", false)) best = std::max(best, r.value("speedup", 0.0));
    char line[256];
    std::snprintf(line, sizeof line, "%d\t%s\t%s\t%s\t%.0f\t%.3f\t%.4f\n", r.value("iteration", 0),
                  r.value("id", "").c_str(), r.value("outcome", "").c_str(), r.value("status", "").c_str(), tokens, gpu_s,
                  best);
    tsv += line;
    by_tokens.points.push_back({tokens, best});
  }
  json lineage = {{"format", "kz.optimize.lineage/1"}, {"best", best_id}, {"candidates", nodes}};  // reasons may hold raw bytes
  scoring::PlotSpec spec{"kz optimize: best verified speedup against tokens spent", "tokens spent", "speedup", 0,
                       std::max(1.0, tokens), 0, std::max(1.0, best * 1.1)};
  return util::WriteFileAtomic(store.Path("lineage.json"), PrettyJson(lineage), err) &&
         util::WriteFileAtomic(store.Path("curve.tsv"), tsv, err) &&
         util::WriteFileAtomic(store.Path("curve.svg"), scoring::LinePlotSvg(spec, {by_tokens}), err);
}

}  // namespace kz::optimize
