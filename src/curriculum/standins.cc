#include "curriculum/standins.h"

#include <algorithm>

namespace kz::curriculum {

std::optional<StandinStep> StandinTableEntry(const std::string& id);  // standin_table.cc

namespace {

// An elementwise function's input brought into its catalog range (inputs.range).
std::string InRange(const Api& api) {
  std::string range = api.inputs.is_object() ? api.inputs.value("range", "any") : "any";
  if (range == "positive" || range == "nonzero") return "{x}.abs() + 0.5";
  if (range == "open_unit") return "torch.tanh({x}) * 0.9";
  if (range == "ge1") return "{x}.abs() + 1.5";
  if (range == "gt_minus1") return "{x}.abs()";
  if (range == "unit_interval") return "torch.sigmoid({x}) * 0.98 + 0.01";
  return "{x}";
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

constexpr const char* kHeader =
    "import torch\n"
    "import torch.nn as nn\n"
    "import torch.nn.functional as F\n\n\n";
constexpr const char* kFooter =
    "\n\ndef get_inputs():\n"
    "    return [torch.randn(4, 8, 16, 16), torch.randn(4, 8, 16, 16), torch.randint(0, 8, (4, 8, 16, 16))]\n\n\n"
    "def get_init_inputs():\n"
    "    return []\n";

}  // namespace

std::optional<StandinStep> StandinSnippet(const Api& api) {
  if (auto e = StandinTableEntry(api.id)) return e;
  if (api.category == "activation" && api.kind == "module") return StandinStep{api.qualified + "()", "{m}({x})", true};
  if (api.category == "elementwise" && api.kind == "function")
    return StandinStep{"", api.qualified + "(" + InRange(api) + ")", true};
  return std::nullopt;
}

bool StandinModule(const Catalog& catalog, const std::vector<size_t>& set, std::string* text, std::string* err) {
  if (set.empty()) return *err = "stand-in: an empty API set", false;
  std::vector<std::pair<StandinStep, std::string>> steps;  // step, API id
  for (size_t i : set) {
    auto s = StandinSnippet(catalog.api(i));
    if (!s) return *err = "stand-in: no snippet for API '" + catalog.api(i).id + "'", false;
    steps.emplace_back(*s, catalog.api(i).id);
  }
  std::stable_partition(steps.begin(), steps.end(), [](const auto& s) { return s.first.keeps_shape; });
  std::vector<std::string> init, body, outputs, ids;
  std::string input = "x";
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& [step, id] = steps[i];
    std::string var = "a" + std::to_string(i), attr = "self.m" + std::to_string(i);
    if (!step.init.empty()) init.push_back("        " + attr + " = " + step.init + "\n");
    body.push_back("        " + var + " = " + Replace(Replace(step.expr, "{x}", input), "{m}", attr) + "\n");
    ids.push_back(id);
    bool fed_on = step.keeps_shape && i + 1 < steps.size();
    if (!fed_on) outputs.push_back(var);
    input = step.keeps_shape ? var : "x";
  }
  std::string ret = outputs.size() == 1 ? outputs[0] : "torch.cat([" + Join(outputs, ".reshape(-1), ") + ".reshape(-1)])";
  *text = std::string(kHeader) + "class Model(nn.Module):\n    \"\"\"Stand-in module for the API set " + Join(ids, ", ") +
          ".\"\"\"\n\n    def __init__(self):\n        super().__init__()\n" + Join(init, "") +
          "\n    def forward(self, x, y, t):\n" + Join(body, "") + "        return " + ret + "\n" + kFooter;
  return true;
}

}  // namespace kz::curriculum
