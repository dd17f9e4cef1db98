// The real client (libcurl) against a scripted, misbehaving HTTP server in this process
// (cpp-httplib on 127.0.0.1, a free port). Each test scripts the replies by request number
// and asserts how many requests the server saw (retries counted).
#include "generate/openai_endpoint.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>

namespace kz::generate {
namespace {

const char* kOk = R"({"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},
  "finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":1}})";

class ScriptedServer {
 public:
  // script(request number from 1, request, response)
  using Script = std::function<void(int, const httplib::Request&, httplib::Response&)>;
  explicit ScriptedServer(Script script) : script_(std::move(script)) {
    server_.Post(R"(/v1/(chat/)?completions)", [this](const httplib::Request& req, httplib::Response& res) {
      int n = ++requests_;
      last_auth_ = req.get_header_value("Authorization");
      script_(n, req, res);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ~ScriptedServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  int requests() const { return requests_; }
  std::string last_auth() const { return last_auth_; }

 private:
  Script script_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int> requests_{0};
  std::string last_auth_;
};

OpenAiOptions Options(const std::string& url) {
  OpenAiOptions o;
  o.base_url = url;
  o.model = "m";
  o.api_key_env = "KZ_TEST_KEY_UNSET";
  o.retry.base_s = 0.01;
  o.retry.max_delay_s = 0.05;
  return o;
}

Request Chat(double deadline_s = 20) {
  Request r;
  r.id = "t/0";
  r.messages = {{"user", "hello"}};
  r.deadline_s = deadline_s;
  return r;
}

Result Send(const OpenAiOptions& o, const Request& r = Chat()) {
  OpenAiEndpoint e(o);
  std::atomic<bool> cancel{false};
  return e.Complete(r, cancel);
}

void Json(httplib::Response& res, const std::string& body, int status = 200) {
  res.status = status;
  res.set_content(body, "application/json");
}

TEST(OpenAiEndpoint, Ok) {
  ScriptedServer s([](int, const auto& req, auto& res) {
    EXPECT_NE(req.body.find("\"model\":\"m\""), std::string::npos);
    Json(res, kOk);
  });
  Result r = Send(Options(s.url()));
  ASSERT_TRUE(r.ok()) << r.error()->message;
  EXPECT_EQ(r.reply()->choices[0].text, "hi");
  EXPECT_EQ(r.reply()->usage.prompt_tokens, 4);
  EXPECT_EQ(r.attempts, 1);
  EXPECT_EQ(s.requests(), 1);
  EXPECT_EQ(s.last_auth(), "");  // no key: no Authorization header
}

TEST(OpenAiEndpoint, SendsTheKeyFromTheNamedVariable) {
  ScriptedServer s([](int, const auto&, auto& res) { Json(res, kOk); });
  setenv("KZ_TEST_KEY", "sk-test", 1);
  OpenAiOptions o = Options(s.url());
  o.api_key_env = "KZ_TEST_KEY";
  ASSERT_TRUE(Send(o).ok());
  EXPECT_EQ(s.last_auth(), "Bearer sk-test");
  unsetenv("KZ_TEST_KEY");
}

TEST(OpenAiEndpoint, Completions) {
  ScriptedServer s([](int, const auto& req, auto& res) {
    EXPECT_EQ(req.path, "/v1/completions");
    Json(res, R"({"choices":[{"index":0,"text":"x = 1","finish_reason":"length"}],"usage":{"completion_tokens":3}})");
  });
  Request r = Chat();
  r.api = Api::kCompletions;
  r.prompt = "p";
  Result out = Send(Options(s.url()), r);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out.reply()->choices[0].finish_reason, "length");
}

TEST(OpenAiEndpoint, TooManyRequestsWithRetryAfter) {
  ScriptedServer s([](int n, const auto&, auto& res) {
    if (n == 1) {
      res.set_header("Retry-After", "1");
      return Json(res, R"({"error":{"message":"slow down"}})", 429);
    }
    Json(res, kOk);
  });
  auto t0 = std::chrono::steady_clock::now();
  Result r = Send(Options(s.url()));
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(s.requests(), 2);
  EXPECT_GE(waited, 0.95);  // Retry-After 1 s honoured over the 10 ms backoff
}

TEST(OpenAiEndpoint, TooManyRequestsWithoutRetryAfterGivesUp) {
  ScriptedServer s([](int, const auto&, auto& res) { Json(res, "{}", 429); });
  OpenAiOptions o = Options(s.url());
  o.retry.max_attempts = 4;
  Result r = Send(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error()->kind, ErrorKind::kHttpStatus);
  EXPECT_EQ(r.error()->http_status, 429);
  EXPECT_NE(r.error()->message.find("gave up after 4 attempts"), std::string::npos);
  EXPECT_EQ(s.requests(), 4);
}

TEST(OpenAiEndpoint, RetryAfterPastTheDeadlineGivesUpAtOnce) {
  ScriptedServer s([](int, const auto&, auto& res) {
    res.set_header("Retry-After", "60");
    Json(res, "{}", 503);
  });
  Result r = Send(Options(s.url()), Chat(2));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error()->http_status, 503);
  EXPECT_EQ(s.requests(), 1);
  EXPECT_LT(r.latency_s, 1.5);
}

TEST(OpenAiEndpoint, ServerErrorThenOk) {
  ScriptedServer s([](int n, const auto&, auto& res) {
    if (n <= 2) return Json(res, "internal", 500);
    Json(res, kOk);
  });
  Result r = Send(Options(s.url()));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(s.requests(), 3);
}

TEST(OpenAiEndpoint, NotJson) {
  ScriptedServer s([](int, const auto&, auto& res) { res.set_content("<html>gateway</html>", "text/html"); });
  Result r = Send(Options(s.url()));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error()->kind, ErrorKind::kBadJson);
  EXPECT_NE(r.error()->message.find("gateway"), std::string::npos);
  EXPECT_EQ(s.requests(), 1);  // the server answered: not retried
}

