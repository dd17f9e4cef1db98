#include "util/fs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>
#include <vector>

namespace kz::util {

TEST(Fs, AtomicWriteReplacesAndLeavesNoTemp) {
  std::string err;
  std::string dir = MakeTempDir(testing::TempDir(), "fs-", &err);
  ASSERT_FALSE(dir.empty()) << err;
  std::string p = dir + "/f.json";
  ASSERT_TRUE(WriteFileAtomic(p, "one", &err)) << err;
  ASSERT_TRUE(WriteFileAtomic(p, "two", &err)) << err;
  std::string got;
  ASSERT_TRUE(ReadFile(p, &got, &err));
  EXPECT_EQ(got, "two");
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) (void)e, ++files;
  EXPECT_EQ(files, 1);
  RemoveAll(dir);
}

// Threads of one process writing one path at once (the build driver's facts cache): each
// write lands whole, never another thread's half (session 15's temp name was per process).
TEST(Fs, ConcurrentAtomicWritesFromThreadsNeverTear) {
  std::string err;
  std::string dir = MakeTempDir(testing::TempDir(), "fs-", &err);
  ASSERT_FALSE(dir.empty()) << err;
  std::string p = dir + "/facts.json";
  std::vector<std::thread> threads;
  std::vector<int> failures(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      std::string text(256 << 10, char('a' + t)), e;
      for (int i = 0; i < 20; ++i) failures[size_t(t)] += !WriteFileAtomic(p, text, &e);
    });
  for (auto& th : threads) th.join();
  for (int f : failures) EXPECT_EQ(f, 0);
  std::string got;
  ASSERT_TRUE(ReadFile(p, &got, &err));
  ASSERT_EQ(got.size(), size_t(256 << 10));
  EXPECT_EQ(got.find_first_not_of(got[0]), std::string::npos) << "a torn file";
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) (void)e, ++files;
  EXPECT_EQ(files, 1);
  RemoveAll(dir);
}

TEST(Fs, ReadErrorsNameThePath) {
  std::string out, err;
  EXPECT_FALSE(ReadFile("/nonexistent/x.py", &out, &err));
  EXPECT_NE(err.find("/nonexistent/x.py"), std::string::npos);
  EXPECT_FALSE(ReadFile("/tmp", &out, &err));
  EXPECT_NE(err.find("directory"), std::string::npos);
}

TEST(Fs, AtomicWriteIntoMissingDirFails) {
  std::string err;
  EXPECT_FALSE(WriteFileAtomic("/nonexistent-dir/f", "x", &err));
  EXPECT_FALSE(err.empty());
}

}  // namespace kz::util
