#include "scoring/http.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <mutex>

namespace kz::scoring {

namespace {
std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

bool AllDigits(const std::string& s) {
  return !s.empty() && s.size() <= 18 &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  static_cast<HttpResponse*>(user)->body.append(data, size * n);
  return size * n;
}

// One header line; a new status line (after a 100 Continue or a redirect) starts over.
size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* r = static_cast<HttpResponse*>(user);
  std::string line(data, size * n);
  if (line.rfind("HTTP/", 0) == 0) r->headers.clear();
  size_t colon = line.find(':');
  if (colon != std::string::npos) r->headers[Lower(Trim(line.substr(0, colon)))] = Trim(line.substr(colon + 1));
  return size * n;
}

std::string HostPort(const HttpUrl& u) {
  bool v6 = u.host.find(':') != std::string::npos;
  return (v6 ? "[" + u.host + "]" : u.host) + ":" + std::to_string(u.port);
}

// The message for a transport failure, naming what failed.
std::string TransportError(CURLcode rc, const HttpUrl& u, const char* detail) {
  std::string what = detail && *detail ? detail : curl_easy_strerror(rc);
  switch (rc) {
    case CURLE_COULDNT_CONNECT: return "cannot connect to " + HostPort(u) + ": " + what;
    case CURLE_COULDNT_RESOLVE_HOST: return "cannot resolve " + u.host + ": " + what;
    case CURLE_OPERATION_TIMEDOUT: return "timed out talking to " + HostPort(u) + ": " + what;
    case CURLE_SSL_CONNECT_ERROR: case CURLE_PEER_FAILED_VERIFICATION: case CURLE_SSL_CACERT_BADFILE:
      return "TLS failure with " + HostPort(u) + ": " + what;
    default: return what + " (" + HostPort(u) + ")";
  }
}
}  // namespace

bool ParseHttpUrl(const std::string& url, HttpUrl* out, std::string* err) {
  std::string scheme = Lower(url.substr(0, 8)) == "https://" ? "https://" : "http://";
  if (Lower(url.substr(0, scheme.size())) != scheme)
    return *err = "server URL must start with http:// or https:// (got \"" + url + "\")", false;
  out->tls = scheme == "https://";
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
  out->port = out->tls ? 443 : 80;
  if (has_port) {
    if (!AllDigits(port) || std::stol(port) < 1 || std::stol(port) > 65535)
      return *err = "bad port in " + url, false;
    out->port = static_cast<int>(std::stol(port));
  }
  return true;
}

HttpClient::HttpClient(HttpUrl url, double timeout_s) : url_(std::move(url)), timeout_s_(timeout_s) {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  base_ = std::string(url_.tls ? "https://" : "http://") + HostPort(url_) + url_.prefix;
}

HttpClient::~HttpClient() {
  if (curl_) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

bool HttpClient::Request(const std::string& method, const std::string& path, const std::string& body,
                         HttpResponse* out, std::string* err,
                         const std::vector<std::pair<std::string, std::string>>& headers) {
  if (!curl_) curl_ = curl_easy_init();  // kept: its connection is reused (keep-alive)
  CURL* c = static_cast<CURL*>(curl_);
  if (!c) return *err = "cannot create a curl handle", false;
  curl_easy_reset(c);
  *out = HttpResponse{};
  std::string url = base_ + path;
  char detail[CURL_ERROR_SIZE] = "";
  curl_slist* list = nullptr;
  for (const auto& [name, value] : headers) list = curl_slist_append(list, (name + ": " + value).c_str());
  if (!body.empty()) list = curl_slist_append(list, "Content-Type: application/json");
  list = curl_slist_append(list, "Expect:");  // no 100-continue round trip
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (!body.empty() || method == "POST") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s_ * 1000));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, out);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, detail);
  CURLcode rc = curl_easy_perform(c);
  curl_slist_free_all(list);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);
  if (rc != CURLE_OK) return *err = TransportError(rc, url_, detail), false;
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  out->status = static_cast<int>(status);
  return true;
}

}  // namespace kz::scoring
