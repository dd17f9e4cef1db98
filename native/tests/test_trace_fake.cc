// The trace over the host-only fake CUPTI (fake_cupti.cc) and fake driver: window
// handling, record conversion (kinds, demangling, marker, truncation), reads,
// stream ids, and failure paths selected by the fake's environment variables
// (ctest native_trace_fake_*). KZ_FAKE_CUPTI_PATH names the fake library.
#include <cupti_activity.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "kz_runtime.h"
#include "kz_trace.h"

namespace {

using PushFn = void (*)(int, const char*, uint32_t, uint64_t, uint64_t, uint32_t, uint64_t,
                        uint32_t);
using PushDepFn = void (*)(int, uint32_t, uint32_t, uint32_t, uint64_t);
using EnabledFn = int (*)(int);

struct Fake {
  PushFn push = nullptr;
  PushDepFn push_dep = nullptr;
  EnabledFn enabled = nullptr;
};

const char* fake_path() { return std::getenv("KZ_FAKE_CUPTI_PATH"); }

// Initialises the trace over the fake once; the hooks come from the same handle.
Fake& fake() {
  static Fake f = [] {
    Fake out;
    const char* paths[] = {fake_path()};
    if (kz_tr_init(paths, 1) != KZ_RT_OK) return out;
    void* h = dlopen(fake_path(), RTLD_NOW | RTLD_NOLOAD);
    out.push = reinterpret_cast<PushFn>(dlsym(h, "kz_fake_cupti_push"));
    out.push_dep = reinterpret_cast<PushDepFn>(dlsym(h, "kz_fake_cupti_push_dep"));
    out.enabled = reinterpret_cast<EnabledFn>(dlsym(h, "kz_fake_cupti_enabled"));
    return out;
  }();
  return f;
}

std::vector<kz_tr_record> stop_and_read(uint64_t* dropped = nullptr) {
  int count = -1, copied = -1;
  EXPECT_EQ(kz_tr_stop(&count, dropped), KZ_RT_OK) << kz_tr_last_error();
  std::vector<kz_tr_record> out(static_cast<size_t>(count > 0 ? count : 0));
  EXPECT_EQ(kz_tr_read(out.data(), count, &copied), KZ_RT_OK);
  EXPECT_EQ(copied, count);
  return out;
}

class TraceFake : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fake_path()) GTEST_SKIP() << "KZ_FAKE_CUPTI_PATH not set";
    if (std::getenv("KZ_FAKE_CUPTI_VERSION") || std::getenv("KZ_FAKE_CUPTI_FAIL_ENABLE") ||
        std::getenv("KZ_FAKE_CUPTI_NO_DEPS"))
      GTEST_SKIP() << "failure-path run";
    ASSERT_NE(fake().push, nullptr) << kz_tr_last_error();
  }
};

TEST_F(TraceFake, LoadsTheGivenLibrary) {
  EXPECT_NE(std::string(kz_tr_library()).find("fake-cupti/libcupti.so.13"), std::string::npos)
      << kz_tr_library();
  EXPECT_EQ(kz_tr_version(), 130001u);
  EXPECT_NE(kz_tr_marker_value(), 0u);
  const char* paths[] = {"/elsewhere/libcupti.so"};
  EXPECT_EQ(kz_tr_init(paths, 1), KZ_RT_OK);  // second init: no-op
}

