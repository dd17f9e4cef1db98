#include "train/teacher.h"

#include <algorithm>
#include <cstdio>

#include "train/mix.h"

namespace kz::train {
namespace {

// splitmix64: a portable, exactly specified stream per (seed, index).
class Rng {
 public:
  Rng(uint64_t seed, int64_t index) : s_(seed * 0x9E3779B97F4A7C15ull ^ (uint64_t(index) + 0x632BE59BD9B4E019ull)) {}
  uint64_t Next() { return Mix64(s_ += 0x9E3779B97F4A7C15ull); }
  int64_t Uniform(int64_t lo, int64_t hi) { return lo + int64_t(Next() % uint64_t(hi - lo + 1)); }  // [lo, hi]

 private:
  uint64_t s_;
};

// One unary op: its statement on `y` in Torch and in Triton ({c}: the op's constant).
struct UnaryOp {
  const char* name;
  const char* torch;
  const char* triton;
};

constexpr UnaryOp kUnary[] = {
    {"relu", "y = torch.relu(y)", "y = tl.maximum(y, 0.0)"},
    {"sigmoid", "y = torch.sigmoid(y)", "y = tl.sigmoid(y)"},
    {"silu", "y = torch.nn.functional.silu(y)", "y = y * tl.sigmoid(y)"},
    {"tanh", "y = torch.tanh(y)", "y = 2.0 * tl.sigmoid(2.0 * y) - 1.0"},
    {"abs", "y = torch.abs(y)", "y = tl.abs(y)"},
    {"square", "y = y * y", "y = y * y"},
    {"leaky_relu", "y = torch.nn.functional.leaky_relu(y, 0.1)", "y = tl.where(y > 0, y, 0.1 * y)"},
    {"clamp", "y = torch.clamp(y, -1.0, 1.0)", "y = tl.minimum(tl.maximum(y, -1.0), 1.0)"},
    {"exp_neg_abs", "y = torch.exp(-torch.abs(y))", "y = tl.exp(-tl.abs(y))"},
    {"scale", "y = y * {c}", "y = y * {c}"},
    {"shift", "y = y + {c}", "y = y + {c}"},
};

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

struct Chain {
  std::vector<std::string> names, torch, triton;
};

Chain DrawChain(Rng& rng, int max_chain) {
  Chain c;
  int n = int(rng.Uniform(1, max_chain));
  for (int i = 0; i < n; ++i) {
    const UnaryOp& op = kUnary[rng.Uniform(0, int64_t(std::size(kUnary)) - 1)];
    char constant[16];
    std::snprintf(constant, sizeof constant, "%.2f", 0.25 * double(rng.Uniform(1, 12)));
    c.names.push_back(op.name);
    c.torch.push_back(Replace(op.torch, "{c}", constant));
    c.triton.push_back(Replace(op.triton, "{c}", constant));
  }
  return c;
}

std::string Indent(const std::vector<std::string>& lines, const char* pad) {
  std::string out;
  for (const auto& l : lines) out += pad + l + "\n";
  return out;
}

struct Shape {
  bool vector_input = false;  // w: [N]
  std::string binary;         // "mul" | "add" (broadcast)
  std::string last;           // row op: sum | amax | mean | softmax | log_softmax; "" elementwise
};

std::string TaskSource(const TeacherPair& p, const Shape& s, const Chain& c) {
  std::string args = s.vector_input ? "x, w" : "x";
  std::vector<std::string> body;
  body.push_back(s.vector_input ? (s.binary == "mul" ? "y = x * w" : "y = x + w") : "y = x");
  body.insert(body.end(), c.torch.begin(), c.torch.end());
  body.push_back(s.last.empty() ? "return y" : "return torch." + s.last + "(y, dim=1)");
  std::string inputs = s.vector_input ? "[torch.randn(M, N), torch.randn(N)]" : "[torch.randn(M, N)]";
  std::string ops;
  for (const auto& o : p.ops) ops += (ops.empty() ? "" : ", ") + o;
  return "import torch\nimport torch.nn as nn\n\nM = " + std::to_string(p.rows) + "\nN = " + std::to_string(p.cols) +
         "\n\n\nclass Model(nn.Module):\n    \"\"\"" + p.family + ": " + ops + "\"\"\"\n\n    def __init__(self):\n        super().__init__()\n\n    def forward(self, " + args + "):\n" +
         Indent(body, "        ") + "\n\ndef get_inputs():\n    return " + inputs +
         "\n\n\ndef get_init_inputs():\n    return []\n";
}

const char* kHeader = "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n\n\n";

std::string ElementwiseKernel(const Shape& s, const Chain& c) {
  std::string params = s.vector_input ? "x_ptr, w_ptr, out_ptr, n_elements, N, BLOCK: tl.constexpr"
                                      : "x_ptr, out_ptr, n_elements, BLOCK: tl.constexpr";
  std::vector<std::string> body = {"offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
                                   "mask = offsets < n_elements", "y = tl.load(x_ptr + offsets, mask=mask)"};
  if (s.vector_input) {
    body.push_back("w = tl.load(w_ptr + offsets % N, mask=mask)");
    body.push_back(s.binary == "mul" ? "y = y * w" : "y = y + w");
  }
  body.insert(body.end(), c.triton.begin(), c.triton.end());
  body.push_back("tl.store(out_ptr + offsets, y, mask=mask)");
  std::string launch = s.vector_input ? "fused_kernel[grid](x, w, out, n, x.shape[1], BLOCK=BLOCK)"
                                      : "fused_kernel[grid](x, out, n, BLOCK=BLOCK)";
  std::string args = s.vector_input ? "x, w" : "x";
  std::string prep = s.vector_input ? "        x, w = x.contiguous(), w.contiguous()\n" : "        x = x.contiguous()\n";
  return std::string(kHeader) + "@triton.jit\ndef fused_kernel(" + params + "):\n" + Indent(body, "    ") +
         "\n\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n    def forward(self, " +
         args + "):\n" + prep +
         "        out = torch.empty_like(x)\n        n = x.numel()\n        BLOCK = 1024\n"
         "        grid = (triton.cdiv(n, BLOCK),)\n        " + launch + "\n        return out\n";
}

// One program per row, the whole row in one block (BLOCK = next power of two >= N).
std::string RowKernel(const Shape& s, const Chain& c) {
  std::string params = s.vector_input ? "x_ptr, w_ptr, out_ptr, N, BLOCK: tl.constexpr"
                                      : "x_ptr, out_ptr, N, BLOCK: tl.constexpr";
  std::vector<std::string> body = {"row = tl.program_id(0)", "cols = tl.arange(0, BLOCK)", "mask = cols < N",
                                   "y = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0)"};
  if (s.vector_input) {
    body.push_back("w = tl.load(w_ptr + cols, mask=mask, other=0.0)");
    body.push_back(s.binary == "mul" ? "y = y * w" : "y = y + w");
  }
  body.insert(body.end(), c.triton.begin(), c.triton.end());
  bool per_row = s.last == "sum" || s.last == "amax" || s.last == "mean";
  if (s.last == "sum" || s.last == "mean") {
    body.push_back("y = tl.where(mask, y, 0.0)");
    body.push_back(s.last == "sum" ? "r = tl.sum(y, axis=0)" : "r = tl.sum(y, axis=0) / N");
    body.push_back("tl.store(out_ptr + row, r)");
  } else if (s.last == "amax") {
    body.push_back("y = tl.where(mask, y, float(\"-inf\"))");
    body.push_back("tl.store(out_ptr + row, tl.max(y, axis=0))");
  } else {  // softmax | log_softmax
    body.push_back("y = tl.where(mask, y, float(\"-inf\"))");
    body.push_back("y = y - tl.max(y, axis=0)");
    body.push_back("e = tl.where(mask, tl.exp(y), 0.0)");
    body.push_back("s = tl.sum(e, axis=0)");
    body.push_back(s.last == "softmax" ? "r = e / s" : "r = y - tl.log(s)");
    body.push_back("tl.store(out_ptr + row * N + cols, r, mask=mask)");
  }
  std::string args = s.vector_input ? "x, w" : "x";
  std::string prep = s.vector_input ? "        x, w = x.contiguous(), w.contiguous()\n" : "        x = x.contiguous()\n";
  std::string alloc = per_row ? "        out = torch.empty((rows,), dtype=x.dtype, device=x.device)\n"
                              : "        out = torch.empty_like(x)\n";
  std::string launch = s.vector_input ? "row_kernel[(rows,)](x, w, out, cols, BLOCK=triton.next_power_of_2(cols))"
                                      : "row_kernel[(rows,)](x, out, cols, BLOCK=triton.next_power_of_2(cols))";
  return std::string(kHeader) + "@triton.jit\ndef row_kernel(" + params + "):\n" + Indent(body, "    ") +
         "\n\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n    def forward(self, " +
         args + "):\n" + prep + "        rows, cols = x.shape\n" + alloc + "        " + launch + "\n        return out\n";
}

}  // namespace

const std::vector<std::string>& FamilyNames() {
  static const std::vector<std::string> names = {"elementwise", "broadcast", "row_reduce", "softmax"};
  return names;
}

std::string Validate(const TeacherOptions& o) {
  for (const auto& f : o.families)
    if (std::find(FamilyNames().begin(), FamilyNames().end(), f) == FamilyNames().end())
      return "unknown family '" + f + "' (known: elementwise, broadcast, row_reduce, softmax)";
  if (o.max_chain < 1 || o.max_chain > 8) return "max_chain must be 1..8";
  if (o.min_rows < 1 || o.min_rows > o.max_rows) return "rows: need 1 <= min_rows <= max_rows";
  if (o.min_cols < 1 || o.min_cols > o.max_cols) return "cols: need 1 <= min_cols <= max_cols";
  if (o.max_cols > 16384) return "max_cols above 16384: a row no longer fits one block";
  if (o.min_rows * o.min_cols > o.max_elements) return "max_elements is below min_rows * min_cols";
  return "";
}

TeacherPair MakePair(const TeacherOptions& o, int64_t index) {
  Rng rng(o.seed, index);
  const auto& families = o.families.empty() ? FamilyNames() : o.families;
  TeacherPair p;
  p.family = families[rng.Uniform(0, int64_t(families.size()) - 1)];
  char id[64];
  std::snprintf(id, sizeof id, "teach_%04lld_%s", static_cast<long long>(index), p.family.c_str());
  p.id = id;
  p.cols = rng.Uniform(o.min_cols, o.max_cols);
  p.rows = rng.Uniform(o.min_rows, std::max(o.min_rows, std::min(o.max_rows, o.max_elements / p.cols)));
  Shape s;
  if (p.family == "broadcast") {
    s.vector_input = true;
    s.binary = rng.Uniform(0, 1) ? "mul" : "add";
  }
  static const char* const kReductions[] = {"sum", "amax", "mean"};
  if (p.family == "row_reduce") s.last = kReductions[rng.Uniform(0, 2)];
  if (p.family == "softmax") s.last = rng.Uniform(0, 1) ? "softmax" : "log_softmax";
  Chain c = DrawChain(rng, o.max_chain);
  if (s.vector_input) p.ops.push_back(s.binary);
  p.ops.insert(p.ops.end(), c.names.begin(), c.names.end());
  if (!s.last.empty()) p.ops.push_back(s.last);
  p.task_source = TaskSource(p, s, c);
  p.kernel_source = s.last.empty() ? ElementwiseKernel(s, c) : RowKernel(s, c);
  return p;
}

}  // namespace kz::train
