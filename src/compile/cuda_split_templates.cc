#include "compile/cuda_split_templates.h"

#include <algorithm>
#include <cctype>

#include "compile/cuda_split_text.h"

namespace kz::compile::cuda_split {

const char* const kLaunchStruct = R"(struct KzLaunch {  // a launch configuration: grid, block, shared bytes, stream
  dim3 g, b; size_t s; cudaStream_t st;
  KzLaunch(dim3 g_, dim3 b_, size_t s_ = 0, cudaStream_t st_ = 0) : g(g_), b(b_), s(s_), st(st_) {}
};
)";

namespace {
const std::set<std::string, std::less<>> kBuiltin = {
    "int",    "unsigned", "long",    "short",   "char",    "bool",          "float",       "double",
    "signed", "true",     "false",   "half",    "__half",  "__nv_bfloat16", "nv_bfloat16", "size_t",
    "int8_t", "int16_t",  "int32_t", "int64_t", "uint8_t", "uint16_t",      "uint32_t",    "uint64_t",
    "float2", "float4",   "int2",    "int4",    "const"};

bool Fail(std::string* why, std::string reason) {
  *why = std::move(reason);
  return false;
}

// `text` split at commas outside (), <>, [] and {}, each part stripped, empty ones dropped.
std::vector<std::string> SplitTop(std::string_view text) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char c : text) {
    if (c == '(' || c == '<' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == '>' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  std::vector<std::string> out;
  for (const auto& p : parts)
    if (!Strip(p).empty()) out.emplace_back(Strip(p));
  return out;
}

// The index just past the bracket that closes text[start] (== open), or kNpos.
size_t Balanced(std::string_view text, size_t start, char open, char close) {
  int depth = 0;
  for (size_t i = start; i < text.size(); ++i) {
    depth += (text[i] == open) - (text[i] == close);
    if (depth == 0) return i + 1;
  }
  return kNpos;
}

bool Boundary(std::string_view s, size_t p) { return (p > 0 && IsWord(s[p - 1])) != (p < s.size() && IsWord(s[p])); }

// Where re's \b<name>\s*\( matches in s: the index of its '(', or kNpos.
size_t NamedCallOpen(std::string_view s, std::string_view name) {
  for (size_t p = 0; p + name.size() <= s.size(); ++p) {
    if (!StartsWith(s, p, name) || !Boundary(s, p)) continue;
    size_t q = SkipSpace(s, p + name.size());
    if (q < s.size() && s[q] == '(') return q;
  }
  return kNpos;
}

// The name a parameter declares: `(\w+)\s*(\[[^\]]*\])*\s*$` in p, or "".
std::string DeclaredName(std::string_view p) {
  for (size_t i = 0; i < p.size();) {
    if (!IsWord(p[i])) {
      ++i;
      continue;
    }
    size_t end = WordEnd(p, i), q = SkipSpace(p, end);
    while (q < p.size() && p[q] == '[' && p.find(']', q + 1) != kNpos) q = p.find(']', q + 1) + 1;
    if (SkipSpace(p, q) == p.size()) return std::string(p.substr(i, end - i));
    i = end;
  }
  return "";
}

using Values = std::vector<std::pair<std::string, std::string>>;  // template parameter -> argument

bool Arguments(const std::string& label, std::string_view args, const KernelTemplate& tmpl,
               const std::set<std::string>& constants, Values* out, std::string* why) {
  auto values = SplitTop(args.substr(1, args.size() - 2));
  if (values.size() > tmpl.tparams.size())
    return Fail(why, "kernel template " + label + ": too many template arguments");
  std::set<std::string> words;
  for (size_t i = 0; i < args.size();) {
    if (args[i] == '_' || std::isalpha(static_cast<unsigned char>(args[i]))) {
      size_t end = WordEnd(args, i);
      std::string w(args.substr(i, end - i));
      if (!kBuiltin.count(w) && !constants.count(w)) words.insert(w);
      i = end;
    } else {
      ++i;
    }
  }
  if (!words.empty()) {
    std::string list;
    for (const auto& w : words) list += (list.empty() ? "" : ", ") + w;
    return Fail(why, "kernel template " + label + " depends on host names: " + list);
  }
  for (size_t i = 0; i < tmpl.tparams.size(); ++i) {
    const std::string& tname = tmpl.tparams[i].first;
    const std::optional<std::string>& fallback = tmpl.tparams[i].second;
    if (i >= values.size() && !fallback) return Fail(why, "kernel template " + label + ": missing template arguments");
    std::string value = i < values.size() ? values[i] : *fallback;
    auto same = std::find_if(out->begin(), out->end(), [&](const auto& v) { return v.first == tname; });
    if (same != out->end()) {
      same->second = value;
    } else {
      out->emplace_back(tname, value);
    }
  }
  return true;
}

// The device definition and host prototype of launcher kz_tl_<index>.
bool Launcher(size_t index, const std::string& name, const std::string& args, const KernelTemplate& tmpl,
              const std::set<std::string>& constants, std::string* def, std::string* proto, std::string* why) {
  Values values;
  if (!Arguments(name + args, args, tmpl, constants, &values, why)) return false;
  std::string params = tmpl.params;
  for (const auto& [tname, value] : values)
    params =
        ReplaceToken(params, tname, std::isdigit(static_cast<unsigned char>(value[0])) ? "(" + value + ")" : value);
  std::string names;
  for (const auto& p : SplitTop(params)) {
    std::string declared = DeclaredName(p);
    if (p.find('=') != kNpos || declared.empty() || kBuiltin.count(declared))
      return Fail(why, "kernel template " + name + ": unnamed or defaulted parameter " + PyRepr(p));
    names += (names.empty() ? "" : ", ") + declared;
  }
  std::string head =
      "void kz_tl_" + std::to_string(index) + "(KzLaunch kz_l" + (Strip(params).empty() ? "" : ", " + params) + ")";
  *def = head + " { " + name + args + "<<<kz_l.g, kz_l.b, kz_l.s, kz_l.st>>>(" + names + "); }\n";
  *proto = head + ";\n";
  return true;
}

struct Launch {
  size_t start, end;  // `name <args> <<<`
  std::string name;
  std::optional<std::string> args;
};

bool NameChar(char c) { return IsWord(c) || c == ':'; }

// re's `([\w:]+)\s*(<[^;{}]*?>)?\s*<<<` matched at p (a run of name characters).
std::optional<Launch> LaunchAt(std::string_view code, size_t p) {
  size_t q = p;
  while (q < code.size() && NameChar(code[q])) ++q;
  size_t r = SkipSpace(code, q);
  if (r < code.size() && code[r] == '<') {
    for (size_t g = r + 1; g < code.size() && code[g] != ';' && code[g] != '{' && code[g] != '}'; ++g) {
      size_t launch = code[g] == '>' ? SkipSpace(code, g + 1) : kNpos;  // the shortest <...> then <<<
      if (launch != kNpos && StartsWith(code, launch, "<<<"))
        return Launch{p, launch + 3, std::string(code.substr(p, q - p)), std::string(code.substr(r, g + 1 - r))};
    }
  }
  if (StartsWith(code, r, "<<<")) return Launch{p, r + 3, std::string(code.substr(p, q - p)), std::nullopt};
  return std::nullopt;
}

// Every launch in `code`, left to right, not overlapping (re.finditer).
std::vector<Launch> FindLaunches(std::string_view code) {
  std::vector<Launch> out;
  for (size_t p = 0; p < code.size();) {
    if (!NameChar(code[p])) {
      ++p;
      continue;
    }
    if (auto launch = LaunchAt(code, p)) {
      p = launch->end;
      out.push_back(std::move(*launch));
      continue;
    }
    while (p < code.size() && NameChar(code[p])) ++p;
  }
  return out;
}

std::string WithoutSpaces(std::string_view s) {
  std::string out;
  for (char c : s)
    if (!IsSpace(c)) out += c;
  return out;
}
}  // namespace

