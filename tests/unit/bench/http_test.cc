// The minimal HTTP/1.1 client of kz bench --server: URL and response parsing, and a real
// exchange with a stale keep-alive connection against a one-shot loopback server.
#include "bench/http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace kz::bench {
namespace {

TEST(HttpUrl, Parses) {
  HttpUrl u;
  std::string err;
  ASSERT_TRUE(ParseHttpUrl("http://127.0.0.1:8470", &u, &err)) << err;
  EXPECT_EQ(u.host, "127.0.0.1");
  EXPECT_EQ(u.port, 8470);
  EXPECT_EQ(u.prefix, "");
  ASSERT_TRUE(ParseHttpUrl("HTTP://gpu-3/kz/", &u, &err)) << err;
  EXPECT_EQ(u.host, "gpu-3");
  EXPECT_EQ(u.port, 80);
  EXPECT_EQ(u.prefix, "/kz");
  ASSERT_TRUE(ParseHttpUrl("http://[::1]:9000/", &u, &err)) << err;
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.port, 9000);
  for (const char* bad : {"https://h:1", "h:1", "http://:80", "http://h:", "http://h:0", "http://h:99999", "http://h:8x"})
    EXPECT_FALSE(ParseHttpUrl(bad, &u, &err)) << bad;
}

HttpParse Parse(const std::string& buf, bool eof, HttpResponse* r, size_t* used) {
  std::string err;
  return ParseHttpResponse(buf, eof, r, used, &err);
}

TEST(HttpResponseParse, ContentLength) {
  std::string raw = "HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}";
  HttpResponse r;
  size_t used = 0;
  for (size_t cut = 0; cut < raw.size(); ++cut) EXPECT_EQ(Parse(raw.substr(0, cut), false, &r, &used), HttpParse::kIncomplete) << cut;
  ASSERT_EQ(Parse(raw + "HTTP/1.1", false, &r, &used), HttpParse::kDone);
  EXPECT_EQ(used, raw.size());
  EXPECT_EQ(r.status, 202);
  EXPECT_EQ(r.body, "{\"a\":1}");
  EXPECT_EQ(r.headers["content-type"], "application/json");
  EXPECT_FALSE(r.close);
  EXPECT_EQ(Parse(raw.substr(0, raw.size() - 1), true, &r, &used), HttpParse::kError) << "truncated at EOF";
}

TEST(HttpResponseParse, ChunkedCloseAndEof) {
  HttpResponse r;
  size_t used = 0;
  std::string chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n6;x=y\r\npedia \r\n0\r\n\r\n";
  EXPECT_EQ(Parse(chunked.substr(0, chunked.size() - 2), false, &r, &used), HttpParse::kIncomplete);
  ASSERT_EQ(Parse(chunked, false, &r, &used), HttpParse::kDone);
  EXPECT_EQ(r.body, "Wikipedia ");
  EXPECT_EQ(used, chunked.size());
  std::string close = "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 5\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}";
  ASSERT_EQ(Parse(close, false, &r, &used), HttpParse::kDone);
  EXPECT_TRUE(r.close);
  EXPECT_EQ(r.headers["retry-after"], "5");
  std::string eof = "HTTP/1.0 200 OK\r\n\r\nbody to the end";
  EXPECT_EQ(Parse(eof, false, &r, &used), HttpParse::kIncomplete);
  ASSERT_EQ(Parse(eof, true, &r, &used), HttpParse::kDone);
  EXPECT_EQ(r.body, "body to the end");
  EXPECT_TRUE(r.close);
  EXPECT_EQ(Parse("SSH-2.0-OpenSSH\r\n\r\n", false, &r, &used), HttpParse::kError);
  EXPECT_EQ(Parse("", true, &r, &used), HttpParse::kError);
}

// Accepts `connections` connections one after another; on each answers one request
// (Content-Length body echoed back) and closes it without saying so (keep-alive promised).
class OneShotServer {
 public:
  explicit OneShotServer(int connections) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    listen(fd_, 4);
    thread_ = std::thread([this, connections] {
      for (int i = 0; i < connections; ++i) {
        int c = accept(fd_, nullptr, nullptr);
        std::string req;
        char buf[4096];
        while (req.find("\r\n\r\n") == std::string::npos) {
          ssize_t n = read(c, buf, sizeof buf);
          if (n <= 0) break;
          req.append(buf, n);
        }
        size_t cl = req.find("Content-Length: ");
        size_t want = cl == std::string::npos ? 0 : std::stoul(req.substr(cl + 16));
        std::string body = req.substr(req.find("\r\n\r\n") + 4);
        while (body.size() < want) {
          ssize_t n = read(c, buf, sizeof buf);
          if (n <= 0) break;
          body.append(buf, n);
        }
        ++served_;
        std::string resp = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
        write(c, resp.data(), resp.size());
        close(c);
      }
    });
  }
  ~OneShotServer() {
    thread_.join();
    close(fd_);
  }
  int port() const { return port_; }
  int served() const { return served_; }

 private:
  int fd_ = -1, port_ = 0;
  std::atomic<int> served_{0};
  std::thread thread_;
};

TEST(HttpClient, ReconnectsWhenAKeepAliveConnectionWasClosed) {
  OneShotServer server(2);
  HttpClient client({"127.0.0.1", server.port(), ""}, 10);
  HttpResponse r;
  std::string err;
  ASSERT_TRUE(client.Request("POST", "/v1/batch", "{\"x\":1}", &r, &err)) << err;
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"x\":1}");
  usleep(50000);  // the server has closed the first connection by now
  ASSERT_TRUE(client.Request("POST", "/v1/batch", "{\"y\":2}", &r, &err)) << err;
  EXPECT_EQ(r.body, "{\"y\":2}");
  EXPECT_EQ(server.served(), 2);
}

TEST(HttpClient, UnreachableIsAClearError) {
  HttpClient client({"127.0.0.1", 1, ""}, 5);
  HttpResponse r;
  std::string err;
  EXPECT_FALSE(client.Request("GET", "/healthz", "", &r, &err));
  EXPECT_NE(err.find("cannot connect to 127.0.0.1:1"), std::string::npos) << err;
}

}  // namespace
}  // namespace kz::bench
