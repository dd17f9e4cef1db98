#include "verify/sample.h"

#include <gtest/gtest.h>

#include "util/fs.h"

namespace kz::verify {

TEST(Sample, DetectBackend) {
  EXPECT_EQ(DetectBackend("from torch.utils.cpp_extension import load_inline"), "cuda");
  EXPECT_EQ(DetectBackend("import triton"), "triton");
  EXPECT_EQ(DetectBackend("mod = load_inline(name='x', cpp_sources=s)"), "cuda");
  EXPECT_EQ(DetectBackend("m = cpp_extension.load_inline (\n  name='x')"), "cuda");
  EXPECT_EQ(DetectBackend("\"\"\"Unlike a load_inline candidate, this is Triton.\"\"\"\nimport triton"), "triton");
  EXPECT_EQ(DetectBackend("# load_inline(...) was tried\nimport triton"), "triton");
}

TEST(Sample, ManifestPicksExpectationForTheDevice) {
  std::string err;
  std::string dir = util::MakeTempDir(testing::TempDir(), "man-", &err);
  std::string p = dir + "/m.jsonl";
  ASSERT_TRUE(util::WriteFileAtomic(
      p, "{\"task\": \"t.py\", \"candidate\": \"/abs/c.py\", \"backend\": \"cuda\", "
         "\"expect_gpu\": \"correct\", \"expect_cpu\": \"not_run\"}\n\n", &err));
  std::vector<Sample> cpu, gpu;
  ASSERT_TRUE(ReadManifest(p, "/base", false, &cpu, &err)) << err;
  ASSERT_TRUE(ReadManifest(p, "/base", true, &gpu, &err)) << err;
  ASSERT_EQ(cpu.size(), 1u);
  EXPECT_EQ(cpu[0].task_path, "/base/t.py");
  EXPECT_EQ(cpu[0].candidate_path, "/abs/c.py");
  EXPECT_EQ(*cpu[0].expect, "not_run");
  EXPECT_EQ(*gpu[0].expect, "correct");
  util::RemoveAll(dir);
}

TEST(Sample, MalformedManifestLineNamesTheLine) {
  std::string err;
  std::string dir = util::MakeTempDir(testing::TempDir(), "man-", &err);
  std::string p = dir + "/m.jsonl";
  ASSERT_TRUE(util::WriteFileAtomic(p, "{\"task\": \"t.py\", \"candidate\": \"c.py\"}\n{oops\n", &err));
  std::vector<Sample> out;
  EXPECT_FALSE(ReadManifest(p, "/b", false, &out, &err));
  EXPECT_NE(err.find(":2:"), std::string::npos) << err;
  util::RemoveAll(dir);
}

}  // namespace kz::verify
