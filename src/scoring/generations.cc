#include "scoring/generations.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "util/fs.h"

namespace kz::scoring {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
// Length of the well-formed UTF-8 sequence starting at s[i], or 0 if it is ill-formed.
size_t Utf8SeqLen(const std::string& s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t len = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c == 0xE0) lo = 0xA0;
  if (c == 0xED) hi = 0x9F;  // no surrogates
  if (c == 0xF0) lo = 0x90;
  if (c == 0xF4) hi = 0x8F;  // ≤ U+10FFFF
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < len; ++k)
    if ((b(i + k) & 0xC0) != 0x80) return 0;
  return len;
}
}  // namespace

bool IsValidUtf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SeqLen(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string ReplaceInvalidUtf8(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SeqLen(s, i);
    out += n ? s.substr(i, n) : "\xEF\xBF\xBD";
    i += n ? n : 1;
  }
  return out;
}

json BadInputJson(const BadInput& b) {
  return {{"origin", b.origin}, {"kind", b.kind}, {"message", b.message},
          {"task", b.task_id.empty() ? json(nullptr) : json(b.task_id)},
          {"sample", b.sample ? json(*b.sample) : json(nullptr)}, {"scored_as_incorrect", b.scored},
          {"output_tokens", b.output_tokens ? json(*b.output_tokens) : json(nullptr)}};
}

namespace {
// Checks one parsed generation against the suite and what was read before; appends it to
// out->items or out->bad. `utf8_ok` is false when the raw code was not UTF-8.
class Admitter {
 public:
  Admitter(const Suite& suite, Generations* out) : suite_(suite), out_(out) {}

  void Admit(Generation g, bool utf8_ok) {
    auto bad = [&](std::string kind, std::string msg, bool scored) {
      out_->bad.push_back({g.origin, std::move(kind), std::move(msg), g.task_id, g.level, g.sample, scored,
                           g.output_tokens});
    };
    auto it = suite_.tasks.find(g.task_id);
    if (it == suite_.tasks.end()) {
      std::string id = g.task_id;
      g.task_id.clear();
      return bad("unknown_task", "task " + id + " is not in the suite", false);
    }
    g.level = it->second.level;
    if (!seen_.insert({g.task_id, g.sample}).second)
      return bad("duplicate_sample", "sample " + std::to_string(g.sample) + " of " + g.task_id +
                                         " appeared before; the first one is kept", false);
    if (!utf8_ok) return bad("not_utf8", "code is not valid UTF-8", true);
    if (g.code.find_first_not_of(" \t\r\n") == std::string::npos)
      return bad("empty_code", "code is empty", true);
    out_->items.push_back(std::move(g));
  }

 private:
  const Suite& suite_;
  Generations* out_;
  std::set<std::pair<std::string, int>> seen_;
};

void ReadDirectory(const std::string& dir, Admitter& admit, Generations* out) {
  static const std::regex kName(R"(level_(\d{1,4})_problem_(\d{1,6})_sample_(\d{1,6})_kernel\.py)");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".py") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& p : files) {
    std::string name = p.filename().string(), code, err;
    std::smatch m;
    if (!std::regex_match(name, m, kName)) {
      out->bad.push_back({name, "unrecognized_file", "not named level_<L>_problem_<P>_sample_<S>_kernel.py",
                          "", 0, std::nullopt, false, std::nullopt});
      continue;
    }
    if (!util::ReadFile(p.string(), &code, &err)) {
      out->bad.push_back({name, "unreadable_file", err, "", 0, std::nullopt, false, std::nullopt});
      continue;
    }
    Generation g{TaskId(std::stoi(m[1].str()), std::stoi(m[2].str())), 0, std::stoi(m[3].str()),
                 std::move(code), std::nullopt, "", name};
    bool ok = IsValidUtf8(g.code);
    admit.Admit(std::move(g), ok);
  }
}

// Parses one JSONL record; "" on success, else why the line is malformed.
std::string ParseRecord(const json& j, Generation* g) {
  if (!j.is_object()) return "not a JSON object";
  const json& t = j.contains("task") ? j["task"] : json();
  if (t.is_string()) {
    g->task_id = t.get<std::string>();
  } else if (t.is_object() && t.contains("level") && t["level"].is_number_integer() &&
             t.contains("problem") && t["problem"].is_number_integer()) {
    g->task_id = TaskId(t["level"].get<int>(), t["problem"].get<int>());
  } else {
    return "\"task\" must be an id like \"L1_19\" or {\"level\": L, \"problem\": P}";
  }
  if (!j.contains("sample") || !j["sample"].is_number_integer() || j["sample"].get<long long>() < 0 ||
      j["sample"].get<long long>() > 1000000)
    return "\"sample\" must be an integer from 0";
  g->sample = j["sample"].get<int>();
  if (!j.contains("code") || !j["code"].is_string()) return "\"code\" must be a string";
  g->code = j["code"].get<std::string>();
  if (j.contains("output_tokens") && !j["output_tokens"].is_null()) {
    if (!j["output_tokens"].is_number() || j["output_tokens"].get<double>() < 0)
      return "\"output_tokens\" must be a non-negative number";
    g->output_tokens = j["output_tokens"].get<double>();
  }
  g->backend = j.contains("backend") && j["backend"].is_string() ? j["backend"].get<std::string>() : "";
  if (!g->backend.empty() && g->backend != "cuda" && g->backend != "triton")
    return "\"backend\" must be \"cuda\" or \"triton\"";
  return "";
}

void ReadJsonl(const std::string& path, const std::string& text, Admitter& admit, Generations* out) {
  std::istringstream in(text);
  std::string name = fs::path(path).filename().string();
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string origin = name + ":" + std::to_string(line_no);
    bool utf8_ok = IsValidUtf8(line);
    json j = json::parse(utf8_ok ? line : ReplaceInvalidUtf8(line), nullptr, false);
    Generation g;
    g.origin = origin;
    std::string why = j.is_discarded() ? "not valid JSON" : ParseRecord(j, &g);
    if (!why.empty()) {
      out->bad.push_back({origin, "malformed_line", "line " + std::to_string(line_no) + ": " + why,
                          "", 0, std::nullopt, false, std::nullopt});
      continue;
    }
    admit.Admit(std::move(g), utf8_ok);
  }
}
}  // namespace

bool ReadGenerations(const std::string& path, const Suite& suite, Generations* out, std::string* err) {
  Admitter admit(suite, out);
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    ReadDirectory(path, admit, out);
    return true;
  }
  std::string text;
  if (!util::ReadFile(path, &text, err)) return false;
  ReadJsonl(path, text, admit, out);
  return true;
}

}  // namespace kz::scoring
