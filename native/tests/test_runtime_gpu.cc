// Timing checks on a real GPU. main() initialises the runtime on device 0 and
// exits 77 (ctest: skipped) when there is no driver or no device.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "kz_runtime.h"

namespace {

struct Counter {
  int calls = 0;
  int fail_at = -1;       // return nonzero on this call
  int sleep_us = 0;       // host sleep inside the callback
};

int count_cb(void* user) {
  auto* c = static_cast<Counter*>(user);
  if (c->sleep_us) std::this_thread::sleep_for(std::chrono::microseconds(c->sleep_us));
  return c->calls++ == c->fail_at ? 1 : 0;
}

TEST(RuntimeGpu, TrivialCallbackTimesAreNonNegative) {
  for (int flush : {1, 0}) {
    Counter c;
    std::vector<float> ms(50, -1.f), host(50, -1.f);
    ASSERT_EQ(kz_rt_time_calls(count_cb, &c, 50, flush, ms.data(), host.data()), 0)
        << kz_rt_last_error();
    EXPECT_EQ(c.calls, 50);
    for (int i = 0; i < 50; ++i) {
      EXPECT_GE(ms[i], 0.f) << i;
      EXPECT_GE(host[i], 0.f) << i;
      EXPECT_LE(ms[i], host[i] + 0.01f) << "device time inside host window, call " << i;
    }
    std::printf("flush=%d: first %.4f ms (host %.4f), last %.4f ms (host %.4f)\n", flush,
                ms[0], host[0], ms[49], host[49]);
  }
}

TEST(RuntimeGpu, HostSleepBetweenEventsIsMeasured) {
  Counter c;
  c.sleep_us = 2000;
  float ms[3], host[3];
  ASSERT_EQ(kz_rt_time_calls(count_cb, &c, 3, 1, ms, host), 0) << kz_rt_last_error();
  for (int i = 0; i < 3; ++i) {
    EXPECT_GE(host[i], 2.0f);
    EXPECT_GE(ms[i], 1.5f);  // end is recorded ~2 ms after start
  }
}

TEST(RuntimeGpu, NullHostArrayIsAllowed) {
  Counter c;
  float ms[4];
  EXPECT_EQ(kz_rt_time_calls(count_cb, &c, 4, 1, ms, nullptr), 0) << kz_rt_last_error();
  EXPECT_EQ(kz_rt_time_calls(count_cb, &c, 0, 1, nullptr, nullptr), 0);
  EXPECT_EQ(c.calls, 4);
}

TEST(RuntimeGpu, CallbackFailureStopsTheLoop) {
  Counter c;
  c.fail_at = 2;
  float ms[10];
  EXPECT_EQ(kz_rt_time_calls(count_cb, &c, 10, 1, ms, nullptr), KZ_RT_CALLBACK_FAILED);
  EXPECT_EQ(c.calls, 3);
  EXPECT_NE(std::string(kz_rt_last_error()).find("call 2"), std::string::npos);
}

TEST(RuntimeGpu, DeviceInfo) {
  char name[256] = {0};
  int major = 0, minor = -1, l2 = 0, sms = 0;
  ASSERT_EQ(kz_rt_device_info(name, sizeof name, &major, &minor, &l2, &sms), 0)
      << kz_rt_last_error();
  std::printf("%s: cc %d.%d, L2 %d bytes, %d SMs, flush %zu bytes\n", name, major, minor,
              l2, sms, kz_rt_flush_bytes());
  EXPECT_GT(std::string(name).size(), 0u);
  EXPECT_GT(major, 0);
  EXPECT_GT(l2, 0);
  EXPECT_GT(sms, 0);
  EXPECT_EQ(kz_rt_flush_bytes(), size_t{256} << 20);
}

TEST(RuntimeGpu, OtherThreadsAreRefused) {
  int rc = 0;
  std::thread t([&] {
    float ms[1];
    rc = kz_rt_time_calls(count_cb, nullptr, 1, 0, ms, nullptr);
  });
  t.join();
  EXPECT_EQ(rc, KZ_RT_WRONG_THREAD);
}

// Runs only under the fake driver with KZ_FAKE_CUDA_FAIL_RECORD=4 (ctest
// native_runtime_gpu_fake_error): the 4th cuEventRecord (end of call 1) fails.
TEST(RuntimeGpu, DriverErrorIsReported) {
  if (!std::getenv("KZ_FAKE_CUDA_FAIL_RECORD")) GTEST_SKIP() << "fake driver only";
  Counter c;
  float ms[5] = {-1, -1, -1, -1, -1};
  EXPECT_EQ(kz_rt_time_calls(count_cb, &c, 5, 1, ms, nullptr), KZ_RT_CUDA_ERROR);
  const std::string msg = kz_rt_last_error();
  EXPECT_NE(msg.find("cuEventRecord(end) failed at call 1: an illegal memory access"),
            std::string::npos) << msg;
  EXPECT_EQ(c.calls, 2);
  EXPECT_GE(ms[0], 0.f);  // calls before the failure are filled
}

TEST(RuntimeGpu, ReinitRules) {
  EXPECT_EQ(kz_rt_init(0, 0), 0);                  // same arguments: no-op
  EXPECT_EQ(kz_rt_init(0, 1 << 20), KZ_RT_BAD_ARGUMENT);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = kz_rt_init(0, 0);
  if (rc == KZ_RT_NO_DRIVER || rc == KZ_RT_NO_DEVICE) {
    std::printf("SKIPPED: %s\n", kz_rt_last_error());
    return 77;
  }
  if (rc != 0) {
    std::printf("kz_rt_init failed (%d): %s\n", rc, kz_rt_last_error());
    return 1;
  }
  const int result = RUN_ALL_TESTS();
  kz_rt_shutdown();
  return result;
}
