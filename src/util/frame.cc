#include "util/frame.h"

#include <cstdint>

namespace kz::util {

std::string EncodeFrame(std::string_view payload) {
  uint32_t n = static_cast<uint32_t>(payload.size());
  std::string out;
  out.reserve(4 + payload.size());
  out.push_back(static_cast<char>((n >> 24) & 0xff));
  out.push_back(static_cast<char>((n >> 16) & 0xff));
  out.push_back(static_cast<char>((n >> 8) & 0xff));
  out.push_back(static_cast<char>(n & 0xff));
  out.append(payload);
  return out;
}

void FrameDecoder::Feed(const char* data, size_t n) {
  if (failed()) return;
  buffer_.append(data, n);
  while (buffer_.size() >= 4) {
    auto b = [&](int i) { return static_cast<uint32_t>(static_cast<unsigned char>(buffer_[i])); };
    uint32_t len = (b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
    if (len > kMaxFrameBytes) {
      error_ = "frame of " + std::to_string(len) + " bytes exceeds the limit";
      buffer_.clear();
      return;
    }
    if (buffer_.size() < 4 + static_cast<size_t>(len)) return;
    ready_.push_back(buffer_.substr(4, len));
    buffer_.erase(0, 4 + static_cast<size_t>(len));
  }
}

bool FrameDecoder::Pop(std::string* payload) {
  if (ready_.empty()) return false;
  *payload = std::move(ready_.front());
  ready_.pop_front();
  return true;
}

}  // namespace kz::util
