// Baseline files (KernelBench's results/timing shape): statistics, entries, the cache key,
// reading/writing, worker replies to entries, compile references and speedups against them.
#include "scoring/baseline.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "util/fs.h"

namespace kz::scoring {
namespace {
using nlohmann::json;

BaselineKey Key(const std::string& mode = "compile") {
  BaselineKey k;
  k.mode = mode;
  k.task_xxh128 = "aa";
  k.device_key = "gpu:NVIDIA H200";
  k.torch = "2.11.0+cu130";
  k.cuda = "13.0";
  k.python = "3.11.7";
  k.trials = 100;
  return k;
}

TEST(BaselineStats, HandWorked) {
  // 1, 2, 3, 4: mean 2.5, population variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25.
  auto s = StatsOf({4.0, 1.0, 3.0, 2.0});
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->mean, 2.5);
  EXPECT_DOUBLE_EQ(s->std, std::sqrt(1.25));
  EXPECT_DOUBLE_EQ(s->min, 1.0);
  EXPECT_DOUBLE_EQ(s->max, 4.0);
  EXPECT_DOUBLE_EQ(s->median, 2.5);  // between 2 and 3
  EXPECT_EQ(s->n, 4);
  EXPECT_DOUBLE_EQ(StatsOf({5.0, 1.0, 9.0})->median, 5.0);
  EXPECT_DOUBLE_EQ(StatsOf({7.0})->std, 0.0);
  EXPECT_FALSE(StatsOf({}));
}

TEST(BaselineFiles, NamesAreKernelBenchs) {
  EXPECT_EQ(BaselineFileName("eager"), "baseline_time_torch.json");
  EXPECT_EQ(BaselineFileName("compile"), "baseline_time_torch_compile_inductor_default.json");
  EXPECT_EQ(BaselineFileName("max-autotune"), "");
}

TEST(BaselineEntry, KernelBenchFieldsAndCacheKey) {
  json e = OkEntry(*StatsOf({1.0, 2.0, 3.0}), "NVIDIA H200", "cuda:0", Key(), {{"method", "m"}});
  for (const char* k : {"mean", "std", "min", "max", "num_trials", "hardware", "device"}) EXPECT_TRUE(e.contains(k)) << k;
  EXPECT_EQ(e["num_trials"], 3);
  EXPECT_DOUBLE_EQ(e["median"].get<double>(), 2.0);
  EXPECT_EQ(e["kz"]["method"], "m");
  EXPECT_TRUE(Reusable(e, Key()));
  for (auto change : std::vector<std::function<void(BaselineKey&)>>{
           [](BaselineKey& k) { k.task_xxh128 = "bb"; },        // the task file changed
           [](BaselineKey& k) { k.device_key = "gpu:NVIDIA H100"; },  // another GPU
           [](BaselineKey& k) { k.torch = "2.12.0"; },          // another torch
           [](BaselineKey& k) { k.trials = 10; },               // other timing settings
           [](BaselineKey& k) { k.mode = "eager"; }}) {
    BaselineKey k = Key();
    change(k);
    EXPECT_FALSE(Reusable(e, k));
  }
  json failed = ErrorEntry("compile_error", "boom", "NVIDIA H200", "cuda:0", Key());
  EXPECT_TRUE(failed["mean"].is_null());
  EXPECT_EQ(failed["error"]["kind"], "compile_error");
  EXPECT_FALSE(Reusable(failed, Key())) << "failed entries are retried";
  json kernelbench = {{"mean", 4.31}, {"std", 0.005}, {"min", 4.29}, {"max", 4.33}, {"num_trials", 100},
                      {"hardware", "NVIDIA H100 80GB HBM3"}, {"device", "cuda:0"}};
  EXPECT_FALSE(Reusable(kernelbench, Key())) << "no kz key: not ours to reuse";
}

TEST(BaselineEntry, MsPrefersTheMedian) {
  std::string st;
  EXPECT_DOUBLE_EQ(*EntryMs({{"mean", 3.0}, {"median", 2.0}}, &st), 2.0);
  EXPECT_EQ(st, "median");
  EXPECT_DOUBLE_EQ(*EntryMs({{"mean", 3.0}}, &st), 3.0);
  EXPECT_EQ(st, "mean");
  EXPECT_DOUBLE_EQ(*EntryMs({{"mean", 3.0}, {"median", nullptr}}), 3.0);
  EXPECT_FALSE(EntryMs({{"mean", 0.0}}));
  EXPECT_FALSE(EntryMs({{"mean", 3.0}, {"error", {{"kind", "x"}}}}));
  EXPECT_FALSE(EntryMs(json("x")));
}

class BaselineFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    dir_ = util::MakeTempDir(::testing::TempDir(), "kz_baseline_", &err);
    ASSERT_FALSE(dir_.empty()) << err;
  }
  void TearDown() override { util::RemoveAll(dir_); }
  std::string dir_;
};

