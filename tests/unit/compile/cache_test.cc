#include "compile/cache.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>

#include "util/fs.h"

namespace kz::compile {
namespace {
nlohmann::json Call(const std::string& src) {
  return {{"name", "ext"}, {"cpp_sources", {"int f();"}}, {"cuda_sources", {src}}, {"functions", {"f"}},
          {"extra_cflags", nlohmann::json::array()}};
}
BuildEnv Env() { return {"2.11.0", "13.0", "3.12.3", "9.0"}; }

class CacheTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    root_ = util::MakeTempDir(testing::TempDir(), "cache-", &err);
    ASSERT_FALSE(root_.empty()) << err;
  }
  void TearDown() override { util::RemoveAll(root_); }
  std::string Stage(const ExtensionCache& c, const std::string& content) {
    std::string err;
    std::string s = c.NewStagingDir(&err);
    EXPECT_TRUE(util::WriteFileAtomic(s + "/ext.so", content, &err)) << err;
    return s;
  }
  std::string root_;
};
}  // namespace

TEST_F(CacheTest, KeyChangesWithEveryInput) {
  std::string k = ExtensionCache::Key(Call("a"), Env());
  EXPECT_EQ(k, ExtensionCache::Key(Call("a"), Env()));
  EXPECT_NE(k, ExtensionCache::Key(Call("b"), Env()));
  BuildEnv e = Env();
  e.arch_list = "8.0";
  EXPECT_NE(k, ExtensionCache::Key(Call("a"), e));
  e = Env();
  e.torch = "2.12.0";
  EXPECT_NE(k, ExtensionCache::Key(Call("a"), e));
  auto flagged = Call("a");
  flagged["extra_cflags"] = {"-O3"};
  EXPECT_NE(k, ExtensionCache::Key(flagged, Env()));
}

TEST_F(CacheTest, MissThenPublishThenHit) {
  ExtensionCache c(root_);
  std::string key = ExtensionCache::Key(Call("a"), Env());
  EXPECT_FALSE(c.Lookup(key, "ext"));
  std::string lib, err;
  ASSERT_TRUE(c.Publish(Stage(c, "v1"), key, "ext", {}, &lib, &err)) << err;
  auto hit = c.Lookup(key, "ext");
  ASSERT_TRUE(hit);
  EXPECT_TRUE(hit->ok);
  EXPECT_EQ(hit->library, lib);
}

TEST_F(CacheTest, SecondPublisherOfTheSameKeyUsesTheFirstEntry) {
  ExtensionCache c(root_);
  std::string key = ExtensionCache::Key(Call("a"), Env());
  std::string s1 = Stage(c, "first"), s2 = Stage(c, "second");
  std::string lib1, lib2, err;
  ASSERT_TRUE(c.Publish(s1, key, "ext", {}, &lib1, &err)) << err;
  ASSERT_TRUE(c.Publish(s2, key, "ext", {}, &lib2, &err)) << err;
  EXPECT_EQ(lib1, lib2);
  std::string content;
  ASSERT_TRUE(util::ReadFile(lib2, &content, &err));
  EXPECT_EQ(content, "first");
  EXPECT_FALSE(util::PathExists(s2)) << "the losing staging dir must be removed";
}

TEST_F(CacheTest, EntryWithoutMetaOrOfOtherVersionIsAMiss) {
  ExtensionCache c(root_);
  std::string key = ExtensionCache::Key(Call("a"), Env());
  std::string dir = root_ + "/v1/" + key.substr(0, 2) + "/" + key;
  std::string err;
  ASSERT_TRUE(util::MakeDirs(dir, &err));
  ASSERT_TRUE(util::WriteFileAtomic(dir + "/ext.so", "torn", &err));
  EXPECT_FALSE(c.Lookup(key, "ext")) << "a build killed before meta.json is not an entry";
  ASSERT_TRUE(util::WriteFileAtomic(dir + "/meta.json", "{\"format\": 99}", &err));
  EXPECT_FALSE(c.Lookup(key, "ext"));
  std::string lib;
  ASSERT_TRUE(c.Publish(Stage(c, "new"), key, "ext", {}, &lib, &err)) << err;
  EXPECT_TRUE(c.Lookup(key, "ext"));
}

TEST_F(CacheTest, CompileErrorsAreCachedWithTheirDiagnostics) {
  ExtensionCache c(root_);
  std::string key = ExtensionCache::Key(Call("broken"), Env());
  std::string err, lib;
  std::string staging = c.NewStagingDir(&err);
  nlohmann::json meta = {{"ok", false}, {"diagnostics", "cuda.cu(3): error: y undefined"}};
  ASSERT_TRUE(c.Publish(staging, key, "ext", meta, &lib, &err)) << err;
  EXPECT_EQ(lib, "");
  auto hit = c.Lookup(key, "ext");
  ASSERT_TRUE(hit);
  EXPECT_FALSE(hit->ok);
  EXPECT_EQ(hit->diagnostics, "cuda.cu(3): error: y undefined");
}

