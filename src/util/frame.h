// Length-prefixed frames: a 4-byte big-endian length, then that many payload bytes.
// See docs/worker-protocol.md.
#pragma once
#include <cstddef>
#include <deque>
#include <string>
#include <string_view>

namespace kz::util {

inline constexpr size_t kMaxFrameBytes = 16u << 20;

std::string EncodeFrame(std::string_view payload);

// Incremental decoder: Feed() bytes as they arrive; Pop() complete payloads in order.
// A length over kMaxFrameBytes puts the decoder in a failed state (error() says why).
class FrameDecoder {
 public:
  void Feed(const char* data, size_t n);
  bool Pop(std::string* payload);
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  size_t pending_bytes() const { return buffer_.size(); }

 private:
  std::string buffer_;
  std::deque<std::string> ready_;
  std::string error_;
};

}  // namespace kz::util
