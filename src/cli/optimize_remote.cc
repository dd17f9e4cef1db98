#include "cli/optimize_remote.h"

#include <memory>

#include "scoring/remote.h"
#include "util/fs.h"

namespace kz::cli {
using json = nlohmann::json;

bool MakeRemoteVerify(const std::string& url, double timing_ci, optimize::VerifyOne* out, std::string* err) {
  scoring::RemoteOptions base;
  base.url = url;
  base.client = "kz-optimize";
  base.batch = 1;
  base.window = 1;
  json health;
  if (!scoring::RemoteVerifier(base).Check(&health, err)) return false;
  *out = [base, timing_ci](const verify::Sample& s, double timeout_s, double) {
    std::string task, candidate, e;
    if (!util::ReadFile(s.task_path, &task, &e) || (!s.self_check && !util::ReadFile(s.candidate_path, &candidate, &e)))
      return scoring::ServerErrorVerdict("cannot read the sample: " + e);
    scoring::RemoteOptions o = base;
    o.job_options = {{"timing_ci", timing_ci}};
    if (s.self_check) {
      o.job_options["self_check"] = true;
      candidate = task;
    }
    // The server's queue may hold the job a while: wait for it as long as a verification may
    // take, and no less than the client's usual outage tolerance.
    o.outage_s = std::max(o.outage_s, timeout_s);
    json verdict = scoring::ServerErrorVerdict("the server returned no verdict");
    std::string verr;
    scoring::RemoteVerifier rv(o);
    if (!rv.VerifyAll(
            {{&task, candidate, s.backend}}, [&](size_t, const scoring::RemoteOutcome& r) { verdict = r.verdict; },
            &verr))
      verdict = scoring::ServerErrorVerdict(verr);
    return verdict;
  };
  return true;
}

}  // namespace kz::cli
