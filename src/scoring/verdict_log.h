// <out>/verdicts.jsonl: one JSON record per verified sample, appended and fsync'd line by
// line so that a killed run loses at most the line being written. A record is keyed by
// (task id, sample id, XXH3-128 of the code): changed code is verified again.
#pragma once
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kz::scoring {

std::string ResumeKey(const std::string& task_id, int sample, const std::string& code_xxh);
// The key of a stored record; nullopt when a field is missing or has the wrong type.
std::optional<std::string> RecordKey(const nlohmann::json& record);

struct LoadedLog {
  std::map<std::string, nlohmann::json> records;  // by key; a later record wins
  int ignored_lines = 0;                          // unparsable (a torn line from a kill)
};

// Reads the log; a missing file is an empty log.
LoadedLog LoadVerdictLog(const std::string& path);

class VerdictLog {
 public:
  // Opens for appending. A last line without its newline (torn by a kill) is cut off first,
  // so the next record starts on a line of its own.
  bool Open(const std::string& path, std::string* err);
  ~VerdictLog();
  // Writes record.dump() + "\n", then fsyncs.
  bool Append(const nlohmann::json& record, std::string* err);

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace kz::scoring
