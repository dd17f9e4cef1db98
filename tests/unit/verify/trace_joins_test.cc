// trace.side_stream judged from CUPTI's dependency records (verify/trace_joins.h): event
// records, stream waits, host synchronisations and stream flags; synthetic records. The
// hand-worked cases of the Python worker's former tests. Correlation ids follow API-call
// order; the marker is issued right after forward returns. The H200 case: the markers were
// queued behind the side kernel on a shared hardware queue, so the unjoined kernel never
// looked late.
#include <gtest/gtest.h>

#include "trace_records.h"
#include "verify/trace_judge.h"

namespace kz::verify {
namespace {
using namespace trace_test;  // NOLINT(google-build-using-namespace): the record builders

constexpr uint64_t kSide = 21, kOther = 22, kNone = 0xFFFFFFFF;
const std::string kMatmul = "matmul_kernel(float const*, float const*, float*, int, int, int)";
using Names = std::vector<std::string>;

json Work(const std::string& name, uint64_t corr, uint64_t stream = kSide, uint64_t graph = 0, double start_us = 10,
          double end_us = 500) {
  return With(Rec("kernel", name, start_us, end_us, stream, graph), {{"correlation", corr}});
}

json EvRecord(uint64_t event, uint64_t corr, uint64_t stream = kSide, uint64_t sync_id = 0) {
  return {{"kind", "event_record"}, {"name", "event record"}, {"stream", stream},
          {"event", event},         {"sync_id", sync_id},       {"correlation", corr}};
}

json Wait(uint64_t event, uint64_t corr, uint64_t stream = kCaller, uint64_t sync_id = 0) {
  return {{"kind", "stream_wait"}, {"name", "stream wait event"}, {"stream", stream},
          {"event", event},        {"sync_id", sync_id},            {"correlation", corr}};
}

json HostSync(const std::string& kind, uint64_t corr, uint64_t stream = kNone, uint64_t event = kNone) {
  return {{"kind", kind}, {"name", kind}, {"stream", stream}, {"event", event}, {"sync_id", kNone}, {"correlation", corr}};
}

json Created(uint64_t stream, uint64_t flags) {
  return {{"kind", "stream"}, {"name", "stream"}, {"stream", stream}, {"flags", flags}, {"correlation", 1}};
}

// Everything ends before the marker starts: only the joins can reject.
json Joined(std::vector<json> records, const std::string& deps = "", uint64_t dropped = 0, uint64_t marker_corr = 100) {
  records.push_back(With(Marker(600), {{"correlation", marker_corr}}));
  json w = Window(records, "trial 0", kCaller, dropped);
  w["dependencies"] = deps;
  w["legacy_stream"] = kCaller;
  return w;
}

Names SideRules(const std::vector<json>& records) {
  json stage = Analyze({Joined(records)});
  EXPECT_EQ(stage["join_check"], kJoinsChecked);
  return Rules(stage);
}

const Names kSideStream = {"trace.side_stream"};

TEST(TraceJoins, UnjoinedSideStreamIsRejectedFromTheDependencyRecords) {
  json stage = Analyze({Joined({Work(kMatmul, 3)})});
  EXPECT_EQ(Rules(stage), kSideStream);
  EXPECT_EQ(stage["join_check"], "dependency records");
  EXPECT_EQ(stage["calls"][0]["late"], json::array());  // the timing signal saw nothing (H200)
  json expected = json::array();
  expected.push_back({{"stream", kSide}, {"name", kMatmul}, {"launches", 1}});
  EXPECT_EQ(stage["calls"][0]["unjoined"], expected);
  EXPECT_TRUE(StartsWith(*TraceFailureReason(stage), "trace.side_stream: trial 0: " + kMatmul +
                                                         " on stream 21 was never joined to the caller's stream 7: no "
                                                         "event recorded on stream 21 after its last launch"));
}

TEST(TraceJoins, SideStreamWaitingForTheCallerIsNotAJoin) {
  // matmul_side_stream_cuda.py: inputs_ready recorded on the caller, waited for on side.
  EXPECT_EQ(SideRules({EvRecord(1, 2, kCaller), Wait(1, 3, kSide), Work(kMatmul, 4)}), kSideStream);
}

TEST(TraceJoins, EventRecordedOnTheSideStreamAndWaitedForIsAJoin) {
  EXPECT_EQ(SideRules({Work(kMatmul, 3), EvRecord(9, 4), Wait(9, 5)}), Names{});
  // torch's current_stream().wait_stream(side) is the same pair of records
  EXPECT_EQ(SideRules({Work(kMatmul, 3), Work(kMatmul, 4), EvRecord(9, 6), Wait(9, 7)}), Names{});
}

TEST(TraceJoins, JoinThroughAnIntermediateStream) {
  EXPECT_EQ(SideRules({Work(kMatmul, 3), EvRecord(9, 4), Wait(9, 5, kOther), Work(kMatmul, 6, kOther),
                       EvRecord(10, 7, kOther), Wait(10, 8)}),
            Names{});
  // OTHER's event recorded before OTHER waited for SIDE: the caller does not wait for SIDE
  json stage = Analyze(
      {Joined({Work(kMatmul, 3), EvRecord(10, 4, kOther), EvRecord(9, 5), Wait(9, 6, kOther), Wait(10, 7)})});
  ASSERT_EQ(stage["calls"][0]["unjoined"].size(), 1u);
  EXPECT_EQ(stage["calls"][0]["unjoined"][0]["stream"], kSide);
}

TEST(TraceJoins, WaitOnTheWrongEventIsNotAJoin) {
  EXPECT_EQ(SideRules({Work(kMatmul, 3), EvRecord(9, 4), EvRecord(8, 5, kOther), Wait(8, 6)}), kSideStream);
}

TEST(TraceJoins, EventRecordedBeforeTheLastLaunchIsNotAJoin) {
  EXPECT_EQ(SideRules({Work(kMatmul, 3), EvRecord(9, 4), Wait(9, 5), Work(kMatmul, 6)}), kSideStream);
  // re-recorded after the last launch but waited for before it: still not a join
  EXPECT_EQ(SideRules({Work(kMatmul, 3), EvRecord(9, 4), Wait(9, 5), Work(kMatmul, 6), EvRecord(9, 7)}), kSideStream);
}

TEST(TraceJoins, WaitIssuedAfterTheMarkerIsNotAJoin) {
  EXPECT_EQ(SideRules({Work(kMatmul, 3), EvRecord(9, 4), Wait(9, 101)}), kSideStream);
}

TEST(TraceJoins, SyncIdLinksAWaitToItsRecord) {
  // The event's later record (sync id 2, on OTHER) is not the one the wait named.
  EXPECT_EQ(SideRules({Work(kMatmul, 3), EvRecord(9, 4, kSide, 1), EvRecord(9, 5, kOther, 2), Wait(9, 6, kCaller, 1)}),
            Names{});
  EXPECT_EQ(SideRules({Work(kMatmul, 3), EvRecord(9, 4, kSide, 1), EvRecord(9, 5, kOther, 2), Wait(9, 6, kCaller, 2)}),
            kSideStream);
}

TEST(TraceJoins, GraphKernelsOnTheCallerStreamNeedNoJoin) {
  EXPECT_EQ(SideRules({Work(kMatmul, 3, kCaller, 3), Work(kMatmul, 3, 30, 3)}), Names{});
  EXPECT_EQ(SideRules({Work(kMatmul, 3, 30, 4)}), kSideStream);
}

TEST(TraceJoins, TwoSideStreamsHonestPattern) {
  // matmul_two_streams_cuda.py: `ready` on the caller, both sides wait for it; each side records
  // `done` (one event object, re-created at the same id) that the caller waits for.
  std::vector<json> records = {EvRecord(1, 2, kCaller), Wait(1, 3, kSide),       Work(kMatmul, 4),
                               EvRecord(5, 5),          Wait(5, 6),              Wait(1, 7, kOther),
                               Work(kMatmul, 8, kOther), EvRecord(5, 9, kOther), Wait(5, 10)};
  EXPECT_EQ(SideRules(records), Names{});
  records.pop_back();  // the second join missing
  EXPECT_EQ(SideRules(records), kSideStream);
}

TEST(TraceJoins, HostSynchronisationBeforeReturnIsAJoin) {
  EXPECT_EQ(SideRules({Work(kMatmul, 3), HostSync("context_sync", 4)}), Names{});
  EXPECT_EQ(SideRules({Work(kMatmul, 3), HostSync("stream_sync", 4, kSide)}), Names{});
  EXPECT_EQ(SideRules({Work(kMatmul, 3), EvRecord(9, 4), HostSync("event_sync", 5, kNone, 9)}), Names{});
  // the tracer's own device sync comes after the marker
  EXPECT_EQ(SideRules({Work(kMatmul, 3), HostSync("context_sync", 101)}), kSideStream);
  EXPECT_EQ(SideRules({Work(kMatmul, 3), HostSync("stream_sync", 4, kOther)}), kSideStream);
}

TEST(TraceJoins, BlockingStreamsAreOrderedByTheLegacyStream) {
  EXPECT_EQ(SideRules({Created(kSide, 1), Work(kMatmul, 3)}), Names{});  // blocking, caller legacy
  EXPECT_EQ(SideRules({Created(kSide, 2), Work(kMatmul, 3)}), kSideStream);
  json w = Joined({Created(kSide, 1), Work(kMatmul, 3)});
  w["legacy_stream"] = 1;  // the caller is not the legacy stream
  EXPECT_EQ(Rules(Analyze({w})), kSideStream);
}

TEST(TraceJoins, CallerStreamWorkAndTheMarkersNeedNothing) {
  json copy = With(Rec("memcpy", "memcpy HtoD", 590, 591), {{"bytes", 4}, {"correlation", 99}});
  EXPECT_EQ(SideRules({Work(kMatmul, 3, kCaller), copy}), Names{});
}

TEST(TraceJoins, WithoutDependencyRecordsTheTimingRuleDecides) {
  std::string why = "cuptiActivityEnable(CUDA_EVENT) failed: CUPTI_ERROR_NOT_COMPATIBLE (14)";
  json stage = Analyze({Joined({Work(kMatmul, 3)}, why)});
  EXPECT_EQ(stage["status"], "pass");
  EXPECT_EQ(stage["join_check"], "timing only: " + why);
  EXPECT_TRUE(stage["calls"][0]["unjoined"].is_null());
  json late = Analyze({Joined({Work(kMatmul, 3, kSide, 0, 10, 900)}, why)});
  EXPECT_EQ(Rules(late), kSideStream);
  EXPECT_NE(late["findings"][0]["message"].get<std::string>().find("ended 300.0 µs after forward returned"),
            std::string::npos);
  EXPECT_EQ(Analyze({Window({Marker(5)})})["join_check"], "timing only: dependency records not collected");
}

TEST(TraceJoins, DroppedRecordsFallBackToTiming) {
  json stage = Analyze({Joined({Work(kMatmul, 3)}, "", 2)});
  EXPECT_EQ(stage["status"], "pass");
  EXPECT_EQ(stage["join_check"], "timing only: records were dropped");
}

TEST(TraceJoins, BothSignalsGiveOneFindingNamingTheOverlap) {
  json stage = Analyze({Joined({Work(kMatmul, 3, kSide, 0, 10, 900)})});
  ASSERT_EQ(stage["findings"].size(), 1u);
  std::string message = stage["findings"][0]["message"];
  EXPECT_NE(message.find("was never joined"), std::string::npos);
  EXPECT_TRUE(EndsWith(message, "; it ended 300.0 µs after forward returned")) << message;
}

TEST(TraceJoins, RecordsNoApiCallIssuedAreNotJudged) {
  json internal = With(Rec("memcpy", "memcpy HtoD", 1, 2, 40), {{"correlation", 0}});
  EXPECT_EQ(SideRules({Work(kMatmul, 3, kCaller), internal}), Names{});
}

TEST(TraceJoins, SeveralUnjoinedStreamsAreListedInTheMessage) {
  json stage = Analyze({Joined({Work(kMatmul, 3), Work(kMatmul, 4, kOther), Work(kMatmul, 5, 100)})});
  ASSERT_EQ(Rules(stage), kSideStream);
  // streams in the order of their ids as text: "100" < "21" < "22"
  std::string message = stage["findings"][0]["message"];
  EXPECT_TRUE(StartsWith(message, "trial 0: " + kMatmul + " on stream 100 was never joined")) << message;
  EXPECT_TRUE(EndsWith(message, " (also stream 21, 22)")) << message;
}

}  // namespace
}  // namespace kz::verify