TEST(OpenAiEndpoint, JsonWithoutChoices) {
  ScriptedServer s([](int, const auto&, auto& res) { Json(res, R"({"id":"x","object":"chat.completion"})"); });
  Result r = Send(Options(s.url()));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error()->kind, ErrorKind::kNoChoices);
  EXPECT_EQ(s.requests(), 1);
}

TEST(OpenAiEndpoint, HugeBodyOverTheCap) {
  ScriptedServer s([](int, const auto&, auto& res) {
    std::string big = std::string(R"({"choices":[{"index":0,"text":")") + std::string(3 << 20, 'x') + "\"}]}";
    Json(res, big);
  });
  OpenAiOptions o = Options(s.url());
  o.max_response_bytes = 1 << 20;
  Result r = Send(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error()->kind, ErrorKind::kTooLarge);
  EXPECT_EQ(s.requests(), 1);
  o.max_response_bytes = 8 << 20;  // the default cap takes it
  EXPECT_TRUE(Send(o).ok());
}

TEST(OpenAiEndpoint, ConnectionRefused) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);  // a port that was free a moment ago: closed
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  OpenAiOptions o = Options("http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/v1");
  o.retry.max_attempts = 3;
  Result r = Send(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error()->kind, ErrorKind::kConnect);
  EXPECT_EQ(r.attempts, 3);
}

// A raw server that sends headers promising 1000 bytes, 10 of them, then closes: each time.
TEST(OpenAiEndpoint, BodyCutInTheMiddleIsRetried) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 8), 0);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  std::atomic<int> seen{0};
  std::thread server([&] {
    for (int i = 0; i < 2; ++i) {
      int c = ::accept(fd, nullptr, nullptr);
      if (c < 0) return;
      char buf[4096];
      (void)::recv(c, buf, sizeof buf, 0);
      ++seen;
      std::string cut = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"choices";
      (void)::send(c, cut.data(), cut.size(), MSG_NOSIGNAL);
      ::close(c);
    }
  });
  OpenAiOptions o = Options("http://127.0.0.1:" + std::to_string(ntohs(a.sin_port)) + "/v1");
  o.retry.max_attempts = 2;
  Result r = Send(o);
  server.join();
  ::close(fd);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error()->kind, ErrorKind::kConnect) << r.error()->message;
  EXPECT_EQ(r.attempts, 2);
  EXPECT_EQ(seen, 2);
}

TEST(OpenAiEndpoint, ModelIgnoringNGivesWhatCame) {
  ScriptedServer s([](int, const auto&, auto& res) { Json(res, kOk); });  // one choice whatever n
  Request r = Chat();
  r.sampling.n = 3;
  Result out = Send(Options(s.url()), r);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out.reply()->choices.size(), 1u);
}

TEST(OpenAiEndpoint, DnsFailure) {
  Result r = Send(Options("http://no-such-host.invalid/v1"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error()->kind, ErrorKind::kDns);
  EXPECT_EQ(r.attempts, 1);
}

TEST(OpenAiEndpoint, SlowServerPastTheDeadline) {
  ScriptedServer s([](int, const auto&, auto& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    Json(res, kOk);
  });
  Result r = Send(Options(s.url()), Chat(0.5));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error()->kind, ErrorKind::kTimeout);
  EXPECT_LT(r.latency_s, 1.2);
  EXPECT_EQ(s.requests(), 1);
}

TEST(OpenAiEndpoint, CancelStopsARequestInFlight) {
  ScriptedServer s([](int, const auto&, auto& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5000));
    Json(res, kOk);
  });
  OpenAiEndpoint e(Options(s.url()));
  std::atomic<bool> cancel{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  Result r = e.Complete(Chat(), cancel);
  stopper.join();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error()->kind, ErrorKind::kCancelled);
  EXPECT_LT(r.latency_s, 3.0);  // cancelled at 0.2 s, long before the 5 s reply (slack for a loaded machine)
}

TEST(OpenAiEndpoint, UnauthorizedNamesTheVariable) {
  ScriptedServer s([](int, const auto&, auto& res) { Json(res, R"({"error":{"message":"Invalid API key"}})", 401); });
  OpenAiOptions o = Options(s.url());
  o.api_key_env = "MY_PROVIDER_KEY";
  Result r = Send(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error()->http_status, 401);
  EXPECT_NE(r.error()->message.find("$MY_PROVIDER_KEY is not set"), std::string::npos) << r.error()->message;
  EXPECT_NE(r.error()->message.find("Invalid API key"), std::string::npos);
  EXPECT_EQ(s.requests(), 1);  // not retried
}

TEST(OpenAiEndpoint, ConcurrentCallsShareTheEndpoint) {
  ScriptedServer s([](int, const auto&, auto& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    Json(res, kOk);
  });
  OpenAiEndpoint e(Options(s.url()));
  std::atomic<bool> cancel{false};
  std::atomic<int> ok{0};
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back([&] { ok += e.Complete(Chat(), cancel).ok(); });
  for (auto& t : threads) t.join();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(ok, 4);
  EXPECT_EQ(s.requests(), 4);
  EXPECT_LT(wall, 0.7);  // in flight together, not one after another (4 x 0.2 s)
}

}  // namespace
}  // namespace kz::generate