TEST_F(TraceFake, WindowKeepsConvertedRecords) {
  ASSERT_EQ(kz_tr_start(), KZ_RT_OK) << kz_tr_last_error();
  EXPECT_EQ(fake().enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 1);
  EXPECT_EQ(fake().enabled(CUPTI_ACTIVITY_KIND_KERNEL), 0);  // never the serialising kind
  fake().push(1, "_Z13matmul_kernelPKfS0_Pfiii", 7, 1000, 2000, 0, 0, 0);
  fake().push(1, "_Z3fooILi128EEvPf", 9, 1500, 4000, 0, 0, 3);
  fake().push(1, "softmax_kernel", 7, 2000, 2100, 0, 0, 0);
  fake().push(2, nullptr, 7, 2200, 2201, kz_tr_marker_value(), 4, 0);
  fake().push(2, nullptr, 7, 100, 200, kz_tr_marker_value(), 8, 0);  // not 4 bytes
  fake().push(3, nullptr, 7, 300, 400, 2, 16, 0);                    // DtoH
  EXPECT_EQ(kz_tr_mark(0), KZ_RT_OK) << kz_tr_last_error();  // fake driver memset
  auto r = stop_and_read();
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0].kind, KZ_TR_KERNEL);
  EXPECT_STREQ(r[0].name, "matmul_kernel(float const*, float const*, float*, int, int, int)");
  EXPECT_EQ(r[0].stream_id, 7u);
  EXPECT_EQ(r[0].start_ns, 1000u);
  EXPECT_EQ(r[0].end_ns, 2000u);
  EXPECT_STREQ(r[1].name, "void foo<128>(float*)");
  EXPECT_EQ(r[1].graph_id, 3u);
  EXPECT_STREQ(r[2].name, "softmax_kernel");  // not a C++ name: kept as is
  EXPECT_EQ(r[3].kind, KZ_TR_MARKER);
  EXPECT_STREQ(r[3].name, "kz marker");
  EXPECT_EQ(r[4].kind, KZ_TR_MEMSET);
  EXPECT_EQ(r[4].bytes, 8u);
  EXPECT_EQ(r[5].kind, KZ_TR_MEMCPY);
  EXPECT_STREQ(r[5].name, "memcpy DtoH");
  EXPECT_NE(r[0].correlation_id, r[1].correlation_id);
}

TEST_F(TraceFake, RecordsOutsideTheWindowAreDropped) {
  ASSERT_EQ(kz_tr_enable(), KZ_RT_OK);
  fake().push(1, "before_start", 7, 1, 2, 0, 0, 0);
  ASSERT_EQ(kz_tr_start(), KZ_RT_OK);
  auto r = stop_and_read();
  EXPECT_TRUE(r.empty());
  fake().push(1, "after_stop", 7, 1, 2, 0, 0, 0);
  ASSERT_EQ(kz_tr_start(), KZ_RT_OK);
  EXPECT_TRUE(stop_and_read().empty());
}

TEST_F(TraceFake, LongNamesAreCut) {
  const std::string name(3000, 'k');
  ASSERT_EQ(kz_tr_start(), KZ_RT_OK);
  fake().push(1, name.c_str(), 7, 1, 2, 0, 0, 0);
  auto r = stop_and_read();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(std::string(r[0].name), name.substr(0, KZ_TR_NAME_LEN - 1));
}

TEST_F(TraceFake, ReadCopiesAtMostCapacity) {
  ASSERT_EQ(kz_tr_start(), KZ_RT_OK);
  for (int i = 0; i < 5; ++i) fake().push(1, "k", 7, 1, 2, 0, 0, 0);
  int count = 0, copied = 0;
  ASSERT_EQ(kz_tr_stop(&count, nullptr), KZ_RT_OK);
  EXPECT_EQ(count, 5);
  kz_tr_record two[2];
  EXPECT_EQ(kz_tr_read(two, 2, &copied), KZ_RT_OK);
  EXPECT_EQ(copied, 2);
}

TEST_F(TraceFake, DroppedRecordsAreCounted) {
  const char* d = std::getenv("KZ_FAKE_CUPTI_DROPPED");
  ASSERT_EQ(kz_tr_start(), KZ_RT_OK);
  fake().push(1, "k", 7, 1, 2, 0, 0, 0);
  uint64_t dropped = 99;
  auto r = stop_and_read(&dropped);
  EXPECT_EQ(dropped, d ? std::strtoull(d, nullptr, 10) : 0u);
}