TEST_F(BaselineFileTest, RoundTripInNumericOrder) {
  json t = json::object();
  SetEntry(&t, 10, "2_B.py", OkEntry(*StatsOf({1.0}), "h", "cuda:0", Key()));
  SetEntry(&t, 1, "19_ReLU.py", OkEntry(*StatsOf({2.0}), "h", "cuda:0", Key()));
  SetEntry(&t, 1, "2_Mm.py", ErrorEntry("timeout", "slow", "h", "cuda:0", Key()));
  SetEntry(&t, 2, "1_X.py", OkEntry(*StatsOf({3.0}), "h", "cuda:0", Key()));
  std::string text = DumpBaselineFile(t);
  EXPECT_LT(text.find("\"level1\""), text.find("\"level2\""));
  EXPECT_LT(text.find("\"level2\""), text.find("\"level10\""));
  EXPECT_LT(text.find("\"2_Mm.py\""), text.find("\"19_ReLU.py\""));
  // KernelBench's field order: mean first, device before kz's additions.
  size_t entry = text.find("\"19_ReLU.py\"");
  EXPECT_LT(text.find("\"mean\"", entry), text.find("\"std\"", entry));
  EXPECT_LT(text.find("\"device\"", entry), text.find("\"median\"", entry));
  EXPECT_NE(text.find("\n    \"level1\": {\n        \"2_Mm.py\": {\n            \"mean\": null"), std::string::npos) << text;
  std::string path = dir_ + "/" + kCompileBaselineFile, err;
  ASSERT_TRUE(util::WriteFileAtomic(path, text, &err)) << err;
  json back;
  ASSERT_TRUE(LoadBaselineFile(path, &back, &err)) << err;
  EXPECT_EQ(back, t);
  ASSERT_NE(FindEntry(back, 1, "19_ReLU.py"), nullptr);
  EXPECT_DOUBLE_EQ(*EntryMs(*FindEntry(back, 1, "19_ReLU.py")), 2.0);
  EXPECT_EQ(FindEntry(back, 3, "19_ReLU.py"), nullptr);
  EXPECT_EQ(FindEntry(back, 1, "20_X.py"), nullptr);

  CompileBaseline b;  // a directory means its compile file
  ASSERT_TRUE(LoadCompileBaseline(dir_, &b, &err)) << err;
  EXPECT_EQ(b.path, util::AbsolutePath(path));
  ASSERT_TRUE(LoadCompileBaseline(path, &b, &err)) << err;
  EXPECT_FALSE(LoadCompileBaseline(dir_ + "/none.json", &b, &err));
}

TEST_F(BaselineFileTest, MissingIsEmptyAndGarbageIsAnError) {
  json t;
  std::string err;
  EXPECT_TRUE(LoadBaselineFile(dir_ + "/none.json", &t, &err));
  EXPECT_TRUE(t.empty());
  std::ofstream(dir_ + "/bad.json") << "[1, 2]";
  EXPECT_FALSE(LoadBaselineFile(dir_ + "/bad.json", &t, &err));
  std::ofstream(dir_ + "/bad2.json") << R"({"level1": 3})";
  EXPECT_FALSE(LoadBaselineFile(dir_ + "/bad2.json", &t, &err));
  EXPECT_NE(err.find("level1"), std::string::npos);
}

TEST(BaselineEntries, FromWorkerReplies) {
  BaselineCall ok;
  ok.events = {{{"type", "event"}, {"stage", "eager"}, {"data", {{"status", "ok"}, {"ms", {1.0, 3.0}}, {"method", "m"}}}}};
  ok.result = json{{"ok", true}, {"device", {{"hardware", "NVIDIA H200"}, {"device", "cuda:0"}}},
                   {"modes", {{"eager", ok.events[0]["data"]},
                              {"compile", {{"status", "error"}, {"error", {{"kind", "compile_error"}, {"message", "inductor"}}}}}}}};
  auto e = BaselineEntries(ok, {"eager", "compile"}, Key(), "fallback", "cpu", "T");
  EXPECT_DOUBLE_EQ(e["eager"]["mean"].get<double>(), 2.0);
  EXPECT_EQ(e["eager"]["hardware"], "NVIDIA H200");
  EXPECT_EQ(e["eager"]["kz"]["key"]["mode"], "eager");
  EXPECT_EQ(e["eager"]["kz"]["timed_at"], "T");
  EXPECT_EQ(e["compile"]["error"]["kind"], "compile_error");
  EXPECT_EQ(e["compile"]["kz"]["key"]["mode"], "compile");

  BaselineCall crash;  // eager's event arrived, then the child died in compile
  crash.events = ok.events;
  crash.end_kind = "timeout";
  crash.end = "exceeded its wall-time limit";
  e = BaselineEntries(crash, {"eager", "compile"}, Key(), "NVIDIA H200", "cuda:0", "T");
  EXPECT_DOUBLE_EQ(e["eager"]["median"].get<double>(), 2.0);
  EXPECT_EQ(e["compile"]["error"]["kind"], "timeout");
  EXPECT_NE(e["compile"]["error"]["message"].get<std::string>().find("wall-time"), std::string::npos);
  EXPECT_EQ(e["compile"]["hardware"], "NVIDIA H200");

  BaselineCall invalid;
  invalid.result = json{{"ok", false}, {"error", {{"kind", "invalid_task"}, {"message", "no Model"}}}};
  e = BaselineEntries(invalid, {"compile"}, Key(), "h", "cpu", "T");
  EXPECT_EQ(e.size(), 1u);
  EXPECT_EQ(e["compile"]["error"]["kind"], "invalid_task");
}

