#include "scoring/progress.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

namespace kz::scoring {

Progress::Progress(std::string prefix, std::string noun, size_t total, bool tty)
    : prefix_(std::move(prefix)), noun_(std::move(noun)), total_(total), tty_(tty),
      start_(std::chrono::steady_clock::now()) {}

Progress::Progress(std::string prefix, std::string noun, size_t total)
    : Progress(std::move(prefix), std::move(noun), total, isatty(2) != 0) {}

std::string Progress::Render(size_t done, const std::string& detail, double elapsed) const {
  int eta = done ? static_cast<int>(elapsed / done * (total_ > done ? total_ - done : 0)) : 0;
  char counts[200];
  std::snprintf(counts, sizeof counts, "%zu/%zu %s%s%s, elapsed %ds, ETA %dm%02ds", done, total_, noun_.c_str(),
                detail.empty() ? "" : ", ", detail.c_str(), static_cast<int>(elapsed), eta / 60, eta % 60);
  if (!tty_) return prefix_ + ": " + counts;
  const size_t width = 24;
  size_t fill = total_ ? done * width / total_ : width;
  return prefix_ + " [" + std::string(fill, '#') + std::string(width - fill, '-') + "] " + counts;
}

void Progress::Step(const std::string& detail) {
  ++done_;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  last_ = Render(done_, detail, elapsed);
  std::cerr << (tty_ ? "\r" : "") << last_ << (tty_ ? "\033[K" : "\n") << std::flush;
  if (tty_ && done_ == total_) std::cerr << "\n", last_.clear();
}

void Progress::Note(const std::string& line) {
  if (tty_) std::cerr << "\r\033[K";
  std::cerr << line << "\n";
  if (tty_ && !last_.empty()) std::cerr << last_ << std::flush;
}

}  // namespace kz::scoring
