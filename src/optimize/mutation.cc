#include "optimize/mutation.h"

#include <map>

#include "generate/prompt.h"

namespace kz::optimize {

const char* MutationName(Mutation m) {
  switch (m) {
    case Mutation::kSeed: return "seed";
    case Mutation::kRewrite: return "rewrite";
    case Mutation::kFix: return "fix";
    case Mutation::kCrossover: return "crossover";
    case Mutation::kApply: return "apply";
  }
  return "?";
}

Mutation ChooseMutation(const MutationInputs& in) {
  if (in.has_failure) return Mutation::kFix;
  if (!in.has_parent) return Mutation::kSeed;
  if (in.has_other && in.u < 0.25) return Mutation::kCrossover;
  if (in.has_experience && WouldApply(in)) return Mutation::kApply;
  return Mutation::kRewrite;
}

bool WouldApply(const MutationInputs& in) {
  return !in.has_failure && in.has_parent && !(in.has_other && in.u < 0.25) && in.u >= 0.25 && in.u < 0.5;
}

namespace {
std::string Block(const std::string& title, const std::string& code) {
  return title + "\n```python\n" + code + (code.empty() || code.back() == '\n' ? "" : "\n") + "```\n\n";
}
}  // namespace

bool RenderOptimizePrompt(const std::string& tmpl, Mutation m, const PromptParts& p, std::string* out,
                          std::string* err) {
  std::string context, instruction;
  switch (m) {
    case Mutation::kSeed:
      instruction = "write a first correct " + p.backend + " implementation.";
      break;
    case Mutation::kRewrite:
      context = Block("The current best implementation (verified correct):", p.parent_source) +
                "What the verifier measured:\n" + p.parent_facts + "\n";
      instruction = "make it faster: change the algorithm, the memory access pattern, the tiling or the fusion; "
                    "keep it correct.";
      break;
    case Mutation::kFix:
      context = Block("A previous attempt, which the verifier refused:", p.parent_source) +
                "What the verifier reported:\n" + p.parent_facts + "\n";
      instruction = "fix what the verifier reported; keep the idea if it is sound.";
      break;
    case Mutation::kApply:
      context = Block("The current best implementation (verified correct):", p.parent_source) +
                "What the verifier measured:\n" + p.parent_facts + "\n" +
                "An optimisation that worked on a similar kernel (from the experience library):\n" + p.experience + "\n\n";
      instruction = "apply that optimisation, adapted, to the current implementation; keep it correct.";
      break;
    case Mutation::kCrossover:
      context = Block("Implementation A (verified correct):", p.parent_source) + "What the verifier measured for A:\n" +
                p.parent_facts + "\n" + Block("Implementation B (verified correct):", p.other_source);
      instruction = "combine the best ideas of A and B into one faster implementation.";
      break;
  }
  if (!p.failed.empty()) {
    context += "Already tried from this starting point, and refused or slower (do not repeat):\n";
    for (const auto& f : p.failed) context += "- " + f + "\n";
    context += "\n";
  }
  return generate::RenderTemplate(tmpl,
                                  {{"backend", p.backend == "cuda" ? "CUDA (torch.utils.cpp_extension.load_inline)"
                                                                    : "Triton"},
                                   {"task_source", p.task_source},
                                   {"context", context},
                                   {"instruction", instruction}},
                                  out, err);
}

}  // namespace kz::optimize
