// The Profiler (verify/profiler.h) against fake `ncu` scripts, run through the real
// child-process code (util::RunProcess): not installed, a broken install, no GPU, the
// permission error (learned once, then cached), canned counters, a crash, a timeout.
#include "verify/profiler.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "util/fs.h"
#include "util/subprocess.h"

namespace kz::verify {
namespace {
using json = nlohmann::json;

const char* kVersion =
    "echo 'NVIDIA (R) Nsight Compute Command Line Profiler'; echo 'Version 2025.3.1.0 (build 1) (public-release)'";

class ProfilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    dir_ = util::MakeTempDir(::testing::TempDir(), "kz-profiler-", &err);
    ASSERT_FALSE(dir_.empty()) << err;
  }
  void TearDown() override { util::RemoveAll(dir_); }

  // A fake ncu: `--version` runs `version`; a profile records its argv, writes `log` to the
  // --log-file path, then runs `body`.
  std::string Fake(const std::string& version, const std::string& log, const std::string& body = "") {
    std::string path = dir_ + "/bin/ncu", err;
    util::MakeDirs(dir_ + "/bin", &err);
    std::ofstream(dir_ + "/canned.txt") << log;
    std::ofstream(path) << "#!/bin/bash\n"
                        << "if [ \"$1\" = --version ]; then " << version << "; exit $?; fi\n"
                        << "echo \"$@\" > " << dir_ << "/argv.txt\n"
                        << "while [ $# -gt 0 ]; do if [ \"$1\" = --log-file ]; then cp " << dir_
                        << "/canned.txt \"$2\"; fi; shift; done\n"
                        << body << "\n";
    ::chmod(path.c_str(), 0755);
    return path;
  }

  // The production child's contract, with a trivial command after ncu's argv.
  ProfileChild Child(int* calls) {
    return [calls](const std::vector<std::string>& argv, const std::string&, double timeout_s) {
      ++*calls;
      util::ProcessSpec spec;
      spec.argv = argv;
      spec.argv.push_back("/bin/true");
      spec.wall_limit_s = timeout_s;
      util::ProcessResult p = util::RunProcess(spec);
      ProfiledRun r;
      r.ran = p.end != util::ProcessEnd::kSpawnFailed;
      r.wall_s = p.wall_s;
      r.stderr_text = p.stderr_tail;
      r.error = p.spawn_error;
      if (p.end == util::ProcessEnd::kTimedOut) r.end = "timed out";
      return r;
    };
  }

  std::string dir_;
};

ProfilerOptions Opts(const std::string& ncu, bool gpu, double timeout_s = 30) {
  ProfilerOptions o;
  o.ncu = ncu;
  o.have_gpu = gpu;
  o.timeout_s = timeout_s;
  return o;
}

std::string Csv() {
  return "==PROF== Connected to process 77 (/usr/bin/python3)\n"
         "\"ID\",\"Process ID\",\"Kernel Name\",\"dram__throughput.avg.pct_of_peak_sustained_elapsed\","
         "\"sm__throughput.avg.pct_of_peak_sustained_elapsed\",\"sm__warps_active.avg.pct_of_peak_sustained_active\"\n"
         "\"\",\"\",\"\",\"%\",\"%\",\"%\"\n"
         "\"0\",\"77\",\"add_kernel\",\"72\",\"18\",\"41\"\n"
         "\"1\",\"77\",\"scale_kernel\",\"5\",\"90\",\"80\"\n";
}

TEST_F(ProfilerTest, NotInstalled) {
  int calls = 0;
  Profiler p(Opts(dir_ + "/no/such/ncu", true));
  ProfileResult r = p.Profile({"k"}, 1, Child(&calls));
  EXPECT_FALSE(r.available);
  EXPECT_EQ(r.reason, "ncu: not installed");
  EXPECT_EQ(calls, 0);
  // Found through PATH (nothing there, nor in CUDA's default place on this host).
  if (::access("/usr/local/cuda/bin/ncu", X_OK) == 0) GTEST_SKIP() << "a real ncu is installed here";
  std::string old = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", dir_.c_str(), 1);
  ::unsetenv("KZ_NCU");
  Profiler q(Opts("", true));
  EXPECT_EQ(q.Probe().reason, "ncu: not installed");
  ::setenv("PATH", old.c_str(), 1);
}