TEST_F(TraceFake, StreamIdsAndWindowRules) {
  uint32_t id = 0;
  EXPECT_EQ(kz_tr_stream_id(0, &id), KZ_RT_OK);
  EXPECT_EQ(id, 7u);
  EXPECT_EQ(kz_tr_stream_id(0x12, &id), KZ_RT_OK);
  EXPECT_EQ(id, 118u);
  EXPECT_EQ(kz_tr_stream_id(0, nullptr), KZ_RT_BAD_ARGUMENT);
  int count = 0;
  EXPECT_EQ(kz_tr_mark(0), KZ_RT_BAD_ARGUMENT);  // no window
  EXPECT_NE(std::string(kz_tr_last_error()).find("no open window"), std::string::npos);
  EXPECT_EQ(kz_tr_stop(&count, nullptr), KZ_RT_BAD_ARGUMENT);
  ASSERT_EQ(kz_tr_start(), KZ_RT_OK);
  EXPECT_EQ(kz_tr_stop(nullptr, nullptr), KZ_RT_BAD_ARGUMENT);
  EXPECT_EQ(kz_tr_stop(&count, nullptr), KZ_RT_OK);
  EXPECT_EQ(kz_tr_disable(), KZ_RT_OK);
  EXPECT_EQ(fake().enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 0);
  EXPECT_EQ(fake().enabled(CUPTI_ACTIVITY_KIND_MEMSET), 0);
  EXPECT_EQ(fake().enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), 0);
  EXPECT_NE(std::string(kz_tr_dependencies()), "");  // disabled: says so
  kz_tr_shutdown();
  EXPECT_EQ(kz_tr_start(), KZ_RT_OK);  // usable again after shutdown
  EXPECT_EQ(kz_tr_stop(&count, nullptr), KZ_RT_OK);
  kz_tr_shutdown();
}

TEST_F(TraceFake, DependencyRecordsAreConverted) {
  ASSERT_EQ(kz_tr_start(), KZ_RT_OK) << kz_tr_last_error();
  EXPECT_STREQ(kz_tr_dependencies(), "");
  EXPECT_EQ(kz_tr_record_size(), sizeof(kz_tr_record));
  for (int k : {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_CUDA_EVENT,
                CUPTI_ACTIVITY_KIND_STREAM})
    EXPECT_EQ(fake().enabled(k), 1) << k;
  fake().push(1, "side_kernel", 21, 10, 20, 0, 0, 0);
  fake().push_dep(KZ_TR_EVENT_RECORD, 21, 42, 0, 5);
  fake().push_dep(KZ_TR_SYNC, 7, 42, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 5);
  fake().push_dep(KZ_TR_SYNC, KZ_TR_NO_ID, KZ_TR_NO_ID,
                  CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, KZ_TR_NO_ID);
  auto r = stop_and_read();
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[1].kind, KZ_TR_EVENT_RECORD);
  EXPECT_STREQ(r[1].name, "event record");
  EXPECT_EQ(r[1].stream_id, 21u);
  EXPECT_EQ(r[1].event_id, 42u);
  EXPECT_EQ(r[1].event_sync_id, 5u);
  EXPECT_EQ(r[2].kind, KZ_TR_SYNC);
  EXPECT_STREQ(r[2].name, "stream wait event");
  EXPECT_EQ(r[2].detail,
            static_cast<uint32_t>(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT));
  EXPECT_EQ(r[2].stream_id, 7u);
  EXPECT_EQ(r[2].event_id, r[1].event_id);
  EXPECT_EQ(r[2].event_sync_id, r[1].event_sync_id);
  EXPECT_STREQ(r[3].name, "context synchronize");
  EXPECT_EQ(r[3].event_id, KZ_TR_NO_ID);
  EXPECT_LT(r[0].correlation_id, r[1].correlation_id);  // API order
  EXPECT_LT(r[1].correlation_id, r[2].correlation_id);
  EXPECT_EQ(r[0].event_id, 0u);  // work records leave the dependency fields 0
  EXPECT_EQ(r[0].detail, 0u);
}

