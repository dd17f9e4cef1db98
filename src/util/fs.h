// Files: read whole, write atomically (temp + rename), temporary directories.
#pragma once
#include <string>

namespace kz::util {

// Reads the whole file. On failure returns false and sets *err to "<path>: <reason>".
bool ReadFile(const std::string& path, std::string* out, std::string* err);

// Writes `data` to a temp file beside `path`, fsyncs, and renames it over `path`, so readers
// see the old content or the new one, never a torn file.
bool WriteFileAtomic(const std::string& path, const std::string& data, std::string* err);

// Creates a fresh directory `<parent>/<prefix>XXXXXX` (parents created). Returns "" on failure.
std::string MakeTempDir(const std::string& parent, const std::string& prefix, std::string* err);

// Creates the directory and its parents; true if it exists afterwards.
bool MakeDirs(const std::string& path, std::string* err);

// Removes a file or a directory tree; missing paths are fine.
void RemoveAll(const std::string& path);

bool PathExists(const std::string& path);
std::string AbsolutePath(const std::string& path);

}  // namespace kz::util
