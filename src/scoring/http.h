// The blocking HTTP client of `kz bench --server` (JSON bodies to `kz serve`), on libcurl
// like kz generate's model client: keep-alive (one easy handle per client, its connection
// reused; curl reconnects when a kept connection turns out closed), http:// and https://.
// Linked only into kz-bench: kz must need nothing beyond libc/libm (it is copied alone to
// GPU hosts), so `kz bench --server` execs kz-bench (docs/decisions.md).
// Thread rule: one HttpClient per thread.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kz::scoring {

struct HttpUrl {
  std::string host;    // name or address ("127.0.0.1", "gpu-3", "[::1]" → "::1")
  int port = 80;
  std::string prefix;  // path before the API, no trailing '/' ("" or "/kz")
  bool tls = false;    // https://
};

// "http[s]://host[:port][/prefix]" → HttpUrl; false with *err otherwise.
bool ParseHttpUrl(const std::string& url, HttpUrl* out, std::string* err);

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

class HttpClient {
 public:
  explicit HttpClient(HttpUrl url, double timeout_s = 60);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends METHOD prefix+path with `body` (as application/json when not empty) and reads
  // the response. False with *err on a transport failure (cannot connect, DNS, TLS, reset,
  // timeout, malformed response), naming it; any HTTP status is a success here.
  bool Request(const std::string& method, const std::string& path, const std::string& body, HttpResponse* out,
               std::string* err, const std::vector<std::pair<std::string, std::string>>& headers = {});

  const HttpUrl& url() const { return url_; }

 private:
  HttpUrl url_;
  double timeout_s_;
  std::string base_;      // scheme://host:port/prefix
  void* curl_ = nullptr;  // CURL*, created on first use
};

}  // namespace kz::scoring
