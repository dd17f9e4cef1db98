#include "queue/redis_client.h"

#include <hiredis/hiredis.h>
#include <signal.h>

#include <algorithm>
#include <charconv>
#include <mutex>

#include "util/log.h"

namespace kz::queue {
namespace {

using Clock = std::chrono::steady_clock;

// Parses all of `s` as an integer in [lo, hi].
bool ParseInt(std::string_view s, int lo, int hi, int* out) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || p != s.data() + s.size() || v < lo || v > hi) return false;
  *out = v;
  return true;
}

timeval ToTimeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

RedisReply Copy(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_NIL: break;
    case REDIS_REPLY_INTEGER: out.type = RedisReply::Type::kInteger; out.integer = r->integer; break;
    case REDIS_REPLY_ARRAY:
      out.type = RedisReply::Type::kArray;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(Copy(r->element[i]));
      break;
    case REDIS_REPLY_STATUS: out.type = RedisReply::Type::kStatus; out.str.assign(r->str, r->len); break;
    case REDIS_REPLY_ERROR: out.type = RedisReply::Type::kError; out.str.assign(r->str, r->len); break;
    default: out.type = RedisReply::Type::kString; out.str.assign(r->str ? r->str : "", r->len); break;
  }
  return out;
}

void IgnoreSigpipeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction old {};
    if (sigaction(SIGPIPE, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) return;
    struct sigaction sa {};
    sa.sa_handler = [](int) {};  // caught, not ignored: exec'd children get SIG_DFL back
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, nullptr);
  });
}

}  // namespace

bool ParseRedisUrl(std::string_view url, RedisUrl* out, std::string* err) {
  auto fail = [&](const std::string& why) {
    *err = "bad Redis URL \"" + std::string(url) + "\": " + why + " (want redis://HOST:PORT[/DB])";
    return false;
  };
  constexpr std::string_view kScheme = "redis://";
  if (url.substr(0, 9) == "rediss://") return fail("TLS (rediss://) is not supported");
  if (url.substr(0, kScheme.size()) != kScheme) return fail("it must start with redis://");
  std::string_view rest = url.substr(kScheme.size());
  size_t slash = rest.find('/');
  std::string_view hostport = rest.substr(0, slash);
  if (hostport.find('@') != std::string_view::npos) return fail("user info (user:password@) is not supported");
  RedisUrl u;
  std::string_view port;
  if (!hostport.empty() && hostport.front() == '[') {  // [IPv6]:port
    size_t close = hostport.find(']');
    if (close == std::string_view::npos) return fail("unclosed '[' in the host");
    u.host = hostport.substr(1, close - 1);
    std::string_view after = hostport.substr(close + 1);
    if (!after.empty() && after.front() != ':') return fail("junk after the IPv6 host");
    if (!after.empty()) port = after.substr(1);
    if (!after.empty() && port.empty()) return fail("empty port");
  } else {
    size_t colon = hostport.find(':');
    u.host = hostport.substr(0, colon);
    if (colon != std::string_view::npos) {
      port = hostport.substr(colon + 1);
      if (port.empty()) return fail("empty port");
    }
  }
  if (u.host.empty()) return fail("empty host");
  if (!port.empty() && !ParseInt(port, 1, 65535, &u.port)) return fail("port must be a number in 1..65535");
  if (slash != std::string_view::npos) {
    std::string_view db = rest.substr(slash + 1);
    if (!db.empty() && !ParseInt(db, 0, 65535, &u.db)) return fail("the DB must be a number in 0..65535");
  }
  *out = u;
  return true;
}

std::string RedisReply::AsString() const {
  if (type == Type::kString || type == Type::kStatus) return str;
  if (type == Type::kInteger) return std::to_string(integer);
  return "";
}

void RedisClient::ContextDeleter::operator()(redisContext* c) const { redisFree(c); }

RedisClient::RedisClient(Options options) : options_(std::move(options)) { IgnoreSigpipeOnce(); }
RedisClient::~RedisClient() = default;

