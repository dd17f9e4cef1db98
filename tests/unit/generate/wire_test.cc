// The pure parts: templates, backoff, Retry-After, the request body, reply parsing and
// token accounting, transcripts.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "generate/openai_wire.h"
#include "generate/prompt.h"
#include "generate/replay_endpoint.h"
#include "generate/retry.h"

namespace kz::generate {
namespace {
using nlohmann::json;

TEST(Template, Substitutes) {
  std::string out, err;
  ASSERT_TRUE(RenderTemplate("a {{x}} b {{y_1}}{{x}}", {{"x", "1"}, {"y_1", "{{x}}"}}, &out, &err));
  EXPECT_EQ(out, "a 1 b {{x}}1");  // values are not rendered again
}

TEST(Template, LeavesNonPlaceholdersAlone) {
  std::string out, err;
  ASSERT_TRUE(RenderTemplate("{{ x }} {{}} {x} {{x", {}, &out, &err));
  EXPECT_EQ(out, "{{ x }} {{}} {x} {{x");
}

TEST(Template, MissingValueIsAnError) {
  std::string out, err;
  EXPECT_FALSE(RenderTemplate("hi {{task_sorce}}", {{"task_source", "s"}}, &out, &err));
  EXPECT_NE(err.find("{{task_sorce}}"), std::string::npos);
}

TEST(Template, ShippedTemplatesRender) {
  std::string dir = LocatePromptsDir("/nonexistent/bin/kz");
  ASSERT_FALSE(dir.empty());
  for (const char* name : {"coder_cuda_oneshot.v1.txt", "coder_triton_oneshot.v1.txt"}) {
    PromptTemplate t;
    std::string err, out;
    ASSERT_TRUE(LoadTemplate(dir + "/" + name, &t, &err)) << err;
    ASSERT_TRUE(RenderTemplate(t.text, {{"task_source", "SRC"}, {"task_name", "19_ReLU"}}, &out, &err)) << err;
    EXPECT_NE(out.find("SRC"), std::string::npos);
  }
  EXPECT_EQ(DefaultTemplateName("triton", false), "coder_triton_oneshot.v1.txt");
  EXPECT_EQ(DefaultTemplateName("cuda", true), "proposer_module.v1.txt");
}

TEST(Backoff, Schedule) {
  RetryPolicy p;  // base 0.5, cap 30
  EXPECT_DOUBLE_EQ(BackoffDelay(1, p, 0), 0.25);
  EXPECT_DOUBLE_EQ(BackoffDelay(1, p, 1), 0.5);
  EXPECT_DOUBLE_EQ(BackoffDelay(2, p, 1), 1.0);
  EXPECT_DOUBLE_EQ(BackoffDelay(3, p, 0.5), 1.5);
  EXPECT_DOUBLE_EQ(BackoffDelay(7, p, 1), 30);   // 32 capped
  EXPECT_DOUBLE_EQ(BackoffDelay(100, p, 0), 15);
  EXPECT_DOUBLE_EQ(BackoffDelay(0, p, 1), 0);
  EXPECT_DOUBLE_EQ(NextDelay(1, p, 0, 4.0), 4.0);  // Retry-After longer than the backoff
  EXPECT_DOUBLE_EQ(NextDelay(3, p, 1, 0.1), 2.0);
}

TEST(Backoff, WhatIsRetried) {
  EXPECT_TRUE(IsRetryable({ErrorKind::kHttpStatus, 429, ""}));
  EXPECT_TRUE(IsRetryable({ErrorKind::kHttpStatus, 503, ""}));
  EXPECT_TRUE(IsRetryable({ErrorKind::kConnect, 0, ""}));
  EXPECT_FALSE(IsRetryable({ErrorKind::kHttpStatus, 401, ""}));
  EXPECT_FALSE(IsRetryable({ErrorKind::kHttpStatus, 400, ""}));
  EXPECT_FALSE(IsRetryable({ErrorKind::kBadJson, 0, ""}));
  EXPECT_FALSE(IsRetryable({ErrorKind::kTooLarge, 0, ""}));
  EXPECT_FALSE(IsRetryable({ErrorKind::kDns, 0, ""}));
  EXPECT_FALSE(IsRetryable({ErrorKind::kTimeout, 0, ""}));
}

TEST(RetryAfter, Parses) {
  EXPECT_EQ(ParseRetryAfter(" 30\r\n", 0), 30.0);
  EXPECT_EQ(ParseRetryAfter("1.5", 0), 1.5);
  EXPECT_EQ(ParseRetryAfter("0", 0), 0.0);
  EXPECT_FALSE(ParseRetryAfter("", 0));
  EXPECT_FALSE(ParseRetryAfter("-3", 0));
  EXPECT_FALSE(ParseRetryAfter("soon", 0));
  EXPECT_FALSE(ParseRetryAfter("30s", 0));
  // Wed, 21 Oct 2015 07:28:00 GMT = 1445412480
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", 1445412480 - 12), 12.0);
  EXPECT_EQ(ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", 1445412480 + 100), 0.0);
}

TEST(Wire, ChatBody) {
  Request r;
  r.messages = {{"user", "hi"}};
  r.sampling.temperature = 0.7;
  r.sampling.max_tokens = 100;
  r.sampling.seed = 42;
  r.sampling.stop = {"```\n\n"};
  json b = RequestBody(r, "m");
  EXPECT_EQ(b["model"], "m");
  EXPECT_EQ(b["messages"][0]["content"], "hi");
  EXPECT_EQ(b["n"], 1);
  EXPECT_EQ(b["seed"], 42);
  EXPECT_EQ(b["max_tokens"], 100);
  EXPECT_FALSE(b.contains("top_p"));
  EXPECT_EQ(b["stream"], false);
  EXPECT_EQ(ApiPath(Api::kChat), "/chat/completions");
}

TEST(Wire, CompletionsBody) {
  Request r;
  r.api = Api::kCompletions;
  r.prompt = "def f";
  json b = RequestBody(r, "m");
  EXPECT_EQ(b["prompt"], "def f");
  EXPECT_FALSE(b.contains("messages"));
  EXPECT_EQ(ApiPath(Api::kCompletions), "/completions");
}

TEST(Wire, ParsesChatReply) {
  Sampling s;
  auto r = ParseReply(R"({"model":"x","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},
    "finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":3,
    "completion_tokens_details":{"reasoning_tokens":2}}})", s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.reply()->choices[0].text, "hello");
  EXPECT_EQ(r.reply()->choices[0].finish_reason, "stop");
  EXPECT_EQ(r.reply()->choices[0].completion_tokens, 3);
  EXPECT_EQ(r.reply()->usage.prompt_tokens, 7);
  EXPECT_EQ(r.reply()->usage.reasoning_tokens, 2);
  EXPECT_FALSE(r.reply()->usage.corrected);
}

