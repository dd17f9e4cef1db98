#include "cli/optimize_experience.h"

#include <iostream>
#include <map>

namespace kz::cli {
using json = nlohmann::json;

namespace {
bool ReadBatch(const json& r, size_t n, optimize::EmbedBatch* out, std::string* err) {
  if (!r["model"].is_string() || !r["dim"].is_number_integer() || !r["vectors"].is_array())
    return *err = "worker op embed: a result without model, dim and vectors", false;
  out->model = r["model"];
  int dim = r["dim"];
  const json& vs = r["vectors"];
  if (vs.size() != n || dim < 1)
    return *err = "worker op embed: " + std::to_string(vs.size()) + " vectors of dimension " + std::to_string(dim) +
                  " for " + std::to_string(n) + " texts",
           false;
  out->vectors.clear();
  for (const auto& v : vs) {
    if (!v.is_array() || v.size() != size_t(dim))
      return *err = "worker op embed: a vector that is not " + std::to_string(dim) + " numbers", false;
    std::vector<float> f;
    for (const auto& x : v) {
      if (!x.is_number()) return *err = "worker op embed: a vector value that is not a number", false;
      f.push_back(x.get<float>());
    }
    out->vectors.push_back(std::move(f));
  }
  return true;
}
}  // namespace

bool WorkerEmbedder::Embed(const std::vector<std::string>& texts, optimize::EmbedBatch* out, std::string* err) {
  worker::WorkerCall call;
  call.request = {{"op", "embed"}, {"texts", texts}};
  call.env = {{"CUDA_VISIBLE_DEVICES", ""}, {"TOKENIZERS_PARALLELISM", "false"}};
  call.wall_limit_s = wall_limit_s_;
  worker::WorkerReply reply = worker::RunWorker(config_, call);
  if (!reply.result) return *err = "worker op embed: " + worker::DescribeEnd(reply.process), false;
  const json& r = *reply.result;
  if (!r.value("ok", false)) {
    json e = r.value("error", json::object());
    return *err = e.value("kind", std::string("error")) + ": " + e.value("message", std::string("")), false;
  }
  return ReadBatch(r, texts.size(), out, err);
}

bool MakeExperienceIo(const std::string& library, const std::string& replay_dir, const std::string& run_dir,
                      const worker::WorkerConfig& worker, optimize::OptimizeIo* io, ExperienceParts* parts,
                      std::string* err) {
  if (!replay_dir.empty()) {  // the source run's retrievals, as they were
    auto by_it = std::make_shared<std::map<int, json>>(optimize::RunStore(replay_dir).LoadRetrievals());
    io->retrieve = [by_it](const std::string&, int it) {
      optimize::Retrieval r;
      auto f = by_it->find(it);
      if (f == by_it->end()) return r;
      r.ranking = f->second.value("ranking", std::string("bm25"));
      const json e = f->second.value("experience", json(nullptr));
      if (e.is_object()) r.records.push_back(optimize::ExperienceFromJson(e));
      return r;
    };
    return true;
  }
  if (library == "none" || library.empty()) return true;
  parts->library = optimize::ExperienceLibrary::Open(library, err);
  if (!parts->library) return false;
  parts->model = std::make_unique<WorkerEmbedder>(worker);
  parts->cache = std::make_unique<optimize::CachedEmbedder>(parts->model.get(), run_dir + "/embeddings.jsonl");
  parts->retriever = std::make_unique<optimize::ExperienceRetriever>(parts->library.get(), parts->cache.get());
  auto* l = parts->library.get();
  auto* r = parts->retriever.get();
  auto warn = [](const std::string& e) { std::cerr << "kz optimize: warning: " << e << "\n"; };
  io->retrieve = [r, warn](const std::string& query, int) {
    optimize::Retrieval out;
    std::string e;
    if (!r->Retrieve(query, 3, &out, &e)) warn(e);
    return out;
  };
  io->learn = [r, warn](const optimize::Experience& x, const std::string& key) {
    std::string e, note;
    if (!r->Learn(x, key, &note, &e)) warn(e);
    if (!note.empty()) warn("experience library: " + note);
  };
  io->use = [l, warn](int64_t id, bool won, const std::string& key) {
    std::string e;
    if (!l->RecordUse(id, won, key, &e)) warn(e);
  };
  return true;
}

}  // namespace kz::cli
