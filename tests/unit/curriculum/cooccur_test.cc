#include "curriculum/cooccur.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "curriculum/plots.h"
#include "curriculum/test_catalog.h"
#include "util/fs.h"

namespace kz::curriculum {
namespace {
using testing::SmallCatalog;

// A fake scanner: facts from a table keyed by file name.
class FakeScanner : public Scanner {
 public:
  std::map<std::string, nlohmann::json> by_name;
  bool Scan(const std::vector<std::string>& paths, std::vector<ModuleFacts>* out, std::string*) override {
    for (const auto& p : paths) {
      auto j = by_name[std::filesystem::path(p).filename().string()];
      j["path"] = p;
      out->push_back(ParseModuleFacts(j));
    }
    return true;
  }
};

nlohmann::json Ok(std::vector<std::string> forward) {
  return {{"status", "ok"}, {"model", {{"defined", true}}},
          {"functions", {{"Model.forward", {{"calls", forward}, {"ops", {"torch.add"}}}}}}};
}

class CooccurTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    dir_ = util::MakeTempDir(::testing::TempDir(), "kz_cooccur_", &err);
    util::MakeDirs(dir_ + "/corpus/sub", &err);
    for (const char* f : {"a.py", "b.py", "sub/c.py", "bad.py", "nomodel.py"}) std::ofstream(dir_ + "/corpus/" + f) << f;
    scanner_.by_name["a.py"] = Ok({"torch.relu", "torch.nn.Conv2d"});
    scanner_.by_name["b.py"] = Ok({"Tensor.relu", "torch.sum", "torch.nn.functional.conv2d"});
    scanner_.by_name["c.py"] = Ok({"torch.sum", "Tensor.view"});
    scanner_.by_name["bad.py"] = {{"status", "not_utf8"}};
    scanner_.by_name["nomodel.py"] = {{"status", "ok"}, {"model", {{"defined", false}}}};
  }
  void TearDown() override { util::RemoveAll(dir_); }
  std::string dir_;
  FakeScanner scanner_;
  Catalog catalog_ = SmallCatalog();
};

TEST_F(CooccurTest, CountsModulesAndPairsAndSkips) {
  Stats s;
  std::string err;
  ASSERT_TRUE(Mine({dir_ + "/corpus"}, catalog_, scanner_, false, &s, &err)) << err;
  size_t relu = *catalog_.Find("relu"), conv = *catalog_.Find("conv2d"), sum = *catalog_.Find("sum");
  EXPECT_EQ(s.files, 5u);
  EXPECT_EQ(s.modules, 3u);
  EXPECT_EQ(s.skipped["not_utf8"], 1u);
  EXPECT_EQ(s.skipped["no_model"], 1u);
  EXPECT_EQ(s.count[relu], 2u);
  EXPECT_EQ(s.Pair(relu, conv), 2u);
  EXPECT_EQ(s.Pair(conv, sum), 1u);
  EXPECT_EQ(s.Pair(sum, relu), 1u);
  EXPECT_EQ(s.count[*catalog_.Find("add")], 0u);  // operators only with_operators
  Stats ops;
  ASSERT_TRUE(Mine({dir_ + "/corpus"}, catalog_, scanner_, true, &ops, &err));
  EXPECT_EQ(ops.count[*catalog_.Find("add")], 3u);
}

TEST_F(CooccurTest, SaveLoadRoundTripAndCorpusHash) {
  Stats s, back;
  std::string err;
  ASSERT_TRUE(Mine({dir_ + "/corpus"}, catalog_, scanner_, false, &s, &err)) << err;
  ASSERT_TRUE(SaveStats(dir_ + "/stats.json", s, catalog_, &err)) << err;
  ASSERT_TRUE(LoadStats(dir_ + "/stats.json", catalog_, &back, &err)) << err;
  EXPECT_EQ(back.pair, s.pair);
  EXPECT_EQ(back.corpus_hash, s.corpus_hash);
  EXPECT_EQ(back.skipped, s.skipped);
  std::ofstream(dir_ + "/corpus/a.py") << "changed";
  Stats again;
  ASSERT_TRUE(Mine({dir_ + "/corpus"}, catalog_, scanner_, false, &again, &err));
  EXPECT_NE(again.corpus_hash, s.corpus_hash);
}

TEST_F(CooccurTest, StatisticsOfAnotherCatalogVersionAreRefused) {
  Stats s, back;
  std::string err;
  ASSERT_TRUE(Mine({dir_ + "/corpus"}, catalog_, scanner_, false, &s, &err));
  auto doc = StatsToJson(s, catalog_);
  doc["catalog_version"] = 7;
  EXPECT_FALSE(StatsFromJson(doc, catalog_, &back, &err));
  EXPECT_NE(err.find("catalog version 7"), std::string::npos) << err;
  doc = StatsToJson(s, catalog_);
  doc["modules"][0]["apis"].push_back("not_an_api");
  EXPECT_FALSE(StatsFromJson(doc, catalog_, &back, &err));
  EXPECT_FALSE(Mine({dir_ + "/missing"}, catalog_, scanner_, false, &s, &err));
}

TEST_F(CooccurTest, Plots) {
  Stats s;
  std::string err;
  ASSERT_TRUE(Mine({dir_ + "/corpus"}, catalog_, scanner_, false, &s, &err));
  std::string heat = HeatmapSvg(s, catalog_, 30);
  size_t cells = 0;
  for (size_t p = heat.find("class=\"cell\""); p != std::string::npos; p = heat.find("class=\"cell\"", p + 1)) ++cells;
  EXPECT_EQ(cells, 9u);  // 3 APIs used: 3 x 3
  EXPECT_NE(heat.find("data-count=\"2\""), std::string::npos);
  std::string hist = CoverageHistogramSvg(s, catalog_);
  EXPECT_NE(hist.find("3 of 6 APIs"), std::string::npos) << hist.substr(0, 400);
  EXPECT_NE(hist.find("class=\"bar\" data-apis=\"3\""), std::string::npos);  // bucket 0: 3 unused
  for (const std::string* svg : {&heat, &hist}) {  // no attribute twice in one element
    std::istringstream lines(*svg);
    for (std::string line; std::getline(lines, line);) {
      size_t first = line.find(" font-size="), second = first == std::string::npos ? first : line.find(" font-size=", first + 1);
      size_t close = line.find('>');
      EXPECT_TRUE(second == std::string::npos || second > close) << line;
    }
  }
  EXPECT_EQ(CoverageBucket(0), 0u);
  EXPECT_EQ(CoverageBucket(1), 1u);
  EXPECT_EQ(CoverageBucket(3), 2u);
  EXPECT_EQ(CoverageBucket(4), 3u);
}

}  // namespace
}  // namespace kz::curriculum
