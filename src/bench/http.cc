#include "bench/http.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace kz::bench {

namespace {
std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

bool AllDigits(const std::string& s) {
  return !s.empty() && s.size() <= 18 &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}
}  // namespace

bool ParseHttpUrl(const std::string& url, HttpUrl* out, std::string* err) {
  const std::string scheme = "http://";
  if (Lower(url.substr(0, scheme.size())) != scheme) {
    *err = "server URL must start with http:// (got \"" + url + "\"; https is not supported)";
    return false;
  }
  std::string rest = url.substr(scheme.size());
  size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  out->prefix = slash == std::string::npos ? "" : rest.substr(slash);
  while (!out->prefix.empty() && out->prefix.back() == '/') out->prefix.pop_back();
  std::string port;
  bool has_port = false;
  if (!authority.empty() && authority[0] == '[') {  // [v6]:port
    size_t close = authority.find(']');
    if (close == std::string::npos) return *err = "bad host in " + url, false;
    out->host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return *err = "bad host in " + url, false;
      port = authority.substr(close + 2);
      has_port = true;
    }
  } else {
    size_t colon = authority.rfind(':');
    out->host = authority.substr(0, colon);
    if (colon != std::string::npos) port = authority.substr(colon + 1), has_port = true;
  }
  if (out->host.empty()) return *err = "no host in " + url, false;
  out->port = 80;
  if (has_port) {
    if (!AllDigits(port) || std::stol(port) < 1 || std::stol(port) > 65535)
      return *err = "bad port in " + url, false;
    out->port = static_cast<int>(std::stol(port));
  }
  return true;
}

HttpParse ParseHttpResponse(const std::string& buf, bool eof, HttpResponse* out, size_t* consumed,
                            std::string* err) {
  size_t head_end = buf.find("\r\n\r\n");
  if (head_end == std::string::npos) {
    if (buf.size() > (1u << 20)) return *err = "response headers over 1 MiB", HttpParse::kError;
    if (eof) return *err = buf.empty() ? "connection closed without a response" : "truncated response headers",
                 HttpParse::kError;
    return HttpParse::kIncomplete;
  }
  HttpResponse r;
  size_t line_end = buf.find("\r\n");
  std::string status_line = buf.substr(0, line_end);
  if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12 || status_line[8] != ' ' ||
      !AllDigits(status_line.substr(9, 3)))
    return *err = "malformed status line: " + status_line.substr(0, 80), HttpParse::kError;
  r.status = std::stoi(status_line.substr(9, 3));
  bool http10 = status_line.rfind("HTTP/1.0", 0) == 0;
  for (size_t pos = line_end + 2; pos < head_end;) {
    size_t end = buf.find("\r\n", pos);
    std::string line = buf.substr(pos, end - pos);
    pos = end + 2;
    size_t colon = line.find(':');
    if (colon == std::string::npos) return *err = "malformed header line: " + line.substr(0, 80), HttpParse::kError;
    r.headers[Lower(Trim(line.substr(0, colon)))] = Trim(line.substr(colon + 1));
  }
  std::string connection = Lower(r.headers.count("connection") ? r.headers["connection"] : "");
  r.close = connection == "close" || (http10 && connection != "keep-alive");
  size_t body = head_end + 4;
  if (r.status == 204 || r.status == 304 || (r.status >= 100 && r.status < 200)) {
    *consumed = body;
  } else if (Lower(r.headers.count("transfer-encoding") ? r.headers["transfer-encoding"] : "") == "chunked") {
    size_t pos = body;
    while (true) {
      size_t end = buf.find("\r\n", pos);
      if (end == std::string::npos) return eof ? (*err = "truncated chunked body", HttpParse::kError) : HttpParse::kIncomplete;
      std::string size_line = buf.substr(pos, end - pos);
      std::string size_hex = Trim(size_line.substr(0, size_line.find(';')));
      if (size_hex.empty() || size_hex.size() > 15 ||
          !std::all_of(size_hex.begin(), size_hex.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
        return *err = "bad chunk size", HttpParse::kError;
      size_t n = std::stoull(size_hex, nullptr, 16);
      if (n == 0) {  // last chunk, then optional trailers up to an empty line
        size_t trailer_end = buf.find("\r\n\r\n", end);
        if (trailer_end == std::string::npos) return eof ? (*err = "truncated chunked body", HttpParse::kError) : HttpParse::kIncomplete;
        *consumed = trailer_end + 4;
        break;
      }
      if (buf.size() < end + 2 + n + 2) return eof ? (*err = "truncated chunked body", HttpParse::kError) : HttpParse::kIncomplete;
      r.body.append(buf, end + 2, n);
      pos = end + 2 + n + 2;
    }
  } else if (r.headers.count("content-length")) {
    std::string len = r.headers["content-length"];
    if (!AllDigits(len)) return *err = "bad Content-Length: " + len, HttpParse::kError;
    size_t n = std::stoull(len);
    if (buf.size() < body + n) return eof ? (*err = "truncated body", HttpParse::kError) : HttpParse::kIncomplete;
    r.body = buf.substr(body, n);
    *consumed = body + n;
  } else {  // no length: the body runs to the end of the connection
    if (!eof) return HttpParse::kIncomplete;
    r.body = buf.substr(body);
    r.close = true;
    *consumed = buf.size();
  }
  *out = std::move(r);
  return HttpParse::kDone;
}

HttpClient::HttpClient(HttpUrl url, double timeout_s) : url_(std::move(url)), timeout_s_(timeout_s) {}

HttpClient::~HttpClient() { Close(); }

void HttpClient::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

namespace {
using Clock = std::chrono::steady_clock;

int MsLeft(Clock::time_point deadline) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return ms < 0 ? 0 : static_cast<int>(std::min<long long>(ms, 1 << 30));
}

// Waits for `events` on fd until the deadline; false on timeout or error.
bool WaitFd(int fd, short events, Clock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, MsLeft(deadline));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}
}  // namespace

