#include "train/trainer_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "worker/worker_client.h"

namespace kz::train {
namespace {
using Clock = std::chrono::steady_clock;
using nlohmann::json;

// Waits at most this long for a killed process's group to be reaped and its pipes drained.
constexpr int kReapWaitMs = 5000;
}  // namespace

const char* TrainerFailureName(TrainerFailure f) {
  switch (f) {
    case TrainerFailure::kNone: return "none";
    case TrainerFailure::kNotRunning: return "not_running";
    case TrainerFailure::kSpawn: return "spawn";
    case TrainerFailure::kCrashed: return "crashed";
    case TrainerFailure::kTimeout: return "timeout";
    case TrainerFailure::kProtocol: return "protocol";
    case TrainerFailure::kBackend: return "backend";
  }
  return "?";
}

TrainerConfig DefaultTrainerConfig(const std::string& exe) {
  worker::WorkerConfig w = worker::LocateWorker(exe);
  TrainerConfig c;
  c.python = w.python;
  c.package_dir = w.package_dir;
  return c;
}

TrainerBackend::TrainerBackend(TrainerConfig config) : config_(std::move(config)) {}

TrainerBackend::~TrainerBackend() {
  if (!running()) return;
  TrainerError ignored;
  config_.timeouts.shutdown_s = std::min(config_.timeouts.shutdown_s, 5.0);
  if (!Shutdown(&ignored)) Kill();
}

bool TrainerBackend::Fail(TrainerFailure failure, std::string message, TrainerError* err) {
  if (err) *err = TrainerError{failure, "", std::move(message), ""};
  return false;
}

void TrainerBackend::Kill() {
  if (!set_) return;
  set_->KillAll();
  set_.reset();
}

bool TrainerBackend::Ended(util::ProcessResult result, TrainerFailure failure, const std::string& what,
                           TrainerError* err) {
  set_.reset();
  if (err) {
    err->failure = failure;
    err->kind.clear();
    err->message = "trainer backend " + what + "; it " + worker::DescribeEnd(result) +
                   " (restart it: Restart() or Recover())";
    err->stderr_tail = std::move(result.stderr_tail);
  }
  return false;
}

bool TrainerBackend::Start(HelloInfo* hello, TrainerError* err) {
  if (running()) return Fail(TrainerFailure::kProtocol, "trainer backend already running", err);
  util::ProcessSpec spec;
  spec.argv = config_.argv.empty() ? std::vector<std::string>{config_.python, "-m", "kz_train"} : config_.argv;
  std::string pythonpath = config_.package_dir;
  if (const char* p = std::getenv("PYTHONPATH"); p && *p) pythonpath += (pythonpath.empty() ? "" : ":") + std::string(p);
  if (!pythonpath.empty()) spec.env.emplace_back("PYTHONPATH", pythonpath);
  spec.env.emplace_back("PYTHONUNBUFFERED", "1");
  spec.env.emplace_back("PYTHONDONTWRITEBYTECODE", "1");
  for (const auto& kv : config_.env) spec.env.push_back(kv);
  spec.channel = spec.stdio_channel = spec.stream_channel = true;
  spec.tail_bytes = config_.stderr_tail_bytes;
  set_ = std::make_unique<util::ProcessSet>();
  id_ = set_->Start(std::move(spec));
  decoder_ = util::FrameDecoder();
  json reply;
  if (!Call("hello", json::object(), config_.timeouts.start_s, &reply, err)) {
    if (err && err->failure == TrainerFailure::kCrashed && err->message.find("could not be started") != std::string::npos)
      err->failure = TrainerFailure::kSpawn;
    Kill();
    return false;
  }
  HelloInfo info;
  try {
    info = HelloFromJson(reply);
  } catch (const json::exception& e) {
    Kill();
    return Fail(TrainerFailure::kProtocol, std::string("hello reply: ") + e.what(), err);
  }
  if (info.protocol != kTrainProtocolVersion) {
    Kill();
    return Fail(TrainerFailure::kProtocol,
                "trainer backend speaks protocol " + std::to_string(info.protocol) + ", this kz speaks " +
                    std::to_string(kTrainProtocolVersion),
                err);
  }
  if (hello) *hello = std::move(info);
  return true;
}

bool TrainerBackend::Restart(HelloInfo* hello, TrainerError* err) {
  Kill();
  return Start(hello, err);
}

bool TrainerBackend::Recover(LoadResult* out, TrainerError* err) {
  if (!last_load_) return Fail(TrainerFailure::kNotRunning, "nothing to recover: no model was loaded", err);
  LoadRequest req = *last_load_;
  if (!last_checkpoint_.empty()) req.model = last_checkpoint_;
  HelloInfo hello;
  return Restart(&hello, err) && Load(req, out, err);
}

bool TrainerBackend::Call(std::string_view op, json fields, double timeout_s, json* reply, TrainerError* err) {
  if (!running()) return Fail(TrainerFailure::kNotRunning, "trainer backend is not running", err);
  const int64_t id = ++next_request_;
  fields["protocol"] = kTrainProtocolVersion;
  fields["op"] = op;
  fields["id"] = id;
  std::string what = "op " + std::string(op);
  std::string frame;
  try {
    frame = util::EncodeFrame(fields.dump());
  } catch (const json::exception& e) {  // invalid UTF-8 in a prompt, say
    return Fail(TrainerFailure::kBackend, what + ": request not encodable: " + e.what(), err);
  }
  if (frame.size() > util::kMaxFrameBytes + 4)
    return Fail(TrainerFailure::kBackend, what + ": request of " + std::to_string(frame.size()) +
                                              " bytes is over the frame limit; send fewer samples", err);
  set_->Send(id_, frame);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    std::vector<std::pair<util::ProcessSet::Id, util::ProcessResult>> done;
    if (left > 0) done = set_->WaitAny(static_cast<int>(std::min<int64_t>(left, 1000)));
    std::string bytes = set_->TakeChannel(id_);
    if (!done.empty()) bytes += done.front().second.channel_data;
    decoder_.Feed(bytes.data(), bytes.size());
    std::string payload;
    if (decoder_.failed() || decoder_.Pop(&payload)) {
      std::string problem;
      json r;
      if (decoder_.failed()) {
        problem = "sent a bad frame: " + decoder_.error();
      } else {
        r = json::parse(payload, nullptr, false);
        if (r.is_discarded() || !r.is_object()) problem = "sent a reply that is not a JSON object";
        else if (!r.contains("id") || r["id"] != id)
          problem = "answered request " + r.value("id", json()).dump() + " while " + std::to_string(id) + " was due";
        else if (!r.contains("ok") || !r["ok"].is_boolean()) problem = "sent a reply without \"ok\"";
      }
      if (!problem.empty()) {
        if (done.empty()) {
          set_->Expire(id_);
          done = set_->WaitAny(kReapWaitMs);
        }
        if (done.empty()) {
          Kill();
          return Fail(TrainerFailure::kProtocol, "trainer backend " + problem + " (" + what + "); killed", err);
        }
        Ended(std::move(done.front().second), TrainerFailure::kProtocol, problem + " (" + what + ")", err);
        if (err) err->message = "trainer backend " + problem + " (" + what + "); it was killed (restart it)";
        return false;
      }
      if (!done.empty()) set_.reset();  // answered, then exited (shutdown)
      if (!r["ok"].get<bool>()) {
        const json& e = r.value("error", json::object());
        if (err) {
          *err = TrainerError{TrainerFailure::kBackend, e.is_object() ? e.value("kind", "") : "",
                              e.is_object() ? e.value("message", "") : e.dump(), ""};
          if (e.is_object() && e.contains("traceback") && e["traceback"].is_string())
            err->stderr_tail = e["traceback"].get<std::string>();
          err->message = what + ": " + err->kind + ": " + err->message;
        }
        return false;
      }
      if (reply) *reply = std::move(r);
      return true;
    }
    if (!done.empty())
      return Ended(std::move(done.front().second), TrainerFailure::kCrashed, "ended during " + what, err);
    if (Clock::now() >= deadline) {
      set_->Expire(id_);
      done = set_->WaitAny(kReapWaitMs);
      char secs[32];
      std::snprintf(secs, sizeof secs, "%.1f", timeout_s);
      std::string hung = "did not answer " + what + " within " + secs + " s";
      if (done.empty()) {
        Kill();
        return Fail(TrainerFailure::kTimeout, "trainer backend " + hung + "; killed", err);
      }
      return Ended(std::move(done.front().second), TrainerFailure::kTimeout, hung, err);
    }
  }
}

