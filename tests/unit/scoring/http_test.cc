// The HTTP client of kz bench --server (libcurl): URL parsing, a real exchange with a stale
// keep-alive connection against a one-shot loopback server, and clear transport errors
// (refused, TLS spoken to a plain-HTTP server).
#include "scoring/http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace kz::scoring {
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
  ASSERT_TRUE(ParseHttpUrl("https://kz.example/api", &u, &err)) << err;
  EXPECT_TRUE(u.tls);
  EXPECT_EQ(u.port, 443);
  EXPECT_EQ(u.prefix, "/api");
  for (const char* bad : {"ftp://h:1", "h:1", "http://:80", "http://h:", "http://h:0", "http://h:99999", "http://h:8x"})
    EXPECT_FALSE(ParseHttpUrl(bad, &u, &err)) << bad;
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

TEST(HttpClient, TlsToAPlainServerIsAClearError) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  listen(fd, 1);
  std::thread server([fd] {  // answers the TLS hello in plain HTTP
    int c = accept(fd, nullptr, nullptr);
    const char reply[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    write(c, reply, sizeof reply - 1);
    usleep(200000);
    close(c);
  });
  HttpClient client({"127.0.0.1", ntohs(a.sin_port), "", true}, 10);
  HttpResponse r;
  std::string err;
  EXPECT_FALSE(client.Request("GET", "/healthz", "", &r, &err));
  EXPECT_NE(err.find("TLS failure with 127.0.0.1:"), std::string::npos) << err;
  server.join();
  close(fd);
}

}  // namespace
}  // namespace kz::scoring