bool HttpClient::Connect(std::string* err) {
  Close();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port = std::to_string(url_.port);
  int rc = ::getaddrinfo(url_.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) return *err = "cannot resolve " + url_.host + ": " + gai_strerror(rc), false;
  auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_s_ * 1000));
  std::string last = "no address";
  for (addrinfo* a = res; a; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      last = std::strerror(errno);
      continue;
    }
    int r = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (r != 0 && errno == EINPROGRESS) {
      int so_error = 0;
      socklen_t len = sizeof so_error;
      if (!WaitFd(fd, POLLOUT, deadline)) so_error = ETIMEDOUT;
      else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len) != 0) so_error = errno;
      r = so_error == 0 ? 0 : -1;
      errno = so_error;
    }
    if (r != 0) {
      last = std::strerror(errno);
      ::close(fd);
      continue;
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fd_ = fd;
    break;
  }
  ::freeaddrinfo(res);
  if (fd_ < 0) *err = "cannot connect to " + url_.host + ":" + port + ": " + last;
  return fd_ >= 0;
}

bool HttpClient::Exchange(const std::string& request, HttpResponse* out, std::string* err, bool* fresh_failure) {
  *fresh_failure = false;
  auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long long>(timeout_s_ * 1000));
  for (size_t done = 0; done < request.size();) {
    ssize_t n = ::send(fd_, request.data() + done, request.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitFd(fd_, POLLOUT, deadline)) return *err = "timed out sending the request", false;
      continue;
    }
    *fresh_failure = done == 0 || errno == EPIPE || errno == ECONNRESET;
    return *err = std::string("send failed: ") + std::strerror(errno), false;
  }
  std::string buf;
  char chunk[65536];
  bool eof = false;
  while (true) {
    size_t consumed = 0;
    HttpParse p = ParseHttpResponse(buf, eof, out, &consumed, err);
    if (p == HttpParse::kDone) return true;
    if (p == HttpParse::kError) {
      *fresh_failure = buf.empty();
      return false;
    }
    if (!WaitFd(fd_, POLLIN, deadline)) return *err = "timed out waiting for the response", false;
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n > 0) buf.append(chunk, static_cast<size_t>(n));
    else if (n == 0) eof = true;
    else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
      *fresh_failure = buf.empty();
      return *err = std::string("receive failed: ") + std::strerror(errno), false;
    }
  }
}

bool HttpClient::Request(const std::string& method, const std::string& path, const std::string& body,
                         HttpResponse* out, std::string* err,
                         const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string host = url_.host.find(':') != std::string::npos ? "[" + url_.host + "]" : url_.host;
  std::string req = method + " " + url_.prefix + path + " HTTP/1.1\r\nHost: " + host + ":" +
                    std::to_string(url_.port) + "\r\nAccept: application/json\r\nConnection: keep-alive\r\n";
  if (!body.empty() || method == "POST" || method == "PUT")
    req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  for (const auto& [k, v] : headers) req += k + ": " + v + "\r\n";
  req += "\r\n" + body;
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool reused = fd_ >= 0;
    if (!reused && !Connect(err)) return false;
    bool fresh_failure = false;
    if (Exchange(req, out, err, &fresh_failure)) {
      if (out->close) Close();
      return true;
    }
    Close();
    if (!(reused && fresh_failure)) return false;  // only a stale keep-alive connection is retried
  }
  return false;
}

}  // namespace kz::bench
