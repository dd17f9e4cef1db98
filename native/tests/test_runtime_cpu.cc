// Checks of kz_runtime that need no GPU: calls before init, bad arguments, and
// kz_rt_init on a host without a usable driver (absent or stub libcuda.so.1).
// With KZ_TEST_EXPECT_STUB=1 the stub driver must be what was found.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kz_runtime.h"

namespace {

bool says_no_driver_or_device(const std::string& msg) {
  return msg.rfind("no CUDA driver", 0) == 0 || msg.rfind("no CUDA device", 0) == 0;
}

TEST(RuntimeCpu, CallsBeforeInitFail) {
  float ms[1] = {0};
  auto cb = [](void*) { return 0; };
  EXPECT_EQ(kz_rt_time_calls(cb, nullptr, 1, 1, ms, nullptr), KZ_RT_NOT_INITIALIZED);
  EXPECT_NE(std::string(kz_rt_last_error()).find("not initialised"), std::string::npos);
  int major = 0;
  EXPECT_EQ(kz_rt_device_info(nullptr, 0, &major, nullptr, nullptr, nullptr),
            KZ_RT_NOT_INITIALIZED);
  EXPECT_EQ(kz_rt_flush_bytes(), 0u);
  kz_rt_shutdown();  // safe without init
  EXPECT_STREQ(kz_rt_last_error(), "");
}

TEST(RuntimeCpu, BadOrdinalIsRejected) {
  EXPECT_EQ(kz_rt_init(-1, 0), KZ_RT_BAD_ARGUMENT);
  EXPECT_NE(std::string(kz_rt_last_error()).find("bad argument"), std::string::npos);
}

TEST(RuntimeCpu, InitWithoutDriverFailsClearly) {
  const bool expect_stub = std::getenv("KZ_TEST_EXPECT_STUB") != nullptr;
  const int rc = kz_rt_init(0, 0);
  const std::string msg = kz_rt_last_error();
  if (rc == KZ_RT_OK && !expect_stub) {
    kz_rt_shutdown();
    GTEST_SKIP() << "a CUDA driver and device are present on this host";
  }
  std::printf("kz_rt_init -> %d: %s\n", rc, msg.c_str());
  EXPECT_TRUE(rc == KZ_RT_NO_DRIVER || rc == KZ_RT_NO_DEVICE) << rc;
  EXPECT_TRUE(says_no_driver_or_device(msg)) << msg;
  if (expect_stub) {
    EXPECT_EQ(rc, KZ_RT_NO_DRIVER);
    EXPECT_NE(msg.find("stub"), std::string::npos) << msg;
  }
  // The failure is repeatable and probe agrees.
  EXPECT_EQ(kz_rt_init(0, 0), rc);
  EXPECT_EQ(kz_rt_last_error(), msg);
  int count = -1;
  EXPECT_EQ(kz_rt_probe(&count), rc);
  EXPECT_EQ(count, -1);
  EXPECT_EQ(kz_rt_last_error(), msg);
  float ms[1] = {0};
  EXPECT_EQ(kz_rt_time_calls([](void*) { return 0; }, nullptr, 1, 0, ms, nullptr),
            KZ_RT_NOT_INITIALIZED);
}

}  // namespace