json Record(const std::string& status, json median_us, const std::string& device = "NVIDIA H200") {
  json timing = median_us.is_null() ? json{{"status", "skipped"}}
                                    : json{{"status", "ok"}, {"candidate", {{"median_us", median_us}}}};
  return {{"task", "L1_19"}, {"status", status},
          {"verdict", {{"device", {{"name", device}}}, {"stages", {{"timing", timing}}}}}};
}

TEST(CompileBaselineRefs, SpeedupAndLookup) {
  CompileRef ref{0.5, "median", "NVIDIA H200"};  // 0.5 ms = 500 µs
  std::string why;
  EXPECT_DOUBLE_EQ(*SpeedupVsCompile(Record("correct", 250.0), ref), 2.0);
  EXPECT_DOUBLE_EQ(*SpeedupVsCompile(Record("correct", 1000.0), ref), 0.5);
  EXPECT_FALSE(SpeedupVsCompile(Record("incorrect", 250.0), ref));
  EXPECT_FALSE(SpeedupVsCompile(Record("correct", nullptr), ref, &why));
  EXPECT_EQ(why, "");
  EXPECT_FALSE(SpeedupVsCompile(Record("correct", 250.0, "NVIDIA H100 80GB HBM3"), ref, &why));
  EXPECT_EQ(why, "hardware");

  CompileBaseline b;
  b.path = "/b.json";
  SetEntry(&b.table, 1, "19_ReLU.py", OkEntry(*StatsOf({0.5}), "NVIDIA H200", "cuda:0", Key()));
  SetEntry(&b.table, 1, "20_X.py", ErrorEntry("timeout", "", "NVIDIA H200", "cuda:0", Key()));
  SetEntry(&b.table, 1, "21_Y.py", OkEntry(*StatsOf({0.5}), "NVIDIA H200", "cuda:0", Key()));  // task_xxh128 "aa"
  SetEntry(&b.table, 2, "1_Z.py", {{"mean", 4.0}, {"hardware", "NVIDIA H200"}});  // KernelBench's own: no key
  json tasks = {{"L1_19", {{"level", 1}, {"file", "19_ReLU.py"}, {"xxh128", "aa"}}},
                {"L1_20", {{"level", 1}, {"file", "20_X.py"}, {"xxh128", "aa"}}},
                {"L1_21", {{"level", 1}, {"file", "21_Y.py"}, {"xxh128", "changed"}}},
                {"L1_22", {{"level", 1}, {"file", "22_W.py"}, {"xxh128", "aa"}}},
                {"L2_1", {{"level", 2}, {"file", "1_Z.py"}, {"xxh128", "zz"}}}};
  json summary;
  auto refs = CompileRefs(b, tasks, &summary);
  ASSERT_EQ(refs.size(), 2u);
  EXPECT_DOUBLE_EQ(refs["L1_19"].ms, 0.5);
  EXPECT_EQ(refs["L1_19"].statistic, "median");
  EXPECT_DOUBLE_EQ(refs["L2_1"].ms, 4.0);
  EXPECT_EQ(refs["L2_1"].statistic, "mean");
  EXPECT_EQ(summary["missing"], json({"L1_22"}));
  EXPECT_EQ(summary["failed"], json({"L1_20"}));
  EXPECT_EQ(summary["stale"], json({"L1_21"}));
  EXPECT_EQ(summary["tasks_with_entry"], 2);
  EXPECT_EQ(summary["statistic"], json({"mean", "median"}));
}

}  // namespace
}  // namespace kz::scoring