bool ParseKernelTemplate(std::string_view header, std::string_view name, KernelTemplate* out, std::string* why) {
  std::string label = "kernel template " + std::string(name);
  size_t lt = kNpos;
  for (size_t t = header.find("template"); t != kNpos && lt == kNpos; t = header.find("template", t + 1)) {
    size_t q = SkipSpace(header, t + 8);
    if (q < header.size() && header[q] == '<') lt = q;
  }
  if (lt == kNpos) return Fail(why, label + ": unrecognised template header");
  size_t t_end = Balanced(header, lt, '<', '>');
  if (t_end == kNpos) return Fail(why, "unbalanced brackets in a kernel template");
  for (const auto& p : SplitTop(header.substr(lt + 1, t_end - 1 - (lt + 1)))) {
    size_t eq = p.find('=');
    std::string_view decl = Strip(std::string_view(p).substr(0, eq));
    size_t ident = decl.size();
    while (ident > 0 && IsWord(decl[ident - 1])) --ident;
    if (ident == decl.size()) return Fail(why, label + ": unnamed template parameter");
    std::string_view fallback = eq == kNpos ? std::string_view() : Strip(std::string_view(p).substr(eq + 1));
    out->tparams.emplace_back(std::string(decl.substr(ident)),
                              fallback.empty() ? std::nullopt : std::optional<std::string>(fallback));
  }
  size_t open = NamedCallOpen(header.substr(t_end), name);
  if (open == kNpos) return Fail(why, label + ": unrecognised parameter list");
  open += t_end;
  size_t close = Balanced(header, open, '(', ')');
  if (close == kNpos) return Fail(why, "unbalanced brackets in a kernel template");
  out->params = std::string(header.substr(open + 1, close - 1 - (open + 1)));
  return true;
}

