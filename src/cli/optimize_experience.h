// `kz optimize`'s experience library side (docs/optimize.md, "Memory"): the library, its
// embedding model — worker op `embed` (docs/worker-protocol.md) in a CPU child
// (CUDA_VISIBLE_DEVICES empty, not sandboxed: it runs only the installed model on kz's own
// signatures), one child per batch, behind the run's embedding cache — and the retrieve /
// learn / use functions of OptimizeIo.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "optimize/embed_cache.h"
#include "optimize/optimize_loop.h"
#include "optimize/retrieval.h"
#include "worker/worker_client.h"

namespace kz::cli {

class WorkerEmbedder : public optimize::Embedder {
 public:
  explicit WorkerEmbedder(worker::WorkerConfig config, double wall_limit_s = 300)
      : config_(std::move(config)), wall_limit_s_(wall_limit_s) {}
  // false and *err: the child failed, the model is not installed (`model_unavailable`), or
  // the answer is malformed (wrong count, ragged or empty vectors).
  bool Embed(const std::vector<std::string>& texts, optimize::EmbedBatch* out, std::string* err) override;

 private:
  worker::WorkerConfig config_;
  double wall_limit_s_;
};

// What the io functions use; lives as long as the run.
struct ExperienceParts {
  std::unique_ptr<optimize::ExperienceLibrary> library;
  std::unique_ptr<optimize::Embedder> model;
  std::unique_ptr<optimize::CachedEmbedder> cache;
  std::unique_ptr<optimize::ExperienceRetriever> retriever;
};

// Live (`replay_dir` ""): the library at `library` ("none" or "": no library, io untouched),
// embeddings through `worker` cached in <run_dir>/embeddings.jsonl; a library or model
// failure mid-run is a warning on stderr, the search goes on. Replay: the source run's
// retrievals.jsonl answers, nothing written. false and *err: the library cannot be opened.
bool MakeExperienceIo(const std::string& library, const std::string& replay_dir, const std::string& run_dir,
                      const worker::WorkerConfig& worker, optimize::OptimizeIo* io, ExperienceParts* parts,
                      std::string* err);

}  // namespace kz::cli