TEST_F(CacheTest, EvictionRemovesLeastRecentlyUsedEntriesFirst) {
  ExtensionCache c(root_);
  std::string err, lib;
  std::vector<std::string> keys;
  for (const char* src : {"a", "b", "c"}) {
    keys.push_back(ExtensionCache::Key(Call(src), Env()));
    ASSERT_TRUE(c.Publish(Stage(c, std::string(1000, 'x')), keys.back(), "ext", {}, &lib, &err)) << err;
  }
  // Make "a" the oldest, then use it: "b" becomes the least recently used.
  namespace fs = std::filesystem;
  auto old = fs::file_time_type::clock::now() - std::chrono::hours(2);
  for (const auto& k : keys)
    fs::last_write_time(root_ + "/v1/" + k.substr(0, 2) + "/" + k + "/meta.json", old);
  c.Touch(keys[0]);
  fs::last_write_time(root_ + "/v1/" + keys[2].substr(0, 2) + "/" + keys[2] + "/meta.json",
                      old + std::chrono::minutes(1));
  auto report = c.Evict(2500);  // room for two entries of ~1 KB
  EXPECT_EQ(report.entries_removed, 1);
  EXPECT_LE(report.bytes_after, 2500u);
  EXPECT_TRUE(c.Lookup(keys[0], "ext"));
  EXPECT_FALSE(c.Lookup(keys[1], "ext")) << "the least recently used entry goes first";
  EXPECT_TRUE(c.Lookup(keys[2], "ext"));
}

TEST_F(CacheTest, EvictionCountsPchDirsAndExtractionsAndSkipsAPchInUse) {
  namespace fs = std::filesystem;
  std::string err;
  auto file = [&](const std::string& path, size_t bytes, int hours_ago) {
    ASSERT_TRUE(util::MakeDirs(fs::path(path).parent_path().string(), &err)) << err;
    ASSERT_TRUE(util::WriteFileAtomic(path, std::string(bytes, 'x'), &err)) << err;
    fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(hours_ago));
  };
  std::string busy = root_ + "/pch/aaaaaaaaaaaaaaaaaaaaaaaa", idle = root_ + "/pch/bbbbbbbbbbbbbbbbbbbbbbbb";
  file(busy + "/h.gch", 3000, 5);
  file(idle + "/h.gch", 3000, 4);
  file(root_ + "/pch/templates/t.json", 10, 9);  // not a PCH directory: never evicted
  file(root_ + "/extract/v2/ab/abcd.json", 1000, 3);
  for (const auto& d : {busy, idle})  // a directory's time is its last use
    fs::last_write_time(d, fs::file_time_type::clock::now() - std::chrono::hours(d == busy ? 5 : 4));
  int fd = ::open((busy + ".lock").c_str(), O_RDWR | O_CREAT, 0644);  // a build using it
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_SH), 0);
  auto report = ExtensionCache(root_).Evict(1500);
  ::close(fd);
  EXPECT_EQ(report.pch_removed, 1);
  EXPECT_EQ(report.extract_removed, 1);
  EXPECT_TRUE(util::PathExists(busy + "/h.gch")) << "a PCH whose lock a build holds stays";
  EXPECT_FALSE(util::PathExists(idle));
  EXPECT_TRUE(util::PathExists(root_ + "/pch/templates/t.json"));
  EXPECT_EQ(report.bytes_before, 7000u);  // templates (a few KiB per flag set) are not counted
}

TEST_F(CacheTest, StaleStagingDirsOfKilledBuildsAreSwept) {
  ExtensionCache c(root_);
  std::string err;
  std::string fresh = c.NewStagingDir(&err), stale = c.NewStagingDir(&err);
  std::filesystem::last_write_time(stale, std::filesystem::file_time_type::clock::now() - std::chrono::hours(3));
  auto report = c.Evict(1ull << 40);
  EXPECT_EQ(report.staging_removed, 1);
  EXPECT_TRUE(util::PathExists(fresh));
  EXPECT_FALSE(util::PathExists(stale));
}

TEST_F(CacheTest, ReadOnlyRootGivesAnError) {
  ExtensionCache c("/proc/kz-cannot-create");
  std::string err;
  EXPECT_EQ(c.NewStagingDir(&err), "");
  EXPECT_FALSE(err.empty());
}

}  // namespace kz::compile
