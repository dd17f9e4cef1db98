#include "scoring/remote.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <thread>

namespace kz::scoring {
using nlohmann::json;
using Clock = std::chrono::steady_clock;

json ServerErrorVerdict(const std::string& message) {
  return {{"status", "server_error"}, {"reason", message}, {"error", {{"kind", "server"}, {"message", message}}}};
}

RemoteVerifier::RemoteVerifier(RemoteOptions options)
    : o_(std::move(options)), http_([&] {
        HttpUrl u;
        std::string err;
        ParseHttpUrl(o_.url, &u, &err);  // validated by the caller
        return u;
      }(), o_.request_timeout_s) {}

namespace {
// The "error" text of a JSON error body, else the start of the body.
std::string ErrorText(const HttpResponse& r) {
  json j = json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_string()) return j["error"].get<std::string>();
  return r.body.substr(0, 200);
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

void Sleep(double s) { std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<long long>(s * 1000))); }
}  // namespace

bool RemoteVerifier::Check(json* health, std::string* err) {
  HttpResponse r;
  if (!http_.Request("GET", "/healthz", "", &r, err)) return *err = "cannot reach kz serve at " + o_.url + ": " + *err, false;
  *health = json::parse(r.body, nullptr, false);
  if (r.status != 200 || !health->is_object() || !health->contains("ok"))
    return *err = o_.url + "/healthz answered HTTP " + std::to_string(r.status) + " (is it kz serve?)", false;
  return true;
}

