// ExtensionCache::Evict: the cache directory's size bound (docs/compile-farm.md, "Cache bound").
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <vector>

#include "compile/cache.h"
#include "compile/extract_cache.h"
#include "util/fs.h"

namespace kz::compile {
namespace fs = std::filesystem;
namespace {

uint64_t TreeBytes(const fs::path& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return fs::file_size(path, ec);
  uint64_t total = 0;
  for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) total += it->file_size(ec);
  return total;
}

enum class Kind { kEntry, kExtract, kPch };

struct Item {
  fs::file_time_type used;
  uint64_t bytes;
  fs::path path;
  Kind kind;
};

fs::file_time_type UsedTime(const fs::path& p) {
  std::error_code ec;
  auto t = fs::last_write_time(p, ec);
  return ec ? fs::file_time_type::min() : t;
}

// Every path `depth` levels below `base` (directories or files as `dirs` says).
void Collect(const fs::path& base, int depth, bool dirs, Kind kind, const fs::path& stamp,
             std::vector<Item>* items) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(base, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it.depth() != depth) continue;
    it.disable_recursion_pending();
    if (dirs != it->is_directory(ec)) continue;
    items->push_back({UsedTime(stamp.empty() ? it->path() : it->path() / stamp), TreeBytes(it->path()),
                      it->path(), kind});
  }
}

// Removes a PCH directory unless a build holds its lock (shared, compile::PchStore).
bool RemoveIdlePch(const fs::path& dir) {
  std::string lock = dir.string() + ".lock";
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool idle = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  if (idle) util::RemoveAll(dir.string());
  ::close(fd);  // releases the lock; the lock file stays (a path others may have open)
  return idle;
}
}  // namespace

ExtensionCache::EvictionReport ExtensionCache::Evict(uint64_t max_bytes, double stale_staging_s) const {
  EvictionReport report;
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (const auto& d : fs::directory_iterator(root_ + "/tmp", ec)) {
    auto age = std::chrono::duration<double>(now - fs::last_write_time(d.path(), ec)).count();
    if (!ec && age > stale_staging_s) util::RemoveAll(d.path().string()), ++report.staging_removed;
  }
  std::vector<Item> items;
  Collect(root_ + "/v" + std::to_string(kCacheFormatVersion), 1, true, Kind::kEntry, "meta.json", &items);
  Collect(root_ + "/extract/v" + std::to_string(kExtractCacheVersion), 1, false, Kind::kExtract, "", &items);
  for (const auto& d : fs::directory_iterator(root_ + "/pch", ec))  // <24 hex digits>/, not templates
    if (d.is_directory(ec) && d.path().filename().string().size() == 24)
      items.push_back({UsedTime(d.path()), TreeBytes(d.path()), d.path(), Kind::kPch});
  for (const auto& item : items) report.bytes_before += item.bytes;
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.used < b.used; });
  report.bytes_after = report.bytes_before;
  for (const auto& item : items) {
    if (report.bytes_after <= max_bytes) break;
    if (item.kind == Kind::kPch) {
      if (!RemoveIdlePch(item.path)) continue;
      ++report.pch_removed;
    } else {
      util::RemoveAll(item.path.string());
      ++(item.kind == Kind::kEntry ? report.entries_removed : report.extract_removed);
    }
    report.bytes_after -= item.bytes;
  }
  return report;
}

}  // namespace kz::compile
