// Verifier::VerifyAll: the samples staged at once, then run one at a time with the next run
// child started ahead, or (options.gpu_concurrency > 1) that many at once through the gate.
#include <atomic>
#include <mutex>
#include <thread>

#include "util/log.h"
#include "verify/verifier.h"

namespace kz::verify {
using nlohmann::json;

std::vector<json> Verifier::VerifyAll(const std::vector<Sample>& samples, const VerdictCallback& on_verdict) {
  // Each sample's run child is started ahead (torch imported, as a kz serve slot does):
  // the first while the samples are staged, each next one while the previous one runs.
  Prestarted next;
  bool may_run = gpu_ || std::any_of(samples.begin(), samples.end(), [](const Sample& s) {
    return s.self_check || s.backend != "cuda";  // without a GPU a CUDA sample never runs
  });
  if (may_run && !samples.empty() && !Cancelled() && !gate_) next = Prestart(worker_, options_, gpu_, launcher_);
  std::vector<Work> work = Stage(samples);
  if (gate_) return VerifyConcurrently(work, on_verdict);
  std::vector<json> out;
  auto next_run = [&](size_t from) {  // the next sample that will need a run child
    for (size_t k = from; k < work.size(); ++k)
      if (NeedsRun(work[k])) return k;
    return work.size();
  };
  size_t upcoming = next_run(0);
  for (size_t i = 0; i < work.size(); ++i) {
    Prestarted mine;
    if (i == upcoming) {
      mine = std::move(next);
      upcoming = next_run(i + 1);
      if (upcoming < work.size()) next = Prestart(worker_, options_, gpu_, launcher_);
    }
    out.push_back(Finish(work[i], std::nullopt, mine.set ? &mine : nullptr));
    if (on_verdict) on_verdict(i, out.back());
  }
  return out;
}

std::vector<json> Verifier::VerifyConcurrently(std::vector<Work>& work, const VerdictCallback& on_verdict) {
  std::vector<json> out(work.size());
  size_t runs = size_t(std::count_if(work.begin(), work.end(), [&](const Work& w) { return NeedsRun(w); }));
  int threads = int(std::max<size_t>(1, std::min<size_t>(size_t(options_.gpu_concurrency), runs)));
  std::atomic<size_t> cursor{0};
  std::mutex callback_mu;
  auto worker = [&] {
    Prestarted next;
    if (runs > 0 && !Cancelled()) next = Prestart(worker_, options_, gpu_, launcher_);
    for (size_t i; (i = cursor.fetch_add(1)) < work.size();) {
      Prestarted mine;
      if (NeedsRun(work[i])) {
        mine = std::move(next);
        if (cursor.load() < work.size() && !Cancelled()) next = Prestart(worker_, options_, gpu_, launcher_);
      }
      out[i] = Finish(work[i], std::nullopt, mine.set ? &mine : nullptr);
      if (on_verdict) {
        std::lock_guard<std::mutex> lock(callback_mu);
        on_verdict(i, out[i]);
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  util::LogInfo("verify: " + std::to_string(runs) + " runs, " + std::to_string(threads) + " children at a time, up to " +
                std::to_string(gate_->max_shared_seen()) + " at once in the gate's shared stages");
  return out;
}

}  // namespace kz::verify
