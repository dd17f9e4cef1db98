#include "generate/extract.h"

#include <gtest/gtest.h>

namespace kz::generate {
namespace {

const char* kCode = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n";

std::string Fence(const std::string& info, const std::string& body) { return "```" + info + "\n" + body + "```\n"; }

TEST(Extract, PythonBlock) {
  auto x = ExtractCode("Here it is:\n" + Fence("python", kCode) + "Done.", "stop", false);
  EXPECT_FALSE(x.reason);
  EXPECT_EQ(x.code, kCode);
  EXPECT_EQ(x.blocks, 1);
}

TEST(Extract, PyAndBareAndPython3Fences) {
  for (std::string info : {"py", "", "python3", "Python"}) {
    auto x = ExtractCode(Fence(info, kCode), "stop", false);
    EXPECT_FALSE(x.reason) << info;
    EXPECT_EQ(x.code, kCode) << info;
  }
}

TEST(Extract, OtherLanguagesAreNotCandidates) {
  auto x = ExtractCode(Fence("cpp", "class ModelNew {};\n"), "stop", false);
  ASSERT_TRUE(x.reason);
  EXPECT_EQ(*x.reason, NoCodeReason::kNoCode);
}

TEST(Extract, LastBlockDefiningTheClassWins) {
  std::string first = "class ModelNew(nn.Module):\n    v = 1\n", second = "class ModelNew(nn.Module):\n    v = 2\n";
  auto x = ExtractCode(Fence("python", first) + "better:\n" + Fence("python", second) + Fence("python", "print(1)\n"),
                       "stop", false);
  EXPECT_EQ(x.code, second);
  EXPECT_EQ(x.blocks, 3);
}

TEST(Extract, BlocksWithoutTheClass) {
  auto x = ExtractCode(Fence("python", "def f():\n    return 1\n"), "stop", false);
  ASSERT_TRUE(x.reason);
  EXPECT_EQ(*x.reason, NoCodeReason::kNoClass);
  EXPECT_EQ(x.code, "");
}

TEST(Extract, ClassNameMustMatchExactly) {
  EXPECT_TRUE(DefinesClass("class ModelNew(nn.Module):", "ModelNew"));
  EXPECT_TRUE(DefinesClass("  class ModelNew :", "ModelNew"));
  EXPECT_FALSE(DefinesClass("class ModelNewer(nn.Module):", "ModelNew"));
  EXPECT_FALSE(DefinesClass("# class ModelNew(nn.Module):", "ModelNew"));
  EXPECT_TRUE(DefinesClass("class Model(nn.Module):", "Model"));
  EXPECT_FALSE(DefinesClass("class ModelNew(nn.Module):", "Model"));
}

TEST(Extract, ProposerLooksForModel) {
  std::string mod = "class Model(nn.Module):\n    pass\ndef get_inputs():\n    return []\n";
  EXPECT_EQ(ExtractCode(Fence("python", mod), "stop", true).code, mod);
  auto x = ExtractCode(Fence("python", kCode), "stop", true);
  ASSERT_TRUE(x.reason);
  EXPECT_EQ(*x.reason, NoCodeReason::kNoClass);
}

TEST(Extract, NoFenceAtAll) {
  auto x = ExtractCode("I cannot help with that.", "stop", false);
  ASSERT_TRUE(x.reason);
  EXPECT_EQ(*x.reason, NoCodeReason::kNoCode);
}

TEST(Extract, UnfencedCodeDefiningTheClassIsTaken) {
  auto x = ExtractCode("import torch\nclass ModelNew(torch.nn.Module):\n    pass", "stop", false);
  EXPECT_FALSE(x.reason);
  EXPECT_EQ(x.code, "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n");
}

TEST(Extract, TruncatedInsideTheBlock) {
  auto x = ExtractCode("```python\nimport torch\nclass ModelNew(torch.nn.Module):\n    def forw", "length", false);
  ASSERT_TRUE(x.reason);
  EXPECT_EQ(*x.reason, NoCodeReason::kTruncated);
}

TEST(Extract, TruncatedAfterACompleteBlockKeepsIt) {
  auto x = ExtractCode(Fence("python", kCode) + "Explanation: the kernel first lo", "length", false);
  EXPECT_FALSE(x.reason);
  EXPECT_EQ(x.code, kCode);
}

TEST(Extract, UnclosedBlockWithoutTruncation) {
  auto x = ExtractCode(std::string("```python\n") + kCode, "stop", false);
  ASSERT_TRUE(x.reason);
  EXPECT_EQ(*x.reason, NoCodeReason::kUnclosed);
}

TEST(Extract, InvalidUtf8) {
  auto x = ExtractCode(Fence("python", std::string("# caf\xe9\n") + kCode), "stop", false);
  ASSERT_TRUE(x.reason);
  EXPECT_EQ(*x.reason, NoCodeReason::kNotUtf8);
  EXPECT_STREQ(ReasonName(*x.reason), "not_utf8");
}

TEST(Extract, EmptyReply) {
  EXPECT_EQ(*ExtractCode("  \n\n", "stop", false).reason, NoCodeReason::kEmpty);
  EXPECT_EQ(*ExtractCode("", "length", false).reason, NoCodeReason::kTruncated);
}

TEST(Extract, ThinkingIsSkipped) {
  std::string think = "<think>\n" + Fence("python", "class ModelNew:\n    draft = 1\n") + "</think>\n";
  auto x = ExtractCode(think + Fence("python", kCode), "stop", false);
  EXPECT_EQ(x.code, kCode);
  auto only = ExtractCode(think + "no answer", "stop", false);
  ASSERT_TRUE(only.reason);
  EXPECT_EQ(*only.reason, NoCodeReason::kNoCode);
}

TEST(Extract, IndentedFencesAndLongerFences) {
  auto x = ExtractCode("  ```python\n" + std::string(kCode) + "  ```\n", "stop", false);
  EXPECT_EQ(x.code, kCode);
  auto y = ExtractCode("````python\n" + std::string(kCode) + "````\n", "stop", false);
  EXPECT_EQ(y.code, kCode);
}

TEST(Extract, CrLfLines) {
  auto x = ExtractCode("```python\r\nclass ModelNew(nn.Module):\r\n    pass\r\n```\r\n", "stop", false);
  EXPECT_FALSE(x.reason);
  EXPECT_TRUE(DefinesClass(x.code, "ModelNew"));
}

TEST(Extract, ReasonNames) {
  EXPECT_STREQ(ReasonName(NoCodeReason::kTruncated), "truncated");
  EXPECT_STREQ(ReasonName(NoCodeReason::kNoCode), "no_code");
  EXPECT_STREQ(ReasonName(NoCodeReason::kNoClass), "no_class");
  EXPECT_STREQ(ReasonName(NoCodeReason::kEmpty), "empty_reply");
  EXPECT_STREQ(ReasonName(NoCodeReason::kUnclosed), "unclosed_block");
}

}  // namespace
}  // namespace kz::generate
