#include "service/request.h"

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
  ASSERT_TRUE(ApplyOptions(a.options, &o, &err)) << err;
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

}  // namespace
}  // namespace kz::service
