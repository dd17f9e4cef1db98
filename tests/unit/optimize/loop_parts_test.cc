// The pure parts of kz optimize's loop: reading a verdict (speedup, cell, diagnostics), the
// short-term memory of failed changes, the mutation rule and the prompt.
#include <gtest/gtest.h>

#include "optimize/diagnostics.h"
#include "optimize/mutation.h"
#include "optimize/short_memory.h"

namespace kz::optimize {
namespace {
using json = nlohmann::json;

json TimedVerdict(double speedup, double lo, double hi) {
  return {{"status", "correct"}, {"reason", "matched"},
          {"stages", {{"timing", {{"status", "ok"}, {"speedup", speedup}, {"speedup_ci95", {lo, hi}},
                                  {"candidate", {{"median_us", 10.0}}}, {"reference", {{"median_us", 12.0}}}}},
                      {"trace", {{"calls", {{{"candidate_kernels", 2},
                                              {"kernels", {{{"name", "relu_kernel"}, {"class", "candidate"},
                                                            {"count", 2}, {"us", 3.5}, {"stream", 7}}}}}}}}}}}};
}

TEST(DiagnosticsTest, SpeedupAndIntervalOfACorrectTimedVerdict) {
  SpeedupFacts s = ReadSpeedup(TimedVerdict(1.2, 1.1, 1.3));
  EXPECT_TRUE(s.timed);
  EXPECT_DOUBLE_EQ(s.median, 1.2);
  EXPECT_DOUBLE_EQ(s.lo, 1.1);
  EXPECT_DOUBLE_EQ(s.hi, 1.3);
}

TEST(DiagnosticsTest, AnIncorrectOrUntimedVerdictHasNoSpeedup) {
  json v = TimedVerdict(1.2, 1.1, 1.3);
  v["status"] = "incorrect";
  EXPECT_FALSE(ReadSpeedup(v).timed);
  EXPECT_EQ(ReadSpeedup(json{{"status", "correct"}}).median, 0);
}

TEST(DiagnosticsTest, CellCountsKernelsDefinedAndLaunched) {
  std::string src = "@triton.jit\ndef a(): pass\n@triton.jit\ndef b(): pass\n";
  EXPECT_EQ(KernelsDefined(src), 2);
  EXPECT_EQ(BehaviourCell(src, TimedVerdict(1, 1, 1)), (std::vector<int>{2, 2, 0}));
  EXPECT_EQ(BehaviourCell("x = 1", json::object()), (std::vector<int>{1, 0, 0}));  // at least one bucket
}

TEST(DiagnosticsTest, MismatchTimingAndTraceAreStated) {
  json bad = {{"status", "incorrect"}, {"reason", "trial 0 output 0: 9 elements exceed"},
              {"stages", {{"correctness", {{"trials", {{{"pass", false},
                  {"outputs", {{{"mismatched", 9}, {"max_abs_err", 0.5}, {"rel_l2", 0.01}, {"nan_mismatch", 0}}}}}}}}}}}};
  std::string d = Diagnose(bad);
  EXPECT_NE(d.find("status: incorrect"), std::string::npos);
  EXPECT_NE(d.find("mismatch: output 0 9 elements differ, max_abs_err 0.5"), std::string::npos) << d;
  std::string t = Diagnose(TimedVerdict(1.2, 1.1, 1.3));
  EXPECT_NE(t.find("speedup 1.200 [1.100, 1.300]"), std::string::npos) << t;
  EXPECT_NE(t.find("relu_kernel (candidate) x2, 3.5 us, stream 7"), std::string::npos) << t;
}

TEST(DiagnosticsTest, TheRooflinePlacesTheCellAndIsStated) {
  json v = TimedVerdict(1.2, 1.1, 1.3);
  v["stages"]["timing"]["roofline"] = {{"bound", "memory"}, {"attained_gbps", 2000.0}, {"ceiling_gbps", 4000.0},
                                       {"fraction_of_ceiling", 0.5}, {"intensity_flop_per_byte", 0.0},
                                       {"ridge_flop_per_byte", 12.5}, {"attained_tflops", 0.0}, {"ceiling_tflops", 50.0}};
  EXPECT_EQ(BehaviourCell("__global__ void k() {}", v)[2], 1);
  std::string d = Diagnose(v);
  EXPECT_NE(d.find("roofline: memory-bound: 2 TB/s of 4 TB/s measured copy bandwidth (50 %); intensity 0 FLOP/B, "
                   "ridge 12.5"),
            std::string::npos)
      << d;
  v["stages"]["timing"]["roofline"]["bound"] = "compute";
  v["stages"]["timing"]["roofline"]["attained_tflops"] = 27.5;
  v["stages"]["timing"]["roofline"]["fraction_of_ceiling"] = 0.55;
  EXPECT_EQ(BehaviourCell("", v)[2], 2);
  EXPECT_NE(Diagnose(v).find("compute-bound: 27.5 TFLOP/s of 50 TFLOP/s measured matmul rate (55 %)"), std::string::npos);
}

TEST(DiagnosticsTest, LongFactsAreCutAtALineAndMarked) {
  json v = {{"status", "compile_error"}, {"reason", "r"}, {"error", {{"kind", "compile"}, {"message", std::string(5000, 'e')}}}};
  std::string d = Diagnose(v, 300);
  EXPECT_LE(d.size(), 320u);
  EXPECT_NE(d.find("[... cut]"), std::string::npos);
}

TEST(ShortMemoryTest, TheSameChangeFromTheSameParentIsRefusedAgain) {
  std::string parent = "BLOCK = 256\nx = tl.load(p)\n";
  Change c = ChangeOf(parent, "BLOCK = 1024\nx = tl.load(p)\n");
  EXPECT_FALSE(c.signature.empty());
  EXPECT_EQ(c.summary, "1024");
  ShortTermMemory m;
  EXPECT_FALSE(m.Failed("c1", c));
  m.RecordFailure("c1", c, "incorrect");
  EXPECT_TRUE(m.Failed("c1", c));
  EXPECT_TRUE(m.Failed("c1", ChangeOf(parent, "BLOCK = 1024  # reformatted\nx = tl.load(p)\n")));
  EXPECT_FALSE(m.Failed("c2", c));  // another lineage may try it
  EXPECT_FALSE(m.Failed("c1", ChangeOf(parent, "BLOCK = 2048\nx = tl.load(p)\n")));
  ASSERT_EQ(m.Failures("c1", 5).size(), 1u);
  EXPECT_EQ(m.Failures("c1", 5)[0], "added {1024} -> incorrect");
}

TEST(ShortMemoryTest, NoAddedTokensIsNeverAMechanism) {
  Change c = ChangeOf("a = 1\nb = 2\n", "b = 2\n");
  EXPECT_TRUE(c.signature.empty());
  ShortTermMemory m;
  m.RecordFailure("p", c, "slower");
  EXPECT_FALSE(m.Failed("p", c));
}

TEST(MutationTest, TheRuleInOrder) {
  EXPECT_EQ(ChooseMutation({false, false, false, 0.1}), Mutation::kSeed);
  EXPECT_EQ(ChooseMutation({true, true, true, 0.1}), Mutation::kFix);
  EXPECT_EQ(ChooseMutation({false, true, false, 0.9}), Mutation::kFix);
  EXPECT_EQ(ChooseMutation({true, false, true, 0.2}), Mutation::kCrossover);
  EXPECT_EQ(ChooseMutation({true, false, true, 0.3}), Mutation::kRewrite);
  EXPECT_EQ(ChooseMutation({true, false, false, 0.1}), Mutation::kRewrite);
}

TEST(MutationTest, PromptCarriesParentFactsAndWhatFailed) {
  std::string tmpl = "{{backend}}|{{task_source}}|{{context}}|{{instruction}}";
  PromptParts p{"class Model: ...", "triton", "class ModelNew: A", "status: correct", "class ModelNew: B",
                {"added {1024} -> incorrect"}, ""};
  std::string out, err;
  ASSERT_TRUE(RenderOptimizePrompt(tmpl, Mutation::kCrossover, p, &out, &err)) << err;
  for (const char* want : {"Triton|class Model: ...", "Implementation A", "class ModelNew: A", "status: correct",
                           "class ModelNew: B", "do not repeat", "added {1024} -> incorrect", "combine"})
    EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
  ASSERT_TRUE(RenderOptimizePrompt(tmpl, Mutation::kSeed, {"m", "cuda", "", "", "", {}, ""}, &out, &err));
  EXPECT_NE(out.find("CUDA"), std::string::npos);
  EXPECT_EQ(out.find("```"), std::string::npos);  // no parent block for a seed
  EXPECT_FALSE(RenderOptimizePrompt("{{unknown}}", Mutation::kSeed, p, &out, &err));
}

}  // namespace
}  // namespace kz::optimize
