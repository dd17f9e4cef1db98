// A minimal blocking HTTP/1.1 client over POSIX sockets, for `kz bench --server` (JSON
// bodies to `kz serve`). kz must need nothing beyond libc/libm (it is copied alone to GPU
// hosts), and cpp-httplib is a shared library on Debian, so kz carries this instead of
// linking it. http:// only (no TLS), Content-Length request bodies, keep-alive with one
// reconnect when a reused connection turns out closed; responses with Content-Length,
// chunked, or read to EOF.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kz::bench {

struct HttpUrl {
  std::string host;    // name or address ("127.0.0.1", "gpu-3", "[::1]" → "::1")
  int port = 80;
  std::string prefix;  // path before the API, no trailing '/' ("" or "/kz")
};

// "http://host[:port][/prefix]" → HttpUrl; false with *err otherwise (https is refused).
bool ParseHttpUrl(const std::string& url, HttpUrl* out, std::string* err);

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  bool close = false;  // the server closes the connection after it
};

enum class HttpParse { kIncomplete, kDone, kError };

// Parses one response from the start of `buf`; `eof`: the peer has closed (a response
// without length ends there). kDone sets *out and *consumed (bytes used).
HttpParse ParseHttpResponse(const std::string& buf, bool eof, HttpResponse* out, size_t* consumed,
                            std::string* err);

class HttpClient {
 public:
  explicit HttpClient(HttpUrl url, double timeout_s = 60);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends METHOD prefix+path with `body` (as application/json when not empty) and reads
  // the response. False with *err on a transport failure (cannot connect, reset, timeout,
  // malformed response); any HTTP status is a success here.
  bool Request(const std::string& method, const std::string& path, const std::string& body, HttpResponse* out,
               std::string* err, const std::vector<std::pair<std::string, std::string>>& headers = {});

  const HttpUrl& url() const { return url_; }

 private:
  bool Connect(std::string* err);
  void Close();
  // One attempt on the current connection; *fresh_failure: it failed before any response
  // byte arrived on a reused connection (safe to retry on a new one).
  bool Exchange(const std::string& request, HttpResponse* out, std::string* err, bool* fresh_failure);

  HttpUrl url_;
  double timeout_s_;
  int fd_ = -1;
};

}  // namespace kz::bench
