#include "util/proc_stats.h"

#include <dirent.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>

namespace kz::util {

std::map<pid_t, uint64_t> GroupResidentBytes() {
  std::map<pid_t, uint64_t> out;
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  DIR* dir = ::opendir("/proc");
  if (!dir) return out;
  while (dirent* e = ::readdir(dir)) {
    if (!std::isdigit(static_cast<unsigned char>(e->d_name[0]))) continue;
    std::string path = std::string("/proc/") + e->d_name + "/stat";
    FILE* f = std::fopen(path.c_str(), "re");
    if (!f) continue;
    char buf[1024];
    size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    const char* rp = std::strrchr(buf, ')');  // the command name may hold spaces
    if (!rp) continue;
    // Fields after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt
    // cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime vsize rss
    char state;
    long ppid, pgrp, rss;
    unsigned long long skip;
    if (std::sscanf(rp + 2, "%c %ld %ld %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
                            "%llu %llu %llu %llu %llu %llu %ld",
                    &state, &ppid, &pgrp, &skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip,
                    &skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip, &skip,
                    &rss) == 22 && rss > 0) {
      out[static_cast<pid_t>(pgrp)] += static_cast<uint64_t>(rss) * page;
    }
  }
  ::closedir(dir);
  return out;
}

}  // namespace kz::util
