#include "generate/retry.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace kz::generate {

bool IsRetryable(const Error& e) {
  switch (e.kind) {
    case ErrorKind::kConnect:
    case ErrorKind::kOther:
      return true;
    case ErrorKind::kHttpStatus:
      return e.http_status == 429 || (e.http_status >= 500 && e.http_status <= 599);
    default:
      return false;
  }
}

double BackoffDelay(int retry, const RetryPolicy& policy, double u) {
  if (retry < 1) return 0;
  double d = std::min(policy.max_delay_s, policy.base_s * std::pow(2.0, std::min(retry - 1, 60)));
  u = std::clamp(u, 0.0, 1.0);
  return std::max(0.0, d / 2 + u * d / 2);
}

std::optional<double> ParseRetryAfter(const std::string& raw, std::time_t now) {
  size_t b = raw.find_first_not_of(" \t"), e = raw.find_last_not_of(" \t\r\n");
  if (b == std::string::npos) return std::nullopt;
  std::string v = raw.substr(b, e - b + 1);
  if (std::isdigit(static_cast<unsigned char>(v[0]))) {
    char* end = nullptr;
    double s = std::strtod(v.c_str(), &end);
    if (end && *end == '\0' && std::isfinite(s) && s >= 0) return s;
    return std::nullopt;
  }
  std::tm tm{};
  const char* rest = strptime(v.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (!rest || *rest != '\0') return std::nullopt;
  std::time_t at = timegm(&tm);
  return at <= now ? 0.0 : static_cast<double>(at - now);
}

double NextDelay(int retry, const RetryPolicy& policy, double u, std::optional<double> retry_after) {
  double d = BackoffDelay(retry, policy, u);
  return retry_after ? std::max(d, *retry_after) : d;
}

}  // namespace kz::generate
