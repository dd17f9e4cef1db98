#include "generate/extract.h"

#include <cctype>
#include <sstream>
#include <vector>

#include "scoring/generations.h"

namespace kz::generate {

const char* ReasonName(NoCodeReason r) {
  switch (r) {
    case NoCodeReason::kNotUtf8: return "not_utf8";
    case NoCodeReason::kEmpty: return "empty_reply";
    case NoCodeReason::kTruncated: return "truncated";
    case NoCodeReason::kNoCode: return "no_code";
    case NoCodeReason::kNoClass: return "no_class";
    case NoCodeReason::kUnclosed: return "unclosed_block";
  }
  return "no_code";
}

namespace {
std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

struct Blocks {
  std::vector<std::string> complete;  // python blocks with their closing fence
  bool any_fence = false;
  bool open_at_end = false;           // a python block was still open when the text ended
};

// A fence line: "```" then an info string. *info gets it, lower-cased.
bool IsFence(const std::string& line, std::string* info) {
  std::string t = Trim(line);
  if (t.rfind("```", 0) != 0) return false;
  size_t n = t.find_first_not_of('`');
  *info = n == std::string::npos ? "" : Trim(t.substr(n));
  for (char& c : *info) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return true;
}

Blocks FindBlocks(const std::string& text) {
  Blocks out;
  std::istringstream in(text);
  bool inside = false, python = false;
  std::string body, info;
  for (std::string line; std::getline(in, line);) {
    if (!IsFence(line, &info)) {
      if (inside) body += line + "\n";
      continue;
    }
    out.any_fence = true;
    if (inside && info.empty()) {  // closing fence
      if (python) out.complete.push_back(body);
      inside = false;
    } else if (!inside) {
      inside = true;
      python = info.empty() || info == "python" || info == "py" || info == "python3";
      body.clear();
    }
  }
  out.open_at_end = inside && python;
  return out;
}
}  // namespace

bool DefinesClass(const std::string& code, const std::string& name) {
  std::istringstream in(code);
  const std::string head = "class " + name;
  for (std::string line; std::getline(in, line);) {
    std::string t = Trim(line);
    if (t.rfind(head, 0) != 0 || t.size() == head.size()) continue;
    char next = t[head.size()];
    if (next == '(' || next == ':' || next == ' ') return true;
  }
  return false;
}

Extraction ExtractCode(const std::string& reply, const std::string& finish_reason, bool proposer) {
  Extraction out;
  auto fail = [&](NoCodeReason r) { return out.reason = r, out; };
  if (!scoring::IsValidUtf8(reply)) return fail(NoCodeReason::kNotUtf8);
  size_t think = reply.rfind("</think>");
  std::string text = think == std::string::npos ? reply : reply.substr(think + 8);
  if (Trim(text).find_first_not_of("\n") == std::string::npos) {
    return fail(finish_reason == "length" ? NoCodeReason::kTruncated : NoCodeReason::kEmpty);
  }
  const std::string cls = proposer ? "Model" : "ModelNew";
  Blocks b = FindBlocks(text);
  out.blocks = static_cast<int>(b.complete.size());
  for (auto it = b.complete.rbegin(); it != b.complete.rend(); ++it)
    if (DefinesClass(*it, cls)) return out.code = *it, out;
  if (!b.any_fence && finish_reason != "length" && DefinesClass(text, cls)) {
    out.code = text;
    if (out.code.back() != '\n') out.code += '\n';
    return out;
  }
  if (finish_reason == "length") return fail(NoCodeReason::kTruncated);
  if (b.open_at_end) return fail(NoCodeReason::kUnclosed);
  return fail(b.complete.empty() ? NoCodeReason::kNoCode : NoCodeReason::kNoClass);
}

}  // namespace kz::generate