TEST_F(ProfilerTest, FoundOnPathAndCountersParsed) {
  Fake(kVersion, Csv());
  std::string old = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", (dir_ + "/bin:" + old).c_str(), 1);
  int calls = 0;
  Profiler p(Opts("", true));
  ProfileResult r = p.Profile({"add_kernel", "scale_kernel"}, 20, Child(&calls));
  ::setenv("PATH", old.c_str(), 1);
  ASSERT_TRUE(r.available) << r.reason;
  EXPECT_EQ(r.version, "Version 2025.3.1.0 (build 1) (public-release)");
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(CountersLine(r.kernels[0]), "kernel add_kernel: DRAM 72% of peak, SM 18%, occupancy 41%");
  std::string argv, err;
  util::ReadFile(dir_ + "/argv.txt", &argv, &err);
  EXPECT_NE(argv.find("--launch-count 8 "), std::string::npos) << argv;  // capped at max_launches
  EXPECT_NE(argv.find("--kernel-name regex:^(add_kernel|scale_kernel)$ /bin/true"), std::string::npos) << argv;
  json j = r.ToJson();
  EXPECT_EQ(ProfileFromJson(j).kernels.size(), 2u);
  EXPECT_NE(ProfileFeedback(j).find("kernel scale_kernel: DRAM 5% of peak, SM 90%, occupancy 80%"), std::string::npos);
}

TEST_F(ProfilerTest, PermissionErrorIsLearnedOnceAndCached) {
  std::string ncu =
      Fake(kVersion,
           "==PROF== Connected to process 9 (/usr/bin/python3)\n==ERROR== ERR_NVGPUCTRPERM - The user does "
           "not have permission to access NVIDIA GPU Performance Counters on the target device 0.\n");
  int calls = 0;
  Profiler p(Opts(ncu, true));
  EXPECT_TRUE(p.Probe().ok);
  ProfileResult r = p.Profile({"k"}, 1, Child(&calls));
  EXPECT_FALSE(r.available);
  EXPECT_EQ(r.reason, "ncu: no permission for GPU performance counters (ERR_NVGPUCTRPERM)");
  EXPECT_GT(r.seconds, 0);  // the child ran: its seconds are charged
  ProfileResult again = p.Profile({"k"}, 1, Child(&calls));
  EXPECT_EQ(again.reason, r.reason);
  EXPECT_EQ(again.seconds, 0);
  EXPECT_EQ(calls, 1);  // one profiling child at most on such a host
  EXPECT_FALSE(p.Probe().ok);
}

TEST_F(ProfilerTest, NoGpuRunsNothing) {
  int calls = 0;
  Profiler p(Opts(Fake(kVersion, Csv()), false));
  EXPECT_EQ(p.Profile({"k"}, 1, Child(&calls)).reason, "ncu: no GPU");
  EXPECT_EQ(calls, 0);
}

TEST_F(ProfilerTest, BrokenInstallSaysItsFirstLine) {
  int calls = 0;
  Profiler p(Opts(Fake("echo 'ncu: error while loading shared libraries: libQt6Core.so.6' >&2; exit 127", ""), true));
  EXPECT_EQ(p.Profile({"k"}, 1, Child(&calls)).reason,
            "ncu: failed (ncu: error while loading shared libraries: libQt6Core.so.6)");
  EXPECT_EQ(calls, 0);
}

TEST_F(ProfilerTest, CrashTimeoutAndNoKernelNames) {
  int calls = 0;
  std::string ncu = Fake(kVersion, "", "echo '==ERROR== The application returned an error code (11).' >&2; exit 11");
  Profiler p(Opts(ncu, true));
  EXPECT_EQ(p.Profile({}, 1, Child(&calls)).reason, "ncu: skipped (no candidate kernel in the launch trace)");
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(p.Profile({"k"}, 1, Child(&calls)).reason,
            "ncu: failed (==ERROR== The application returned an error code (11).)");
  Profiler slow(Opts(Fake(kVersion, "", "sleep 30"), true, 0.5));
  // The canned log is empty: the child's end is the reason.
  ProfileResult r = slow.Profile({"k"}, 1, Child(&calls));
  EXPECT_EQ(r.reason, "ncu: failed (timed out)");
  EXPECT_LT(r.seconds, 10);
  EXPECT_EQ(p.Probe().ok, true);  // a failure is not cached: the next candidate tries again
}

TEST(CandidateKernelNamesTest, FromTheFirstTracedCall) {
  json v = {
      {"stages",
       {{"trace",
         {{"calls",
           {{{"kernels",
              {{{"name", "void relu_kernel<float>(float const*, float*, int)"}, {"class", "candidate"}, {"count", 2}},
               {{"name", "at::native::vectorized_elementwise_kernel"}, {"class", "foreign"}, {"count", 1}},
               {{"name", "add(float*)"}, {"class", "candidate"}, {"count", 1}},
               {{"name", "bad name; rm -rf"}, {"class", "candidate"}, {"count", 1}}}}}}}}}}}};
  int launches = 0;
  EXPECT_EQ(CandidateKernelNames(v, &launches), (std::vector<std::string>{"relu_kernel", "add"}));
  EXPECT_EQ(launches, 4);
  EXPECT_TRUE(CandidateKernelNames(json::object(), &launches).empty());
  EXPECT_EQ(launches, 0);
  EXPECT_TRUE(CandidateKernelNames(json{{"stages", {{"trace", {{"calls", "x"}}}}}}, &launches).empty());
}

}  // namespace
}  // namespace kz::verify
