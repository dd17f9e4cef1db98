#include "curriculum/module_facts.h"

#include <algorithm>
#include <set>

namespace kz::curriculum {
using nlohmann::json;

namespace {
std::vector<std::string> Strings(const json& j) {
  std::vector<std::string> out;
  if (j.is_array())
    for (const auto& s : j)
      if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}
}  // namespace

ModuleFacts ParseModuleFacts(const json& e) {
  ModuleFacts m;
  if (!e.is_object()) return m.status = "missing", m.error = "not an object", m;
  m.path = e.value("path", "");
  m.status = e.value("status", "missing");
  m.error = e.contains("error") && e["error"].is_string() ? e["error"].get<std::string>() : "";
  m.line = e.contains("line") && e["line"].is_number_integer() ? e["line"].get<int>() : 0;
  if (m.status != "ok") return m;
  m.imports = Strings(e.value("imports", json::array()));
  const json top = e.value("top_level", json::object());
  m.classes = Strings(top.value("classes", json::array()));
  m.functions = Strings(top.value("functions", json::array()));
  const json model = e.value("model", json::object());
  m.has_model = model.value("defined", false);
  m.model_methods = Strings(model.value("methods", json::array()));
  const json functions = e.value("functions", json::object());  // outlives the loop
  for (const auto& [name, f] : functions.items()) {
    FunctionFacts ff{Strings(f.value("calls", json::array())), Strings(f.value("ops", json::array())),
                     f.value("line", 0)};
    m.by_function.emplace(name, std::move(ff));
  }
  m.canonical_hash = e.value("canonical_hash", "");
  for (const auto& h : e.value("sketch", json::array()))
    if (h.is_number_integer() && h.get<int64_t>() >= 0) m.sketch.push_back(h.get<uint64_t>());
  std::sort(m.sketch.begin(), m.sketch.end());
  return m;
}

double SketchSimilarity(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b, size_t k) {
  if (a.empty() || b.empty()) return 0;
  size_t i = 0, j = 0, taken = 0, both = 0;  // merge the sorted sketches: the union's k smallest
  while (taken < k && (i < a.size() || j < b.size())) {
    if (j == b.size() || (i < a.size() && a[i] < b[j])) {
      ++i;
    } else if (i == a.size() || b[j] < a[i]) {
      ++j;
    } else {
      ++i, ++j, ++both;
    }
    ++taken;
  }
  return static_cast<double>(both) / static_cast<double>(taken);
}

std::vector<std::string> NamesIn(const ModuleFacts& m, Scope scope, bool with_ops) {
  std::vector<std::string> todo;
  for (const auto& [name, _] : m.by_function) {
    if (name.rfind("Model.", 0) != 0) continue;
    if (scope == Scope::kForward && name == "Model.__init__") continue;
    todo.push_back(name);
  }
  std::set<std::string> seen(todo.begin(), todo.end()), names;
  while (!todo.empty()) {
    auto it = m.by_function.find(todo.back());
    todo.pop_back();
    if (it == m.by_function.end()) continue;
    for (const auto& c : it->second.calls) {
      names.insert(c);
      if (c.rfind("local.", 0) != 0 || !seen.insert(c.substr(6)).second) continue;
      todo.push_back(c.substr(6));  // a helper function, or the methods of a helper class
      for (const auto& [fn, _] : m.by_function) {
        bool init = fn == c.substr(6) + ".__init__";  // a helper class's constructor: not forward
        if (fn.rfind(c.substr(6) + ".", 0) == 0 && !(init && scope == Scope::kForward) && seen.insert(fn).second)
          todo.push_back(fn);
      }
    }
    if (with_ops) names.insert(it->second.ops.begin(), it->second.ops.end());
  }
  return {names.begin(), names.end()};
}

std::vector<size_t> ApisUsed(const ModuleFacts& m, const Catalog& catalog, Scope scope, bool with_ops) {
  std::set<size_t> out;
  for (const auto& name : NamesIn(m, scope, with_ops))
    if (auto i = catalog.Resolve(name)) out.insert(*i);
  return {out.begin(), out.end()};
}

}  // namespace kz::curriculum
