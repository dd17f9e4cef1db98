#include "scoring/verdict_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "util/fs.h"

namespace kz::scoring {
using nlohmann::json;

std::string ResumeKey(const std::string& task_id, int sample, const std::string& code_xxh) {
  return task_id + "#" + std::to_string(sample) + "#" + code_xxh;
}

std::optional<std::string> RecordKey(const json& r) {
  if (!r.is_object() || !r.contains("task") || !r["task"].is_string() || !r.contains("sample") ||
      !r["sample"].is_number_integer() || !r.contains("code_xxh") || !r["code_xxh"].is_string())
    return std::nullopt;
  return ResumeKey(r["task"].get<std::string>(), r["sample"].get<int>(), r["code_xxh"].get<std::string>());
}

LoadedLog LoadVerdictLog(const std::string& path) {
  LoadedLog out;
  std::string text, err;
  if (!util::ReadFile(path, &text, &err)) return out;
  if (!text.empty() && text.back() != '\n') {  // torn by a kill: Open() cuts it off
    ++out.ignored_lines;
    text.erase(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  }
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json r = json::parse(line, nullptr, false);
    auto key = r.is_discarded() ? std::nullopt : RecordKey(r);
    if (!key) {
      ++out.ignored_lines;
      continue;
    }
    out.records[*key] = std::move(r);
  }
  return out;
}

namespace {
std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Cuts the file back to just after its last '\n' (or to empty when it has none).
bool CutTornTail(int fd, const std::string& path, std::string* err) {
  off_t size = lseek(fd, 0, SEEK_END);
  if (size <= 0) return size == 0 || (*err = Errno(path), false);
  off_t keep = size;
  char c = 0;
  while (keep > 0) {
    if (pread(fd, &c, 1, keep - 1) != 1) return *err = Errno(path), false;
    if (c == '\n') break;
    --keep;
  }
  if (keep == size) return true;
  if (ftruncate(fd, keep) != 0) return *err = Errno(path), false;
  return fsync(fd) == 0 || (*err = Errno(path), false);
}
}  // namespace

bool VerdictLog::Open(const std::string& path, std::string* err) {
  path_ = path;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) return *err = Errno(path), false;
  return CutTornTail(fd_, path, err);
}

VerdictLog::~VerdictLog() {
  if (fd_ >= 0) ::close(fd_);
}

bool VerdictLog::Append(const json& record, std::string* err) {
  std::string line = record.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  for (size_t done = 0; done < line.size();) {
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return *err = Errno(path_), false;
    done += static_cast<size_t>(n);
  }
  return fsync(fd_) == 0 || (*err = Errno(path_), false);
}

}  // namespace kz::scoring
