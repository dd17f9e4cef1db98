// Progress of a bench run on stderr: on a terminal one line with a bar, rewritten in place
// ("kz bench [########------------] 45/200 verified, 12 correct, elapsed 80s, ETA 4m12s");
// otherwise one plain line per step (logs, CI).
#pragma once
#include <chrono>
#include <cstddef>
#include <string>

namespace kz::scoring {

class Progress {
 public:
  // `prefix` like "kz bench"; `noun` like "verified".
  Progress(std::string prefix, std::string noun, size_t total, bool tty);
  Progress(std::string prefix, std::string noun, size_t total);  // tty = isatty(2)
  // One more item done; `detail` follows the counts (e.g. "3 correct").
  void Step(const std::string& detail);
  // A line that must stay (a failure): printed above the bar.
  void Note(const std::string& line);
  // The line for `done` items after `elapsed_s` (no bar, no escapes when !tty).
  std::string Render(size_t done, const std::string& detail, double elapsed_s) const;

 private:
  std::string prefix_, noun_, last_;
  size_t total_, done_ = 0;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kz::scoring
