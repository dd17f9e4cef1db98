#include "curriculum/standins.h"

#include <gtest/gtest.h>

#include "curriculum/catalog.h"

namespace kz::curriculum {
namespace {

Catalog RealCatalog() {
  Catalog c;
  std::string err;
  EXPECT_TRUE(c.Load(std::string(KZ_SOURCE_DIR) + "/data/api_catalog.json", &err)) << err;
  return c;
}

// Every API of the shipped catalog has a stand-in step naming one of its aliases' spellings.
TEST(Standins, EveryCatalogApiHasASnippet) {
  Catalog c = RealCatalog();
  ASSERT_GT(c.size(), 200u);
  for (const Api& a : c.apis()) {
    auto s = StandinSnippet(a);
    ASSERT_TRUE(s) << a.id;
    EXPECT_NE(s->expr.find("{x}"), std::string::npos) << a.id << ": the step must use its input";
    if (!s->init.empty()) {
      EXPECT_NE(s->expr.find("{m}"), std::string::npos) << a.id;
    }
  }
}

TEST(Standins, ModuleHasKernelBenchFormatAndChainsShapeKeepingSteps) {
  Catalog c = RealCatalog();
  std::vector<size_t> set = {*c.Find("conv2d"), *c.Find("relu"), *c.Find("sum")};
  std::string text, err;
  ASSERT_TRUE(StandinModule(c, set, &text, &err)) << err;
  for (const char* part : {"class Model(nn.Module):", "def forward(self, x, y, t):", "def get_inputs():",
                           "def get_init_inputs():", "torch.nn.Conv2d(8, 8, 3, padding=1)", "torch.nn.ReLU()",
                           "torch.sum("})
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  // conv2d and relu keep the shape: relu's input is conv2d's output, sum's input relu's,
  // and only the last step is returned.
  EXPECT_NE(text.find("a0 = self.m0(x)"), std::string::npos) << text;
  EXPECT_NE(text.find("a1 = self.m1(a0)"), std::string::npos) << text;
  EXPECT_NE(text.find("a2 = torch.sum(a1, dim=-1)"), std::string::npos) << text;
  EXPECT_NE(text.find("return a2\n"), std::string::npos) << text;
}

TEST(Standins, StepsThatChangeTheShapeRestartFromTheInputAndAreConcatenated) {
  Catalog c = RealCatalog();
  std::string text, err;
  ASSERT_TRUE(StandinModule(c, {*c.Find("sum"), *c.Find("mean")}, &text, &err)) << err;
  EXPECT_NE(text.find("torch.sum(x, dim=-1)"), std::string::npos) << text;
  EXPECT_NE(text.find("torch.mean(x, dim=-1)"), std::string::npos) << text;
  EXPECT_NE(text.find("return torch.cat([a0.reshape(-1), a1.reshape(-1)])"), std::string::npos) << text;
}

TEST(Standins, RangesAreRespectedAndOutputIsDeterministic) {
  Catalog c = RealCatalog();
  std::string a, b, err;
  ASSERT_TRUE(StandinModule(c, {*c.Find("log"), *c.Find("acos")}, &a, &err)) << err;
  ASSERT_TRUE(StandinModule(c, {*c.Find("log"), *c.Find("acos")}, &b, &err)) << err;
  EXPECT_EQ(a, b);
  EXPECT_NE(a.find("torch.log(") , std::string::npos);
  EXPECT_NE(a.find(".abs() + 0.5)"), std::string::npos) << "log needs positive inputs\n" << a;
  EXPECT_NE(a.find("torch.acos(torch.tanh("), std::string::npos) << "acos needs (-1, 1)\n" << a;
}

TEST(Standins, EmptySetAndUnknownApiAreErrors) {
  Catalog c = RealCatalog();
  std::string text, err;
  EXPECT_FALSE(StandinModule(c, {}, &text, &err));
  EXPECT_NE(err.find("empty"), std::string::npos);
  Api odd{"no_such", "function", "torch.no_such", {"torch.no_such"}, "", "contraction", nlohmann::json::object()};
  EXPECT_FALSE(StandinSnippet(odd));
}

}  // namespace
}  // namespace kz::curriculum