bool RewriteTemplateLaunches(std::string_view host_text, std::string_view host_code, const KernelTemplates& templates,
                             const std::set<std::string>& constants, TemplateLaunches* out, std::string* why) {
  std::map<std::pair<std::string, std::string>, size_t> chosen;
  size_t pos = 0;
  for (const auto& m : FindLaunches(host_code)) {
    size_t colon = m.name.rfind("::");
    std::string short_name = colon == kNpos ? m.name : m.name.substr(colon + 2);
    auto tmpl = std::find_if(templates.begin(), templates.end(), [&](const auto& t) { return t.first == short_name; });
    if (tmpl == templates.end()) continue;
    if (!m.args) return Fail(why, "kernel template " + m.name + " launched with deduced arguments");
    auto key = std::make_pair(m.name, WithoutSpaces(*m.args));
    auto [it, fresh] = chosen.emplace(key, chosen.size());
    if (fresh) {
      std::string def, proto;
      if (!Launcher(it->second, m.name, *m.args, tmpl->second, constants, &def, &proto, why)) return false;
      out->launchers += def;
      out->prototypes[short_name].push_back(proto);
    }
    size_t close = host_code.find(">>>", m.end);
    size_t paren = close == kNpos ? kNpos : host_code.find('(', close + 3);
    if (paren == kNpos || !Strip(host_code.substr(close + 3, paren - close - 3)).empty())
      return Fail(why, "unrecognised launch of kernel template " + m.name);
    bool empty = StartsWith(LStrip(host_code.substr(paren + 1)), 0, ")");
    out->host.append(Slice(host_text, pos, m.start));
    out->host += "kz_tl_" + std::to_string(it->second) + "(KzLaunch(" + std::string(Slice(host_text, m.end, close)) +
                 ")" + (empty ? "" : ", ");
    pos = paren + 1;
  }
  out->host.append(Slice(host_text, pos, host_text.size()));
  return true;
}

}  // namespace kz::compile::cuda_split