namespace {
// Decodes a typed reply; a field of the wrong type is a protocol error (the process lives on:
// it answered in step, only this reply is unusable).
template <typename Out, typename F>
bool Decode(const json& reply, F from_json, Out* out, std::string_view op, TrainerError* err) {
  try {
    Out r = from_json(reply);
    if (out) *out = std::move(r);
    return true;
  } catch (const json::exception& e) {
    if (err) *err = TrainerError{TrainerFailure::kProtocol, "", "reply to " + std::string(op) + ": " + e.what(), ""};
    return false;
  }
}

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
}  // namespace

bool TrainerBackend::Load(const LoadRequest& req, LoadResult* out, TrainerError* err) {
  json reply;
  if (!Call("load", ToJson(req), config_.timeouts.load_s, &reply, err)) return false;
  if (!Decode(reply, LoadFromJson, out, "load", err)) return false;
  last_load_ = req;
  if (req.model != last_checkpoint_) last_checkpoint_.clear();  // a new model: older checkpoints are not its
  return true;
}

bool TrainerBackend::Generate(const GenerateRequest& req, GenerateResult* out, TrainerError* err) {
  json reply;
  return Call("generate", ToJson(req), config_.timeouts.generate_s, &reply, err) &&
         Decode(reply, GenerateFromJson, out, "generate", err);
}

