// The build batch against a stand-in worker whose "build" writes <name>.so, fails, or hangs
// depending on the call's sources.
#include "compile/builder.h"

#include <gtest/gtest.h>

#include "fake_worker.h"

namespace kz::compile {
namespace {
const char* kFakeBuild = R"(
import time
call = req['call']
src = call['cuda_sources'][0]
with open(os.path.join(req['build_dir'], 'builds.log'), 'a') as f:
    f.write(call['name'] + '\n')
if src == 'hang':
    time.sleep(60)
if src == 'broken':
    send({'type': 'result', 'ok': False, 'error': {'kind': 'compile_error',
          'message': 'cuda.cu(2): error: identifier "y" is undefined'}})
else:
    lib = os.path.join(req['build_dir'], call['name'] + '.so')
    open(lib, 'w').write('library of ' + src)
    send({'type': 'result', 'ok': True, 'library': lib, 'seconds': 0.1})
)";

nlohmann::json Call(const std::string& name, const std::string& src) {
  return {{"name", name}, {"cuda_sources", {src}}, {"digest", "d-" + name + src}};
}

class BuilderTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    root_ = util::MakeTempDir(testing::TempDir(), "builder-", &err);
    worker_ = testing_support::FakeWorker(kFakeBuild);
    options_.jobs = 4;
    options_.timeout_s = 2;
    options_.env = {"2.11.0", "13.0", "3.12", "9.0"};
  }
  void TearDown() override { util::RemoveAll(root_); }
  std::string root_;
  worker::WorkerConfig worker_;
  BuilderOptions options_;
};
}  // namespace

TEST_F(BuilderTest, BuildsCachesAndDeduplicates) {
  ExtensionCache cache(root_);
  std::vector<nlohmann::json> calls = {Call("a", "x"), Call("b", "y"), Call("a", "x")};
  size_t reported = 0;
  auto r = BuildExtensions(calls, cache, worker_, options_,
                           [&](const BuildResult&, size_t, size_t) { ++reported; });
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(reported, 3u);
  for (const auto& b : r) EXPECT_TRUE(b.ok) << b.diagnostics;
  EXPECT_FALSE(r[0].cache_hit);
  EXPECT_EQ(r[0].library, r[2].library) << "identical calls share one build";
  std::string content, err;
  ASSERT_TRUE(util::ReadFile(r[1].library, &content, &err));
  EXPECT_EQ(content, "library of y");
  auto again = BuildExtensions(calls, cache, worker_, options_);
  for (const auto& b : again) EXPECT_TRUE(b.cache_hit && b.ok);
}

TEST_F(BuilderTest, CompileErrorsAreTrimmedAndCached) {
  ExtensionCache cache(root_);
  auto r = BuildExtensions({Call("bad", "broken")}, cache, worker_, options_);
  ASSERT_FALSE(r[0].ok);
  EXPECT_EQ(r[0].error_kind, "compile_error");
  EXPECT_NE(r[0].diagnostics.find("identifier \"y\" is undefined"), std::string::npos);
  auto again = BuildExtensions({Call("bad", "broken")}, cache, worker_, options_);
  EXPECT_TRUE(again[0].cache_hit);
  EXPECT_FALSE(again[0].ok);
  EXPECT_EQ(again[0].diagnostics, r[0].diagnostics);
}

TEST_F(BuilderTest, HangingBuildTimesOutAndOthersStillBuild) {
  ExtensionCache cache(root_);
  auto r = BuildExtensions({Call("slow", "hang"), Call("fine", "z")}, cache, worker_, options_);
  EXPECT_FALSE(r[0].ok);
  EXPECT_EQ(r[0].error_kind, "timeout");
  EXPECT_TRUE(r[1].ok);
  EXPECT_FALSE(cache.Lookup(r[0].key, "slow")) << "a timed-out build is not cached";
}

TEST_F(BuilderTest, UnwritableCacheIsReportedPerCall) {
  ExtensionCache cache("/proc/kz-no-cache");
  auto r = BuildExtensions({Call("a", "x")}, cache, worker_, options_);
  EXPECT_FALSE(r[0].ok);
  EXPECT_EQ(r[0].error_kind, "cache");
}

}  // namespace kz::compile
