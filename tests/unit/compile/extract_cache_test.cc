#include "compile/extract_cache.h"

#include <gtest/gtest.h>

#include "util/fs.h"

namespace kz::compile {

TEST(ExtractCache, StoresAndFindsByContentAndEnvironment) {
  std::string err;
  std::string root = util::MakeTempDir(testing::TempDir(), "xc-", &err);
  ExtractCache c(root);
  nlohmann::json env = {{"torch", "2.11.0"}, {"cuda", "13.0"}, {"python", "3.12.3"}};
  std::string key = ExtractCache::Key("candidate source", env);
  EXPECT_FALSE(c.Lookup(key));
  nlohmann::json result = {{"calls", {{{"name", "ext"}}}}, {"env", env}};
  ASSERT_TRUE(c.Store(key, result, &err)) << err;
  auto hit = c.Lookup(key);
  ASSERT_TRUE(hit);
  EXPECT_EQ((*hit)["calls"][0]["name"], "ext");
  nlohmann::json other = env;
  other["torch"] = "2.12.0";
  EXPECT_NE(key, ExtractCache::Key("candidate source", other)) << "a torch upgrade re-extracts";
  EXPECT_NE(key, ExtractCache::Key("candidate source ", env));
  util::RemoveAll(root);
}

TEST(ExtractCache, CorruptEntryIsAMiss) {
  std::string err;
  std::string root = util::MakeTempDir(testing::TempDir(), "xc-", &err);
  ExtractCache c(root);
  std::string key = ExtractCache::Key("x", {});
  ASSERT_TRUE(c.Store(key, {{"calls", nlohmann::json::array()}}, &err));
  std::string path = root + "/extract/v" + std::to_string(kExtractCacheVersion) + "/" + key.substr(0, 2) + "/" + key + ".json";
  ASSERT_TRUE(util::WriteFileAtomic(path, "{trunc", &err));
  EXPECT_FALSE(c.Lookup(key));
  util::RemoveAll(root);
}

}  // namespace kz::compile