bool TrainerBackend::Score(const ScoreRequest& req, ScoreResult* out, TrainerError* err) {
  json reply;
  return Call("score", ToJson(req), config_.timeouts.score_s, &reply, err) &&
         Decode(reply, ScoreFromJson, out, "score", err);
}

template <typename Out, typename F>
bool TrainerBackend::TimedStep(json fields, std::string_view op, double timeout_s, F from_json, Out* out,
                               TrainerError* err) {
  json reply;
  auto t0 = Clock::now();
  if (!Call(op, std::move(fields), timeout_s, &reply, err)) return false;
  double wall = Since(t0);
  if (!Decode(reply, from_json, out, op, err)) return false;
  if (out) out->wall_s = wall;
  return true;
}

bool TrainerBackend::TrainStep(const TrainStepRequest& req, TrainStepResult* out, TrainerError* err) {
  return TimedStep(ToJson(req), "train_step", config_.timeouts.train_step_s, TrainStepFromJson, out, err);
}

bool TrainerBackend::Sft(const SftRequest& req, SftResult* out, TrainerError* err) {
  return TimedStep(ToJson(req), "sft", config_.timeouts.sft_s, SftFromJson, out, err);
}

bool TrainerBackend::Save(const SaveRequest& req, SaveResult* out, TrainerError* err) {
  json reply;
  SaveResult r;
  if (!Call("save", ToJson(req), config_.timeouts.save_s, &reply, err) ||
      !Decode(reply, SaveFromJson, &r, "save", err))
    return false;
  last_checkpoint_ = r.path.empty() ? req.path : r.path;
  if (out) *out = std::move(r);
  return true;
}

bool TrainerBackend::Shutdown(TrainerError* err) {
  if (!running()) return true;
  json reply;
  if (!Call("shutdown", json::object(), config_.timeouts.shutdown_s, &reply, err)) {
    Kill();
    return false;
  }
  if (set_) {  // answered; now wait for the exit
    auto done = set_->WaitAny(static_cast<int>(config_.timeouts.shutdown_s * 1000));
    if (done.empty()) {
      Kill();
      return Fail(TrainerFailure::kTimeout, "trainer backend did not exit after shutdown; killed", err);
    }
    set_.reset();
  }
  return true;
}

}  // namespace kz::train
