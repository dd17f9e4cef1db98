#include "curriculum/catalog.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "curriculum/module_facts.h"
#include "curriculum/validate_rules.h"
#include "curriculum/test_catalog.h"

namespace kz::curriculum {
namespace {
using testing::SmallCatalog;
using testing::SmallCatalogJson;

TEST(Catalog, AliasesResolveToOneApi) {
  Catalog c = SmallCatalog();
  for (const char* a : {"torch.nn.ReLU", "torch.nn.functional.relu", "torch.relu", "Tensor.relu", "relu"})
    EXPECT_EQ(c.Find(a), c.Find("relu")) << a;
  EXPECT_FALSE(c.Resolve("relu"));  // an id is not a call name
  EXPECT_FALSE(c.Find("Tensor.view"));
}

TEST(Catalog, AnotherVersionIsAClearError) {
  auto doc = SmallCatalogJson();
  doc["version"] = 2;
  Catalog c;
  std::string err;
  EXPECT_FALSE(c.FromJson(doc, &err));
  EXPECT_NE(err.find("version 2, this kz reads version 1"), std::string::npos) << err;
}

TEST(Catalog, NotACatalogAndDuplicatesAreErrors) {
  Catalog c;
  std::string err;
  EXPECT_FALSE(c.FromJson({{"format", "other"}}, &err));
  auto doc = SmallCatalogJson();
  doc["apis"].push_back(doc["apis"][0]);
  Catalog d;
  EXPECT_FALSE(d.FromJson(doc, &err));
  EXPECT_NE(err.find("duplicate"), std::string::npos);
}

TEST(Catalog, ParseApiSetErrors) {
  Catalog c = SmallCatalog();
  std::vector<size_t> set;
  std::string err;
  EXPECT_FALSE(ParseApiSet(c, {}, &set, &err));
  EXPECT_EQ(err, "empty API set");
  EXPECT_FALSE(ParseApiSet(c, {"relu", "no_such_api"}, &set, &err));
  EXPECT_NE(err.find("unknown API 'no_such_api'"), std::string::npos);
  EXPECT_FALSE(ParseApiSet(c, {"relu", "torch.relu"}, &set, &err));
  EXPECT_NE(err.find("twice"), std::string::npos);
  ASSERT_TRUE(ParseApiSet(c, {"sum", "torch.nn.Conv2d"}, &set, &err)) << err;
  EXPECT_EQ(set, (std::vector<size_t>{*c.Find("conv2d"), *c.Find("sum")}));
}

TEST(ModuleFacts, ForwardScopeFollowsHelpersAndLeavesInitOut) {
  Catalog c = SmallCatalog();
  nlohmann::json e = {
      {"path", "m.py"}, {"status", "ok"}, {"model", {{"defined", true}, {"methods", {"__init__", "forward"}}}},
      {"functions",
       {{"Model.__init__", {{"calls", {"torch.nn.Conv2d", "torch.log"}}, {"ops", nlohmann::json::array()}}},
        {"Model.forward", {{"calls", {"Tensor.relu", "local.helper"}}, {"ops", {"torch.matmul"}}}},
        {"helper", {{"calls", {"torch.sum", "local.Block"}}, {"ops", nlohmann::json::array()}}},
        {"Block.forward", {{"calls", {"torch.add"}}, {"ops", nlohmann::json::array()}}}}}};
  ModuleFacts m = ParseModuleFacts(e);
  auto ids = [&](const std::vector<size_t>& v) {
    std::vector<std::string> out;
    for (size_t i : v) out.push_back(c.api(i).id);
    return out;
  };
  EXPECT_EQ(ids(ApisUsed(m, c, Scope::kForward, false)), (std::vector<std::string>{"relu", "sum", "add"}));
  EXPECT_EQ(ids(ApisUsed(m, c, Scope::kForward, true)), (std::vector<std::string>{"relu", "matmul", "sum", "add"}));
  EXPECT_EQ(ids(ApisUsed(m, c, Scope::kModel, false)),
            (std::vector<std::string>{"conv2d", "relu", "sum", "add", "log"}));
}

TEST(ModuleFacts, MalformedEntryIsMissing) {
  EXPECT_EQ(ParseModuleFacts(nlohmann::json(3)).status, "missing");
  EXPECT_EQ(ParseModuleFacts({{"path", "x"}, {"status", "not_utf8"}, {"error", "bad"}}).error, "bad");
}

}  // namespace
}  // namespace kz::curriculum

namespace kz::curriculum {
namespace {

TEST(SketchSimilarity, EstimatesJaccard) {
  std::vector<uint64_t> a, b, c;
  for (uint64_t i = 0; i < 128; ++i) a.push_back(i * 10), b.push_back(i * 10), c.push_back(i * 10 + 5);
  EXPECT_DOUBLE_EQ(SketchSimilarity(a, b), 1.0);
  EXPECT_DOUBLE_EQ(SketchSimilarity(a, c), 0.0);
  std::vector<uint64_t> half(a.begin(), a.begin() + 64);
  for (uint64_t i = 0; i < 64; ++i) half.push_back(i * 10 + 5);
  std::sort(half.begin(), half.end());
  // The union's 128 smallest: 0, 5, 10, ... 635 — 64 of them (0..630 step 10) in both.
  EXPECT_DOUBLE_EQ(SketchSimilarity(a, half), 0.5);
  EXPECT_DOUBLE_EQ(SketchSimilarity(a, {}), 0.0);
}

TEST(CheckAst, NearCopyOfAnEvaluationTask) {
  Catalog c = testing::SmallCatalog();
  nlohmann::json e = {{"path", "m.py"}, {"status", "ok"}, {"canonical_hash", "h"},
                      {"model", {{"defined", true}, {"methods", {"__init__", "forward"}}}},
                      {"top_level", {{"classes", {"Model"}}, {"functions", {"get_inputs", "get_init_inputs"}}}},
                      {"functions", {{"Model.forward", {{"calls", {"torch.relu"}}, {"ops", nlohmann::json::array()}}}}},
                      {"sketch", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}};
  ModuleFacts m = ParseModuleFacts(e);
  KnownHashes known;
  known.near_copy = 0.8;
  known.eval_sketches.push_back({"level1/7_Other.py", {100, 200}});
  EXPECT_FALSE(CheckAst(m, {*c.Find("relu")}, c, known));
  known.eval_sketches.push_back({"level2/3_Same.py", {1, 2, 3, 4, 5, 6, 7, 8, 9, 11}});  // 9 of 11: 0.82
  auto r = CheckAst(m, {*c.Find("relu")}, c, known);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rule, "contaminated");
  EXPECT_NE(r->detail.find("level2/3_Same.py"), std::string::npos) << r->detail;
  known.near_copy = 0.85;
  EXPECT_FALSE(CheckAst(m, {*c.Find("relu")}, c, known));
}

}  // namespace
}  // namespace kz::curriculum
