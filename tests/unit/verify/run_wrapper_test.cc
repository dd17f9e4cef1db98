// A worker call under a wrapper command (WorkerCall::argv_prefix, how ncu runs in front of a
// profiling child): the real child-process code, a fake wrapper that records its argv and execs
// the rest; the worker's result frame still comes back on the channel through the wrapper.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "util/fs.h"
#include "worker/worker_client.h"

namespace kz::worker {
namespace {

TEST(RunWrapperTest, TheWorkerAnswersThroughTheWrapper) {
  std::string err, dir = util::MakeTempDir(::testing::TempDir(), "kz-wrap-", &err);
  ASSERT_FALSE(dir.empty()) << err;
  std::string python = std::string(KZ_SOURCE_DIR) + "/.venv/bin/python";
  if (!util::PathExists(python)) GTEST_SKIP() << "no " << python;
  std::ofstream(dir + "/ncu")
      << "#!/bin/bash\necho \"$@\" > " << dir << "/argv.txt\n"
      << "while [ $# -gt 0 ]; do case \"$1\" in --csv) shift;; --*) shift 2;; *) break;; esac; done\n"
      << "exec \"$@\"\n";
  ::chmod((dir + "/ncu").c_str(), 0755);
  WorkerConfig config;
  config.python = python;
  config.package_dir = std::string(KZ_SOURCE_DIR) + "/python";
  WorkerCall call;
  call.request = {{"op", "no_such_op"}};
  call.argv_prefix = {dir + "/ncu", "--csv", "--launch-count", "2"};
  call.wall_limit_s = 60;
  WorkerReply reply = RunWorker(config, call);
  std::string argv;
  util::ReadFile(dir + "/argv.txt", &argv, &err);
  util::RemoveAll(dir);
  EXPECT_EQ(argv, "--csv --launch-count 2 " + python + " -m kz_worker\n");
  ASSERT_TRUE(reply.result.has_value()) << DescribeEnd(reply.process) << reply.process.stderr_tail;
  EXPECT_FALSE(reply.result->value("ok", true));  // the unknown op's error, from the worker itself
  EXPECT_TRUE(reply.protocol_error.empty()) << reply.protocol_error;
}

}  // namespace
}  // namespace kz::worker
