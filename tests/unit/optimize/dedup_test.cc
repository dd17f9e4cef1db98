// kz optimize's duplicate detection (src/optimize/dedup.h): reformatting, comments and a
// reformatted kernel string are the same candidate; a real change is not; a one-token change
// of a long kernel is a near duplicate; odd input (unclosed strings and comments) ends.
#include "optimize/dedup.h"

#include <gtest/gtest.h>

namespace kz::optimize {
namespace {

const char* kBase = R"PY(import torch
from torch.utils.cpp_extension import load_inline

src = """
__global__ void relu(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;  // one thread an element
  if (i < n) y[i] = x[i] > 0 ? x[i] : 0;
}
"""
ext = load_inline("relu", cpp_sources="", cuda_sources=src, functions=["relu"])

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return ext.relu(x)  # the kernel
)PY";

TEST(DedupTest, FormattingAndCommentsDoNotMakeANewCandidate) {
  std::string reformatted = R"PY(import torch
from torch.utils.cpp_extension import load_inline
# a new comment
src = """
/* the same kernel, laid out differently */
__global__ void relu(const float* x, float* y, int n)
{
    int i = blockIdx.x*blockDim.x + threadIdx.x;
    if (i < n)   y[i] = x[i] > 0 ? x[i] : 0;
}
"""
ext = load_inline("relu", cpp_sources="", cuda_sources=src, functions=["relu"])

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return ext.relu(x)
)PY";
  EXPECT_EQ(NormalisedHash(kBase), NormalisedHash(reformatted));
  std::string changed = kBase;
  changed.replace(changed.find("blockDim.x +"), 12, "blockDim.x * 2 +");
  EXPECT_NE(NormalisedHash(kBase), NormalisedHash(changed));
  EXPECT_NE(NormalisedHash("x = a // b\n"), NormalisedHash("x = a\n")) << "Python's // is an operator, not a comment";
}

TEST(DedupTest, SeenSourcesSortsDuplicatesNearDuplicatesAndNewOnes) {
  SeenSources seen(0.8);
  EXPECT_EQ(seen.Check(kBase), SeenSources::Verdict::kNew);
  seen.Add(kBase);
  seen.Add(kBase);
  EXPECT_EQ(seen.size(), 1u);
  std::string spaced = std::string(kBase) + "\n\n# trailing\n";
  EXPECT_EQ(seen.Check(spaced), SeenSources::Verdict::kDuplicate);
  std::string tweaked = kBase;
  tweaked.replace(tweaked.find("? x[i] : 0"), 10, "? x[i] : 0.0f");
  double closest = 0;
  EXPECT_EQ(seen.Check(tweaked, &closest), SeenSources::Verdict::kNearDuplicate) << closest;
  EXPECT_GT(closest, 0.8);
  EXPECT_LT(closest, 1.0);
  EXPECT_EQ(seen.Check("import triton\n\nclass ModelNew:\n    pass\n", &closest), SeenSources::Verdict::kNew) << closest;
}

TEST(DedupTest, SimilarityBounds) {
  auto a = SourceTokens(kBase);
  EXPECT_DOUBLE_EQ(Similarity(a, a), 1.0);
  EXPECT_DOUBLE_EQ(Similarity({}, {}), 1.0);
  EXPECT_DOUBLE_EQ(Similarity({"a"}, {"b"}), 0.0);
}

TEST(DedupTest, UnclosedStringsAndCommentsEnd) {
  EXPECT_FALSE(SourceTokens("s = \"\"\" /* never closed").empty());
  EXPECT_FALSE(SourceTokens("s = 'abc").empty());
  EXPECT_FALSE(SourceTokens("s = \"a\\\\").empty());
  EXPECT_EQ(SourceTokens("# only a comment").size(), 0u);
}

}  // namespace
}  // namespace kz::optimize
