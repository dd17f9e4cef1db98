#include "verify/roofline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "util/fs.h"

namespace kz::verify {
namespace {
using nlohmann::json;

json GoodCeilings() {
  return {{"copy_gbps", 4000.0}, {"fp32_tflops", 50.0}, {"bf16_tflops", 500.0},
          {"device", {{"kind", "cuda"}, {"name", "NVIDIA H200"}, {"capability", "9.0"}, {"torch", "2.11.0"}, {"cuda", "13.0"}}}};
}

Ceilings Good() {
  std::string err;
  return *CeilingsFromJson(GoodCeilings(), &err);
}

json Footprint(double in, double out, double params, double flops, bool complete = true) {
  return {{"method", "meta"}, {"inputs_bytes", in}, {"outputs_bytes", out}, {"params_bytes", params},
          {"complete", complete}, {"flops", flops}, {"dtypes", {"float32"}}};
}

TEST(RooflineTest, CeilingsMustBePositiveAndFinite) {
  std::string err;
  EXPECT_TRUE(CeilingsFromJson(GoodCeilings(), &err));
  for (const char* k : {"copy_gbps", "fp32_tflops", "bf16_tflops"}) {
    for (json bad : {json(0.0), json(-1.0), json(std::nan("")), json("4000"), json(nullptr)}) {
      json c = GoodCeilings();
      c[k] = bad;
      EXPECT_FALSE(CeilingsFromJson(c, &err)) << k << " = " << bad.dump();
      EXPECT_NE(err.find("positive"), std::string::npos);
    }
  }
  EXPECT_FALSE(CeilingsFromJson(json::array(), &err));
}

TEST(RooflineTest, CostNeedsCompleteBytesAndAFlopCount) {
  EXPECT_FALSE(CostFromFootprint(Footprint(1, 1, 0, 0, false)));  // incomplete
  json v1 = Footprint(1, 1, 0, 0);
  v1.erase("flops");  // a footprint of version 1
  EXPECT_FALSE(CostFromFootprint(v1));
  EXPECT_FALSE(CostFromFootprint(Footprint(0, 0, 0, 0)));  // nothing moved
  EXPECT_FALSE(CostFromFootprint(Footprint(-5, 1, 0, 0)));
  auto c = CostFromFootprint(Footprint(100, 50, 25, 1000));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->bytes, 175);
  EXPECT_EQ(c->flops, 1000);
  EXPECT_FALSE(c->low_precision);
  json bf = Footprint(100, 50, 25, 1000);
  bf["dtypes"] = {"float32", "bfloat16"};
  EXPECT_TRUE(CostFromFootprint(bf)->low_precision);
}

// Hand-worked: an elementwise op moving 1 GB in 1 ms attains 1,000 GB/s, a quarter of a
// 4,000 GB/s copy ceiling; no matmul FLOPs, so intensity 0 is below the ridge (50e12 / 4e12
// = 12.5 FLOP/B): memory-bound.
TEST(RooflineTest, ElementwiseIsMemoryBound) {
  auto r = Attain({1e9, 0, false}, Good(), 1000.0);
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->gbps, 1000.0);
  EXPECT_DOUBLE_EQ(r->ridge, 12.5);
  EXPECT_EQ(r->bound, "memory");
  EXPECT_DOUBLE_EQ(r->fraction, 0.25);
}

// Hand-worked: a 4096^3 fp32 matmul (2 * 4096^3 = 1.374e11 FLOPs over 3 * 4096^2 * 4 bytes,
// intensity 682.7 FLOP/B) in 5 ms attains 27.5 TFLOP/s, 0.55 of the fp32 ceiling.
TEST(RooflineTest, LargeMatmulIsComputeBoundAgainstTheRightCeiling) {
  double n = 4096, flops = 2 * n * n * n, bytes = 3 * n * n * 4;
  auto r = Attain({bytes, flops, false}, Good(), 5000.0);
  ASSERT_TRUE(r);
  EXPECT_NEAR(r->intensity, 682.67, 0.01);
  EXPECT_EQ(r->bound, "compute");
  EXPECT_NEAR(r->tflops, 27.49, 0.01);
  EXPECT_NEAR(r->fraction, 0.5498, 1e-4);
  auto low = Attain({bytes, flops, true}, Good(), 5000.0);  // bf16 inputs: the bf16 ceiling
  EXPECT_DOUBLE_EQ(low->peak_tflops, 500.0);
  EXPECT_NEAR(low->fraction, 0.05498, 1e-5);
}

TEST(RooflineTest, NoRooflineWithoutAPositiveFiniteTime) {
  for (double us : {0.0, -3.0, std::nan(""), double(INFINITY)}) EXPECT_FALSE(Attain({1e9, 0, false}, Good(), us)) << us;
}

TEST(RooflineTest, AnnotateOnlyATimedVerdictWithACost) {
  json v = {{"status", "correct"},
            {"footprint", Footprint(5e8, 5e8, 0, 0)},
            {"stages", {{"timing", {{"status", "ok"}, {"candidate", {{"median_us", 500.0}}}, {"speedup", 1.1}}}}}};
  json untimed = v;
  untimed["stages"]["timing"]["status"] = "skipped";
  EXPECT_FALSE(AnnotateRoofline(&untimed, Good()));
  EXPECT_FALSE(untimed["stages"]["timing"].contains("roofline"));
  json nofp = v;
  nofp.erase("footprint");
  EXPECT_FALSE(AnnotateRoofline(&nofp, Good()));
  json garbage = "not a verdict";
  EXPECT_FALSE(AnnotateRoofline(&garbage, Good()));
  ASSERT_TRUE(AnnotateRoofline(&v, Good()));
  const json& r = v["stages"]["timing"]["roofline"];
  EXPECT_EQ(r["bound"], "memory");
  EXPECT_DOUBLE_EQ(r["attained_gbps"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(r["fraction_of_ceiling"].get<double>(), 0.5);
  EXPECT_EQ(v["stages"]["timing"]["speedup"], 1.1);  // the rest untouched
}

TEST(RooflineTest, CacheKeyedByTheDeviceFacts) {
  json d = GoodCeilings()["device"];
  EXPECT_EQ(CeilingsKey(json::object()), "");
  EXPECT_EQ(CeilingsKey(d), CeilingsKey(d));
  json other = d;
  other["torch"] = "2.12.0";
  EXPECT_NE(CeilingsKey(d), CeilingsKey(other));
  json extra = d;
  extra["index"] = 3;  // the verdict's facts carry more: they do not change the key
  EXPECT_EQ(CeilingsKey(d), CeilingsKey(extra));

  std::string dir = (std::filesystem::temp_directory_path() / ("kz_roofline_" + std::to_string(::getpid()))).string();
  std::string err, key = CeilingsKey(d);
  EXPECT_FALSE(LoadCeilings(dir, key));
  ASSERT_TRUE(StoreCeilings(dir, key, GoodCeilings(), &err)) << err;
  auto back = LoadCeilings(dir, key);
  ASSERT_TRUE(back);
  EXPECT_DOUBLE_EQ(back->copy_gbps, 4000.0);
  ASSERT_TRUE(util::WriteFileAtomic(dir + "/v1/" + key + ".json", "{\"copy_gbps\": 0", &err));  // torn
  EXPECT_FALSE(LoadCeilings(dir, key));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kz::verify