TEST(Wire, ParsesCompletionsAndOrdersByIndex) {
  Sampling s;
  s.n = 2;
  auto r = ParseReply(R"({"choices":[{"index":1,"text":"bb"},{"index":0,"text":"aa","finish_reason":"stop"}],
    "usage":{"completion_tokens":4}})", s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.reply()->choices[0].text, "aa");
  EXPECT_EQ(r.reply()->choices[1].text, "bb");
  EXPECT_EQ(r.reply()->choices[0].completion_tokens, 2);
  EXPECT_EQ(r.reply()->usage.completion_tokens, 4);
}

TEST(Wire, BadBodies) {
  Sampling s;
  EXPECT_EQ(ParseReply("<html>oops</html>", s).error()->kind, ErrorKind::kBadJson);
  EXPECT_EQ(ParseReply("[1,2]", s).error()->kind, ErrorKind::kBadJson);
  EXPECT_EQ(ParseReply(R"({"object":"list"})", s).error()->kind, ErrorKind::kNoChoices);
  EXPECT_EQ(ParseReply(R"({"choices":[]})", s).error()->kind, ErrorKind::kNoChoices);
  EXPECT_EQ(ParseReply(R"({"choices":[{"index":0}]})", s).error()->kind, ErrorKind::kNoChoices);
  auto null_content = ParseReply(R"({"choices":[{"message":{"content":null}}]})", s);
  ASSERT_TRUE(null_content.ok());
  EXPECT_EQ(null_content.reply()->choices[0].text, "");
}

TEST(Usage, LlamaCppUndercountWithNGreaterThanOne) {
  // llama.cpp, n = 3, max_tokens 50: usage counts one choice (50); each choice hit the cap.
  Sampling s;
  s.n = 3;
  s.max_tokens = 50;
  std::string text(200, 'x');
  json choices = json::array();
  for (int i = 0; i < 3; ++i) choices.push_back({{"index", i}, {"text", text}, {"finish_reason", "length"}});
  auto r = ParseReply(json({{"choices", choices}, {"usage", {{"completion_tokens", 50}}}}).dump(), s);
  ASSERT_TRUE(r.ok());
  for (const auto& c : r.reply()->choices) EXPECT_EQ(c.completion_tokens, 50);
  EXPECT_EQ(r.reply()->usage.completion_tokens, 150);
  EXPECT_EQ(r.reply()->usage.server_completion_tokens, 50);
  EXPECT_TRUE(r.reply()->usage.corrected);
}