bool RemoteVerifier::VerifyAll(const std::vector<RemoteSample>& samples,
                               const std::function<void(size_t, const RemoteOutcome&)>& on_done, std::string* err) {
  struct Job {
    size_t index;
    std::string id;
    bool deduplicated;
  };
  std::deque<size_t> todo;
  for (size_t i = 0; i < samples.size(); ++i) todo.push_back(i);
  std::deque<Job> inflight;  // in submission order
  const std::vector<std::pair<std::string, std::string>> headers = {{"X-KZ-Client", o_.client}};
  size_t batch = static_cast<size_t>(std::max(1, o_.batch)), window = static_cast<size_t>(std::max(1, o_.window));
  auto next_submit = Clock::now(), last_ok = Clock::now();
  double backoff = 0.5;
  bool in_outage = false;
  auto note = [&](const std::string& s) {
    if (o_.note) o_.note(s);
  };
  auto fail_sample = [&](size_t index, const std::string& message, const std::string& id = "") {
    on_done(index, {ServerErrorVerdict(message), id, false, true});
  };
  auto reached = [&] {
    if (in_outage) note("kz bench: the server answers again");
    last_ok = Clock::now(), backoff = 0.5, in_outage = false;
  };
  // A transport failure (or 503): back off; false once the outage is over outage_s.
  auto unreachable = [&](const std::string& why) {
    if (Seconds(Clock::now() - last_ok) > o_.outage_s) {
      *err = "kz serve at " + o_.url + " unreachable for over " + std::to_string(static_cast<int>(o_.outage_s)) +
             " s (" + why + ")";
      return false;
    }
    if (!in_outage) note("kz bench: server problem (" + why + "); retrying for up to " +
                         std::to_string(static_cast<int>(o_.outage_s)) + " s");
    in_outage = true;
    Sleep(backoff);
    backoff = std::min(backoff * 2, 10.0);
    return true;
  };

  for (int round = 0; !todo.empty() || !inflight.empty(); ++round) {
    bool progressed = false;
    if (!todo.empty() && inflight.size() < window && Clock::now() >= next_submit) {
      size_t n = std::min({batch, todo.size(), window - inflight.size()});
      json list = json::array();
      for (size_t k = 0; k < n; ++k) {
        const RemoteSample& s = samples[todo[k]];
        json one = {{"task", *s.task_source}, {"candidate", s.candidate}, {"options", o_.job_options}};
        if (!s.backend.empty()) one["backend"] = s.backend;
        list.push_back(std::move(one));
      }
      json body = {{"samples", std::move(list)}, {"client", o_.client}};
      HttpResponse r;
      std::string e;
      bool sent = http_.Request("POST", "/v1/batch", body.dump(-1, ' ', false, json::error_handler_t::replace), &r,
                                &e, headers);
      if (!sent || r.status == 503) {
        if (!unreachable(sent ? "HTTP 503: " + ErrorText(r) : e)) return false;
        continue;
      }
      reached();
      json reply = r.status == 202 ? json::parse(r.body, nullptr, false) : json();
      if (r.status == 202 && reply.is_object() && reply.contains("jobs") && reply["jobs"].is_array() &&
          reply["jobs"].size() == n) {
        for (size_t k = 0; k < n; ++k) {
          const json& j = reply["jobs"][k];
          if (j.contains("id") && j["id"].is_string())
            inflight.push_back({todo[k], j["id"].get<std::string>(), j.value("deduplicated", false)});
          else
            fail_sample(todo[k], "the server refused the sample: " + j.value("error", std::string("no job id")));
        }
        todo.erase(todo.begin(), todo.begin() + static_cast<long>(n));
        progressed = true;
      } else if (r.status == 429 || (r.status == 413 && n > 1)) {
        double wait = 0;
        if (r.status == 429) {
          wait = r.headers.count("retry-after") ? std::atof(r.headers["retry-after"].c_str()) : 5;
          wait = std::clamp(wait, 0.1, 30.0);
          note("kz bench: server busy (HTTP 429: " + ErrorText(r) + "); retrying in " +
               std::to_string(static_cast<int>(wait + 0.5)) + " s with batches of " + std::to_string(std::max<size_t>(1, n / 2)));
        }
        batch = std::max<size_t>(1, n / 2);
        next_submit = Clock::now() + std::chrono::milliseconds(static_cast<long long>(wait * 1000));
      } else {
        std::string msg = "POST /v1/batch answered HTTP " + std::to_string(r.status) + ": " + ErrorText(r);
        for (size_t k = 0; k < n; ++k) fail_sample(todo[k], msg);
        todo.erase(todo.begin(), todo.begin() + static_cast<long>(n));
        progressed = true;
      }
    }
    // Poll in submission order: the server runs one client's jobs in that order, so after
    // a few unfinished ones the rest are waiting too (every 10th round looks at all).
    bool full = round % 10 == 0;
    int unfinished = 0;
    for (auto it = inflight.begin(); it != inflight.end() && (full || unfinished < 4);) {
      HttpResponse r;
      std::string e;
      bool sent = http_.Request("GET", "/v1/jobs/" + it->id, "", &r, &e, headers);
      if (!sent || r.status == 503) {
        if (!unreachable(sent ? "HTTP 503: " + ErrorText(r) : e)) return false;
        break;
      }
      reached();
      json job = r.status == 200 ? json::parse(r.body, nullptr, false) : json();
      std::string state = job.is_object() ? job.value("state", "") : "";
      if (state == "queued" || state == "running") {
        ++unfinished, ++it;
        continue;
      }
      if (state == "done" && job.contains("verdict") && job["verdict"].is_object())
        on_done(it->index, {job["verdict"], it->id, it->deduplicated, false});
      else if (state == "failed")
        fail_sample(it->index, "job " + it->id + " failed on the server: " + job.value("error", std::string("?")), it->id);
      else if (state == "cancelled")
        fail_sample(it->index, "job " + it->id + " was cancelled on the server (while " +
                                   job.value("cancelled_while", std::string("queued")) + ")", it->id);
      else if (r.status == 404)
        fail_sample(it->index, "job " + it->id + " no longer exists on the server", it->id);
      else
        fail_sample(it->index, "GET /v1/jobs/" + it->id + " answered HTTP " + std::to_string(r.status) + ": " +
                                   ErrorText(r), it->id);
      it = inflight.erase(it);
      progressed = true;
    }
    if (!progressed && (!inflight.empty() || !todo.empty())) {
      double until_submit = Seconds(next_submit - Clock::now());
      Sleep(inflight.empty() ? std::max(0.05, until_submit) : o_.poll_s);
    }
  }
  return true;
}

}  // namespace kz::scoring
