#include "queue/redis_client.h"

#include <gtest/gtest.h>

#include <thread>

#include "queue/redis_server.h"

namespace kz::queue {
namespace {

using namespace std::chrono_literals;

TEST(RedisUrl, ParsesHostPortAndDb) {
  RedisUrl u;
  std::string err;
  ASSERT_TRUE(ParseRedisUrl("redis://127.0.0.1:6380/2", &u, &err)) << err;
  EXPECT_EQ(u.host, "127.0.0.1");
  EXPECT_EQ(u.port, 6380);
  EXPECT_EQ(u.db, 2);
  ASSERT_TRUE(ParseRedisUrl("redis://localhost", &u, &err)) << err;
  EXPECT_EQ(u.host, "localhost");
  EXPECT_EQ(u.port, 6379);
  EXPECT_EQ(u.db, 0);
  ASSERT_TRUE(ParseRedisUrl("redis://[::1]:7000/", &u, &err)) << err;
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.port, 7000);
}

TEST(RedisUrl, RejectsBadUrlsWithReasons) {
  const std::pair<const char*, const char*> cases[] = {
      {"http://h:1", "must start with redis://"},
      {"h:6379", "must start with redis://"},
      {"rediss://h:1", "TLS"},
      {"redis://", "empty host"},
      {"redis://:6379", "empty host"},
      {"redis://h:", "empty port"},
      {"redis://h:0", "port must be"},
      {"redis://h:65536", "port must be"},
      {"redis://h:12ab", "port must be"},
      {"redis://h:1/x", "DB must be"},
      {"redis://h:1/-1", "DB must be"},
      {"redis://user:pw@h:1", "user info"},
      {"redis://[::1:1", "unclosed"},
  };
  for (const auto& [url, why] : cases) {
    RedisUrl u;
    std::string err;
    EXPECT_FALSE(ParseRedisUrl(url, &u, &err)) << url;
    EXPECT_NE(err.find(why), std::string::npos) << url << ": " << err;
    EXPECT_NE(err.find("want redis://HOST:PORT[/DB]"), std::string::npos) << err;
  }
}

RedisClient::Options Opts(int port) {
  RedisClient::Options o;
  o.url = {"127.0.0.1", port, 0};
  o.min_backoff = 50ms;
  o.max_backoff = 200ms;
  return o;
}

TEST(RedisClient, RefusedConnectionIsAnErrorWithBackoff) {
  RedisClient c(Opts(testing::FreeLoopbackPort()));
  RedisReply r;
  std::string err;
  EXPECT_FALSE(c.Command({"PING"}, &r, &err));
  EXPECT_NE(err.find("cannot connect to redis://127.0.0.1:"), std::string::npos) << err;
  std::string first = err;
  EXPECT_FALSE(c.Command({"PING"}, &r, &err));  // within the backoff delay: no attempt
  EXPECT_EQ(err, first);
  EXPECT_GT(c.RetryDelay().count(), 0);
  EXPECT_FALSE(c.connected());
}

class RedisClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::RedisServer::Available())
      GTEST_SKIP() << "redis-server is not installed (scripts/setup.sh installs it)";
    std::string err;
    ASSERT_TRUE(server_.Start(&err)) << err;
  }
  testing::RedisServer server_;
};

TEST_F(RedisClientTest, CommandsAreBinarySafeAndErrorRepliesAreReplies) {
  RedisClient c(Opts(server_.port()));
  RedisReply r;
  std::string err, value("a\0b\r\nc", 6);
  ASSERT_TRUE(c.Call({"SET", "k", value}, &r, &err)) << err;
  EXPECT_EQ(r.type, RedisReply::Type::kStatus);
  ASSERT_TRUE(c.Call({"GET", "k"}, &r, &err)) << err;
  EXPECT_EQ(r.str, value);
  ASSERT_TRUE(c.Call({"GET", "missing"}, &r, &err)) << err;
  EXPECT_TRUE(r.IsNil());
  ASSERT_TRUE(c.Command({"INCR", "k"}, &r, &err));  // an error reply: answered
  EXPECT_TRUE(r.IsError());
  EXPECT_FALSE(c.Call({"INCR", "k"}, &r, &err));
  EXPECT_NE(err.find("redis INCR: ERR"), std::string::npos) << err;
  EXPECT_TRUE(c.connected());
}

TEST_F(RedisClientTest, ReconnectsAfterAServerRestart) {
  RedisClient c(Opts(server_.port()));
  RedisReply r;
  std::string err;
  ASSERT_TRUE(c.Call({"SET", "k", "kept"}, &r, &err)) << err;
  server_.Kill();
  EXPECT_FALSE(c.Call({"GET", "k"}, &r, &err));
  EXPECT_FALSE(c.connected());
  ASSERT_TRUE(server_.Start(&err)) << err;
  bool ok = false;
  for (int i = 0; i < 100 && !ok; ++i) {
    ok = c.Call({"GET", "k"}, &r, &err);
    if (!ok) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(ok) << err;
  EXPECT_EQ(r.str, "kept");  // appendfsync always: the write survived the kill
}

TEST_F(RedisClientTest, AWriteToADeadServerIsAnErrorNotSigpipe) {
  RedisClient c(Opts(server_.port()));
  RedisReply r;
  std::string err;
  ASSERT_TRUE(c.Call({"PING"}, &r, &err)) << err;
  server_.Kill();
  std::this_thread::sleep_for(50ms);
  std::string big(32u << 20, 'x');  // far more than the socket buffers: write() meets the reset
  EXPECT_FALSE(c.Call({"SET", "big", big}, &r, &err));
  EXPECT_FALSE(err.empty());
  EXPECT_FALSE(c.connected());
}

TEST_F(RedisClientTest, SelectsTheUrlsDb) {
  RedisClient::Options o = Opts(server_.port());
  o.url.db = 3;
  RedisClient c(o), c0(Opts(server_.port()));
  RedisReply r;
  std::string err;
  ASSERT_TRUE(c.Call({"SET", "k", "in3"}, &r, &err)) << err;
  ASSERT_TRUE(c0.Call({"GET", "k"}, &r, &err)) << err;
  EXPECT_TRUE(r.IsNil());
}

}  // namespace
}  // namespace kz::queue
