// One sample verified on the CPU in a test's own directory (task.py and cand.py written,
// cache inside, no screen): the shared set-up of the verifier tests.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "util/fs.h"
#include "verify/sample.h"

namespace kz::verify {

class CpuSample {
 public:
  explicit CpuSample(const std::string& prefix) {
    std::string err;
    dir = util::MakeTempDir(::testing::TempDir(), prefix, &err);
    EXPECT_FALSE(dir.empty()) << err;
    EXPECT_TRUE(util::WriteFileAtomic(dir + "/task.py", "class Model: pass\n", &err)) << err;
    EXPECT_TRUE(util::WriteFileAtomic(dir + "/cand.py", "class ModelNew: pass\n", &err)) << err;
    options.cpu_only = true;
    options.screen = false;
    options.cache_dir = dir + "/cache";
    options.timeout_s = 120;
  }
  ~CpuSample() { util::RemoveAll(dir); }
  CpuSample(const CpuSample&) = delete;
  CpuSample& operator=(const CpuSample&) = delete;

  Sample Named(const std::string& name) const {
    return {dir + "/task.py", dir + "/cand.py", "triton", std::nullopt, name};
  }

  std::string dir;
  VerifyOptions options;
};

}  // namespace kz::verify