TEST_F(TraceFake, StreamRecordsOutliveTheirWindow) {
  ASSERT_EQ(kz_tr_enable(), KZ_RT_OK);
  fake().push_dep(KZ_TR_STREAM, 30, 0, CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING, 0);
  fake().push(1, "before_start", 7, 1, 2, 0, 0, 0);
  ASSERT_EQ(kz_tr_start(), KZ_RT_OK);  // drops the kernel, keeps the stream
  for (int window = 0; window < 2; ++window) {
    if (window) {
      ASSERT_EQ(kz_tr_start(), KZ_RT_OK);
    }
    fake().push(1, "k", 30, 1, 2, 0, 0, 0);
    auto r = stop_and_read();
    ASSERT_EQ(r.size(), 2u) << "window " << window;
    EXPECT_EQ(r[0].kind, KZ_TR_KERNEL);
    EXPECT_EQ(r[1].kind, KZ_TR_STREAM);
    EXPECT_EQ(r[1].stream_id, 30u);
    EXPECT_EQ(r[1].detail, static_cast<uint32_t>(CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING));
  }
  kz_tr_shutdown();  // forgets the streams (the other tests expect none)
  ASSERT_EQ(kz_tr_start(), KZ_RT_OK);
  EXPECT_TRUE(stop_and_read().empty());
  kz_tr_shutdown();
}

// ctest native_trace_fake_nodeps: KZ_FAKE_CUPTI_NO_DEPS=1 (a CUPTI without the
// dependency kinds): the trace works, kz_tr_dependencies() says why they are missing.
TEST(TraceFakeFailures, DependencyKindsUnavailable) {
  if (!fake_path() || !std::getenv("KZ_FAKE_CUPTI_NO_DEPS")) GTEST_SKIP() << "needs the env";
  ASSERT_NE(fake().push_dep, nullptr) << kz_tr_last_error();
  EXPECT_NE(std::string(kz_tr_dependencies()).find("not enabled"), std::string::npos);
  ASSERT_EQ(kz_tr_start(), KZ_RT_OK) << kz_tr_last_error();
  const std::string why = kz_tr_dependencies();
  EXPECT_NE(why.find("cuptiActivityEnable(CUDA_EVENT) failed: CUPTI_ERROR_NOT_COMPATIBLE"),
            std::string::npos) << why;
  EXPECT_EQ(fake().enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), 0);  // rolled back
  EXPECT_EQ(fake().enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 1);
  fake().push(1, "k", 7, 1, 2, 0, 0, 0);
  fake().push_dep(KZ_TR_SYNC, 7, 42, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, 5);
  auto r = stop_and_read();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].kind, KZ_TR_KERNEL);
  EXPECT_EQ(kz_tr_disable(), KZ_RT_OK);
  EXPECT_NE(std::string(kz_tr_dependencies()), "");
}

// ctest native_trace_fake_old: KZ_FAKE_CUPTI_VERSION=28 (CUDA 12.9's CUPTI).
TEST(TraceFakeFailures, OldCuptiIsRefused) {
  if (!fake_path() || !std::getenv("KZ_FAKE_CUPTI_VERSION")) GTEST_SKIP() << "needs the env";
  const char* paths[] = {fake_path()};
  EXPECT_EQ(kz_tr_init(paths, 1), KZ_TR_NO_CUPTI);
  const std::string msg = kz_tr_last_error();
  EXPECT_EQ(msg.rfind("no CUPTI: ", 0), 0u) << msg;
  EXPECT_NE(msg.find("CUPTI API version 28, need >= 130000"), std::string::npos) << msg;
}

// ctest native_trace_fake_enable: KZ_FAKE_CUPTI_FAIL_ENABLE=1.
TEST(TraceFakeFailures, EnableFailureRollsBack) {
  if (!fake_path() || !std::getenv("KZ_FAKE_CUPTI_FAIL_ENABLE")) GTEST_SKIP() << "needs the env";
  const char* paths[] = {fake_path()};
  ASSERT_EQ(kz_tr_init(paths, 1), KZ_RT_OK) << kz_tr_last_error();
  EXPECT_EQ(kz_tr_start(), KZ_TR_CUPTI_ERROR);
  const std::string msg = kz_tr_last_error();
  EXPECT_NE(msg.find("cuptiActivityEnable failed: CUPTI_ERROR_NOT_INITIALIZED"),
            std::string::npos) << msg;
  void* h = dlopen(fake_path(), RTLD_NOW | RTLD_NOLOAD);
  auto enabled = reinterpret_cast<EnabledFn>(dlsym(h, "kz_fake_cupti_enabled"));
  ASSERT_NE(enabled, nullptr);
  EXPECT_EQ(enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 0);
}

}  // namespace
