// A small RAII wrapper around one hiredis connection: `redis://HOST:PORT[/DB]` URLs,
// binary-safe argv commands, replies copied into owned values, and reconnection with
// exponential backoff. A command never throws and never crashes on a dead server: it
// returns false with a reason, and the next command reconnects (once the backoff delay
// has passed), so a Redis restart costs the caller errors for a while, nothing more.
//
// hiredis writes with plain write(2): a write to a server that just died raises SIGPIPE.
// The first RedisClient therefore installs an empty SIGPIPE handler if the signal is at
// its default (so the write fails with EPIPE instead of killing the process; a handler,
// unlike SIG_IGN, is reset to the default in exec'd children).
//
// Thread safety: one RedisClient belongs to one thread at a time (callers serialise).
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct redisContext;

namespace kz::queue {

struct RedisUrl {
  std::string host;
  int port = 6379;
  int db = 0;
};

// Parses `redis://HOST[:PORT][/DB]` (HOST may be a bracketed IPv6 literal). False with a
// reason in *err for anything else: another scheme (rediss:// is not supported), user
// info, an empty host, a port outside 1..65535, a DB that is not a number in 0..65535,
// trailing characters.
bool ParseRedisUrl(std::string_view url, RedisUrl* out, std::string* err);

// A reply, copied out of hiredis (no pointers into its buffers survive).
struct RedisReply {
  enum class Type { kNil, kInteger, kString, kStatus, kError, kArray };
  Type type = Type::kNil;
  int64_t integer = 0;
  std::string str;                     // kString, kStatus, kError
  std::vector<RedisReply> elements;    // kArray

  bool IsNil() const { return type == Type::kNil; }
  bool IsArray() const { return type == Type::kArray; }
  bool IsError() const { return type == Type::kError; }
  // The string of a kString/kStatus reply, or of an integer reply printed; "" otherwise.
  std::string AsString() const;
};

class RedisClient {
 public:
  struct Options {
    RedisUrl url;
    std::chrono::milliseconds connect_timeout{2000};
    std::chrono::milliseconds command_timeout{10000};  // socket read/write limit
    std::chrono::milliseconds min_backoff{100};        // first delay after a failed connect
    std::chrono::milliseconds max_backoff{5000};       // the delay doubles up to this
  };
  explicit RedisClient(Options options);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Runs one command. True when the server answered — an error reply too (out->type is
  // kError). False, with *err, when no answer came: not connected and the connect failed
  // (or the backoff delay has not passed yet: the same message as the last failure, no
  // attempt made), or an I/O error or timeout on the socket;
  // the connection is then dropped and the next call reconnects. `extra_timeout` lengthens
  // the socket timeout of this call (blocking commands: XREADGROUP BLOCK).
  bool Command(const std::vector<std::string>& args, RedisReply* out, std::string* err,
               std::chrono::milliseconds extra_timeout = std::chrono::milliseconds{0});
  // Command(), and an error reply is a failure too (*err = the server's message).
  bool Call(const std::vector<std::string>& args, RedisReply* out, std::string* err,
            std::chrono::milliseconds extra_timeout = std::chrono::milliseconds{0});

  bool connected() const { return ctx_ != nullptr; }
  // Time until the next reconnect attempt is allowed (0 when connected or due now).
  std::chrono::milliseconds RetryDelay() const;
  const RedisUrl& url() const { return options_.url; }
  std::string Describe() const;  // "redis://HOST:PORT/DB"

 private:
  struct ContextDeleter {
    void operator()(redisContext* c) const;
  };
  bool Connect(std::string* err);
  void Drop(const std::string& why);

  Options options_;
  std::unique_ptr<redisContext, ContextDeleter> ctx_;
  std::chrono::steady_clock::time_point next_attempt_{};
  std::chrono::milliseconds backoff_{0};
  bool ever_connected_ = false;
  std::string last_error_;  // why the last connect failed
};

}  // namespace kz::queue
