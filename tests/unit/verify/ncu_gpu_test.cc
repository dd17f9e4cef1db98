// The real ncu on a real kernel (ctest label `gpu`): a tiny CUDA program built with nvcc and
// profiled through the Profiler as kz optimize's profile would be. Skipped, with the reason,
// where the host has no GPU, no nvcc or no ncu; on a host without counter permission it
// checks that the reason is the ERR_NVGPUCTRPERM line.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "util/fs.h"
#include "util/subprocess.h"
#include "verify/profiler.h"

namespace kz::verify {
namespace {

bool HasGpu() { return ::access("/dev/nvidia0", F_OK) == 0 || ::access("/dev/nvidiactl", F_OK) == 0; }

TEST(NcuGpuTest, CountersOfARealKernel) {
  if (!HasGpu()) GTEST_SKIP() << "needs a GPU (no /dev/nvidia0)";
  ProfilerOptions o;
  o.have_gpu = true;
  o.timeout_s = 180;
  Profiler p(o);
  if (!p.Probe().ok) GTEST_SKIP() << p.Probe().reason;
  std::string err, dir = util::MakeTempDir(::testing::TempDir(), "kz-ncu-gpu-", &err);
  std::ofstream(dir + "/k.cu") << "__global__ void kz_scale(float* x, int n) {\n"
                                  "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.0f; }\n"
                                  "int main() { int n = 1 << 24; float* x; cudaMalloc(&x, n * 4);\n"
                                  "  for (int r = 0; r < 3; ++r) kz_scale<<<(n + 255) / 256, 256>>>(x, n);\n"
                                  "  cudaDeviceSynchronize(); cudaFree(x); return 0; }\n";
  util::ProcessSpec nvcc;
  nvcc.argv = {::access("/usr/local/cuda/bin/nvcc", X_OK) == 0 ? "/usr/local/cuda/bin/nvcc" : "nvcc", "-O2", "-o",
               dir + "/k", dir + "/k.cu"};
  nvcc.wall_limit_s = 300;
  util::ProcessResult built = util::RunProcess(nvcc);
  if (built.end != util::ProcessEnd::kExited || built.exit_code != 0)
    GTEST_SKIP() << "nvcc failed: " << built.stderr_tail;
  ProfileChild child = [&](const std::vector<std::string>& argv, const std::string&, double timeout_s) {
    util::ProcessSpec spec;
    spec.argv = argv;
    spec.argv.push_back(dir + "/k");
    spec.wall_limit_s = timeout_s;
    util::ProcessResult r = util::RunProcess(spec);
    return ProfiledRun{r.end != util::ProcessEnd::kSpawnFailed, r.wall_s, r.stderr_tail + r.stdout_tail, r.spawn_error,
                       ""};
  };
  ProfileResult r = p.Profile({"kz_scale"}, 3, child);
  util::RemoveAll(dir);
  if (!r.available) {
    EXPECT_EQ(r.reason, "ncu: no permission for GPU performance counters (ERR_NVGPUCTRPERM)");
    GTEST_SKIP() << r.reason;
  }
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(KernelShortName(r.kernels[0].name), "kz_scale");
  EXPECT_EQ(r.kernels[0].launches, 3);
  for (const auto& m : NcuMetrics()) EXPECT_EQ(r.kernels[0].metrics.count(m), 1u) << m;
  std::cout << CountersLine(r.kernels[0]) << "\n";
}

}  // namespace
}  // namespace kz::verify
