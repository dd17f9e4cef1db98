#include "service/request.h"
#include "util/fs.h"
#include "verify/job_input.h"

#include <gtest/gtest.h>

namespace kz::service {
namespace {

TEST(BatchRequestTest, EnvelopeIsValidatedSamplesAreNot) {
  BatchRequest b;
  std::string err;
  ASSERT_TRUE(ParseBatchRequest(R"({"samples": [{"task": "t"}, 3], "priority": 2, "client": "rl"})", &b, &err)) << err;
  EXPECT_EQ(b.samples.size(), 2u);
  EXPECT_EQ(b.priority, 2);
  EXPECT_EQ(b.client, "rl");
  VerifyRequest r;
  EXPECT_FALSE(ParseVerifyJson(b.samples[0], &r, &err));
  EXPECT_NE(err.find("candidate"), std::string::npos) << err;
  EXPECT_FALSE(ParseVerifyJson(b.samples[1], &r, &err));
  EXPECT_NE(err.find("object"), std::string::npos) << err;
}

TEST(BatchRequestTest, BadEnvelopes) {
  BatchRequest b;
  std::string err;
  EXPECT_FALSE(ParseBatchRequest("{", &b, &err));
  EXPECT_NE(err.find("malformed"), std::string::npos);
  EXPECT_FALSE(ParseBatchRequest(R"({"samples": []})", &b, &err));
  EXPECT_NE(err.find("non-empty"), std::string::npos);
  EXPECT_FALSE(ParseBatchRequest(R"({"x": 1})", &b, &err));
  EXPECT_NE(err.find("samples"), std::string::npos);
  EXPECT_FALSE(ParseBatchRequest(R"({"samples": [{}], "priority": 1.5})", &b, &err));
  EXPECT_NE(err.find("priority"), std::string::npos);
  EXPECT_FALSE(ParseBatchRequest(R"({"samples": [{}], "priority": 5000})", &b, &err));
  EXPECT_FALSE(ParseBatchRequest(R"({"samples": [{}], "client": ""})", &b, &err));
  EXPECT_NE(err.find("client"), std::string::npos);
}

TEST(VerifyRequestTest, SchedulingFieldsAreOptionalAndNotInTheKey) {
  VerifyRequest a, b;
  std::string err;
  ASSERT_TRUE(ParseVerifyRequest(R"({"task": "t", "candidate": "c"})", &a, &err)) << err;
  ASSERT_TRUE(ParseVerifyRequest(R"({"task": "t", "candidate": "c", "priority": -3, "client": "x"})", &b, &err)) << err;
  EXPECT_FALSE(a.priority);
  EXPECT_EQ(b.priority, -3);
  EXPECT_EQ(b.client, "x");
  EXPECT_EQ(JobKey(a, "s"), JobKey(b, "s"));
}

// The per-request adaptive-timing option (docs/throughput.md): a fraction in 0..0.5, part
// of the job's key (another timing rule is another measurement).
TEST(VerifyRequestTest, TimingCiIsABoundedFractionAndInTheKey) {
  VerifyRequest a, b;
  std::string err;
  ASSERT_TRUE(ParseVerifyRequest(R"({"task": "t", "candidate": "c", "options": {"timing_ci": 0.02}})", &a, &err)) << err;
  verify::VerifyOptions o;
  ASSERT_TRUE(verify::ApplyJobOptions(a.options, &o, &err)) << err;
  EXPECT_DOUBLE_EQ(o.timing_ci_rel, 0.02);
  ASSERT_TRUE(ParseVerifyRequest(R"({"task": "t", "candidate": "c"})", &b, &err)) << err;
  EXPECT_NE(JobKey(a, "s"), JobKey(b, "s"));
  for (const char* bad : {R"({"task": "t", "candidate": "c", "options": {"timing_ci": 0.7}})",
                          R"({"task": "t", "candidate": "c", "options": {"timing_ci": -1}})",
                          R"({"task": "t", "candidate": "c", "options": {"timing_ci": "tight"}})"}) {
    EXPECT_FALSE(ParseVerifyRequest(bad, &a, &err)) << bad;
    EXPECT_NE(err.find("timing_ci"), std::string::npos) << err;
  }
}

// A stored job into the verifier's input (verify::PrepareJob, shared by kz serve's scheduler
// and kz worker): options over the base, files written; bad input refused with a reason.
TEST(PrepareJobTest, OptionsOverTheBaseFilesWrittenBadInputRefused) {
  std::string dir = ::testing::TempDir() + "/kz_prepare_job", err;
  verify::VerifyOptions base;
  base.trials = 3;
  base.timeout_s = 42;
  verify::JobInput in;
  ASSERT_TRUE(verify::PrepareJob({"j1", "TASK", "CAND", "triton", R"({"trials": 5})"}, base, dir + "/a", &in, &err)) << err;
  EXPECT_EQ(in.options.trials, 5);
  EXPECT_EQ(in.options.timeout_s, 42) << "the base's other options stand";
  ASSERT_EQ(in.samples.size(), 1u);
  EXPECT_EQ(in.samples[0].label, "j1");
  std::string text;
  ASSERT_TRUE(util::ReadFile(dir + "/a/candidate.py", &text, &err));
  EXPECT_EQ(text, "CAND");
  const std::pair<verify::JobSources, const char*> bad[] = {
      {{"j", "t", "c", "opencl", "{}"}, "unknown backend \"opencl\""},
      {{"j", "t", "c", "", R"({"nope": 1})"}, "unknown option 'nope'"},
      {{"j", "t", "c", "", "not json"}, "not a JSON object"},
      {{"j", "t", "c", "", R"({"trials": 0})"}, "option 'trials' must be an integer in 1..1000"},
      {{"j", "t", "c", "", R"({"self_check": true})"}, "the candidate must be the task's source"},
      {{"j", "t", "t", "", R"({"self_check": 1})"}, "option 'self_check' must be a boolean"}};
  for (const auto& [job, why] : bad) {
    EXPECT_FALSE(verify::PrepareJob(job, base, dir + "/b", &in, &err)) << why;
    EXPECT_NE(err.find(why), std::string::npos) << err;
  }
  ASSERT_TRUE(verify::PrepareJob({"j", "T", "T", "", R"({"self_check": true})"}, base, dir + "/c", &in, &err)) << err;
  EXPECT_TRUE(in.samples[0].self_check) << "the task against itself";
  VerifyRequest r;
  EXPECT_FALSE(ParseVerifyRequest(R"({"task": "t", "candidate": "c", "options": {"self_check": true}})", &r, &err));
  EXPECT_NE(err.find("self_check"), std::string::npos) << "refused at submission: " << err;
  EXPECT_TRUE(ParseVerifyRequest(R"({"task": "t", "candidate": "t", "options": {"self_check": true}})", &r, &err)) << err;
  EXPECT_FALSE(verify::PrepareJob({"j", "t", "c", "", "{}"}, base, "/proc/kz-no-such/dir", &in, &err));
  EXPECT_FALSE(err.empty());
}

}  // namespace
}  // namespace kz::service