TEST(Usage, PerChoiceCountsWin) {
  Sampling s;
  s.n = 2;
  auto r = ParseReply(R"({"choices":[{"index":0,"text":"a","tokens_predicted":11},
    {"index":1,"text":"b","timings":{"predicted_n":13}}],"usage":{"completion_tokens":11}})", s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.reply()->choices[0].completion_tokens, 11);
  EXPECT_EQ(r.reply()->choices[1].completion_tokens, 13);
  EXPECT_EQ(r.reply()->usage.completion_tokens, 24);
}

TEST(Usage, ByteLowerBound) {
  Sampling s;  // a server that reports no usage at all: ceil(bytes / 8)
  auto r = ParseReply(json({{"choices", {{{"text", std::string(81, 'x')}}}}}).dump(), s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.reply()->choices[0].completion_tokens, 11);
  EXPECT_TRUE(r.reply()->usage.corrected);
}

TEST(Wire, ErrorExcerpt) {
  EXPECT_EQ(ErrorExcerpt(R"({"error":{"message":"Invalid API key"}})"), "Invalid API key");
  EXPECT_EQ(ErrorExcerpt("line1\nline2"), "line1 line2");
  EXPECT_EQ(ErrorExcerpt(""), "(empty body)");
  EXPECT_EQ(ErrorExcerpt(std::string(300, 'a')).size(), 203u);
}

TEST(Transcript, ResultJsonKeepsInvalidUtf8Bytes) {
  Result r;
  r.outcome = Reply{{{std::string("caf\xe9 ```"), "length", 9}}, {1, 9, 2, 9, false}, "m"};
  r.latency_s = 0.5;
  json j = ResultToJson(r);
  EXPECT_NO_THROW(j.dump());
  auto back = ResultFromJson(json::parse(j.dump(-1, ' ', false, json::error_handler_t::replace)));
  ASSERT_TRUE(back && back->ok());
  EXPECT_EQ(back->reply()->choices[0].text, std::string("caf\xe9 ```"));
  EXPECT_EQ(back->reply()->choices[0].finish_reason, "length");
  EXPECT_EQ(back->reply()->usage.reasoning_tokens, 2);
  Result e;
  e.outcome = Error{ErrorKind::kHttpStatus, 503, "busy"};
  auto eback = ResultFromJson(ResultToJson(e));
  ASSERT_TRUE(eback && !eback->ok());
  EXPECT_EQ(eback->error()->http_status, 503);
  EXPECT_FALSE(ResultFromJson(json{{"error", {{"kind", "nonsense"}}}}));
}

TEST(Transcript, RecordThenReplay) {
  struct Fixed : Endpoint {
    int calls = 0;
    Result Complete(const Request& r, const std::atomic<bool>&) override {
      ++calls;
      Result out;
      out.outcome = Reply{{{"answer " + r.id, "stop", 5}}, {3, 5, 0, 5, false}, "m"};
      out.latency_s = 1.25;
      out.attempts = 2;
      return out;
    }
    std::string Describe() const override { return "fixed"; }
  } inner;
  std::string path = std::filesystem::temp_directory_path() / ("kz_transcript_" + std::to_string(::getpid()) + ".jsonl");
  std::remove(path.c_str());
  std::atomic<bool> cancel{false};
  Request a, b;
  a.id = "L1_1/0";
  b.id = "L1_1/1";  // same body, another sample: another key
  {
    RecordingEndpoint rec(&inner, "m");
    std::string err;
    ASSERT_TRUE(rec.Open(path, &err)) << err;
    rec.Complete(a, cancel);
    rec.Complete(b, cancel);
  }
  ReplayEndpoint replay;
  std::string err;
  ASSERT_TRUE(replay.Load(path, "m", &err)) << err;
  EXPECT_EQ(replay.size(), 2u);
  Result r = replay.Complete(b, cancel);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.reply()->choices[0].text, "answer L1_1/1");
  EXPECT_EQ(r.latency_s, 1.25);
  EXPECT_EQ(r.attempts, 2);
  Request c = a;
  c.sampling.temperature = 0.5;
  Result miss = replay.Complete(c, cancel);
  ASSERT_FALSE(miss.ok());
  EXPECT_EQ(miss.error()->kind, ErrorKind::kNotRecorded);
  EXPECT_NE(miss.error()->message.find("L1_1/0"), std::string::npos);
  ReplayEndpoint other_model;
  ASSERT_TRUE(other_model.Load(path, "m2", &err));
  EXPECT_FALSE(other_model.Complete(a, cancel).ok());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace kz::generate
