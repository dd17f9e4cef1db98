#include "util/fs.h"

#include <gtest/gtest.h>

#include <filesystem>

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