std::string RedisClient::Describe() const {
  const auto& u = options_.url;
  bool v6 = u.host.find(':') != std::string::npos;
  return "redis://" + (v6 ? "[" + u.host + "]" : u.host) + ":" + std::to_string(u.port) + "/" + std::to_string(u.db);
}

std::chrono::milliseconds RedisClient::RetryDelay() const {
  if (ctx_) return std::chrono::milliseconds{0};
  auto left = std::chrono::ceil<std::chrono::milliseconds>(next_attempt_ - Clock::now());
  return std::max(left, std::chrono::milliseconds{0});
}

void RedisClient::Drop(const std::string& why) {
  if (ctx_) util::LogWarn("redis: lost " + Describe() + ": " + why + "; reconnecting");
  ctx_.reset();
}

// Connects (and SELECTs the DB) unless the backoff delay is still running. Each failure
// doubles the delay up to max_backoff; a success resets it.
bool RedisClient::Connect(std::string* err) {
  if (Clock::now() < next_attempt_) {  // backing off: the last attempt's reason
    *err = "cannot connect to " + Describe() + ": " + last_error_;
    return false;
  }
  std::unique_ptr<redisContext, ContextDeleter> c(
      redisConnectWithTimeout(options_.url.host.c_str(), options_.url.port, ToTimeval(options_.connect_timeout)));
  std::string why = !c ? "out of memory" : c->err ? c->errstr : "";
  if (why.empty() && options_.url.db != 0) {
    std::string db = std::to_string(options_.url.db);
    const char* argv[] = {"SELECT", db.c_str()};
    size_t lens[] = {6, db.size()};
    auto* r = static_cast<redisReply*>(redisCommandArgv(c.get(), 2, argv, lens));
    if (!r) why = c->errstr;
    else if (r->type == REDIS_REPLY_ERROR) why = "SELECT " + db + ": " + std::string(r->str, r->len);
    if (r) freeReplyObject(r);
  }
  if (!why.empty()) {
    last_error_ = why;
    backoff_ = std::clamp(backoff_ * 2, options_.min_backoff, options_.max_backoff);
    next_attempt_ = Clock::now() + backoff_;
    *err = "cannot connect to " + Describe() + ": " + why;
    util::Log(backoff_ == options_.min_backoff ? util::LogLevel::kWarn : util::LogLevel::kDebug,
              "redis: " + *err + " (retrying with backoff up to " +
                  std::to_string(options_.max_backoff.count()) + " ms)");
    return false;
  }
  if (ever_connected_ || backoff_.count() > 0) util::LogInfo("redis: connected to " + Describe());
  ever_connected_ = true;
  backoff_ = std::chrono::milliseconds{0};
  ctx_ = std::move(c);
  return true;
}

bool RedisClient::Command(const std::vector<std::string>& args, RedisReply* out, std::string* err,
                          std::chrono::milliseconds extra_timeout) {
  if (!ctx_ && !Connect(err)) return false;
  std::vector<const char*> argv;
  std::vector<size_t> lens;
  for (const auto& a : args) {
    argv.push_back(a.data());
    lens.push_back(a.size());
  }
  redisSetTimeout(ctx_.get(), ToTimeval(options_.command_timeout + extra_timeout));
  auto* r = static_cast<redisReply*>(redisCommandArgv(ctx_.get(), static_cast<int>(argv.size()), argv.data(), lens.data()));
  if (!r) {
    *err = "redis " + (args.empty() ? std::string("?") : args[0]) + ": " + ctx_->errstr;
    Drop(ctx_->errstr);
    return false;
  }
  *out = Copy(r);
  freeReplyObject(r);
  return true;
}

bool RedisClient::Call(const std::vector<std::string>& args, RedisReply* out, std::string* err,
                       std::chrono::milliseconds extra_timeout) {
  if (!Command(args, out, err, extra_timeout)) return false;
  if (!out->IsError()) return true;
  *err = "redis " + (args.empty() ? std::string("?") : args[0]) + ": " + out->str;
  return false;
}

}  // namespace kz::queue
