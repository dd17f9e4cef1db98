// Retrieval by embeddings (issue 21): the vector BLOB codec, cosine ranking and reciprocal rank
// fusion on fixed vectors, the schema-1 library migrated with no record lost, a BLOB of the
// wrong length named in a clear error, the fused retrieval over a fake model (a record that
// shares no keyword found; BM25 alone with a note when the model is unavailable), and the
// run's embedding cache.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include <sqlite3.h>

#include "optimize/embed_cache.h"
#include "optimize/embedding.h"
#include "optimize/retrieval.h"

namespace kz::optimize {
namespace {

TEST(EmbeddingTest, ABlobRoundTripsAndAWrongLengthIsNamed) {
  std::vector<float> v{1.5f, -0.25f, 3e-8f, 0};
  std::string blob = EncodeVector(v);
  ASSERT_EQ(blob.size(), 16u);
  EXPECT_EQ(uint8_t(blob[3]), 0x3f);  // 1.5f = 0x3fc00000, little-endian
  std::string err;
  auto back = DecodeVector(blob.data(), blob.size(), 4, &err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(*back, v);
  EXPECT_FALSE(DecodeVector(blob.data(), 15, 4, &err));
  EXPECT_EQ(err, "an embedding of 15 bytes labelled with dimension 4 (expected 16 bytes of float32)");
  EXPECT_FALSE(DecodeVector(blob.data(), 16, 384, &err));
  EXPECT_FALSE(DecodeVector(blob.data(), 0, 0, &err));
  std::string nan = EncodeVector({std::numeric_limits<float>::quiet_NaN()});
  EXPECT_FALSE(DecodeVector(nan.data(), 4, 1, &err));
  EXPECT_NE(err.find("non-finite"), std::string::npos);
}

TEST(EmbeddingTest, CosineRanksHighestFirstAndDropsWeakMatches) {
  EXPECT_NEAR(Cosine({1, 0}, {2, 0}), 1, 1e-12);
  EXPECT_NEAR(Cosine({1, 0}, {0, 3}), 0, 1e-12);
  EXPECT_EQ(Cosine({1, 0}, {1, 0, 0}), 0);  // other dimensions: no similarity
  EXPECT_EQ(Cosine({0, 0}, {1, 0}), 0);
  auto r = RankByCosine({1, 0}, {{7, {0.6f, 0.8f}}, {3, {1, 0}}, {5, {0, 1}}, {2, {0.6f, 0.8f}}}, 0.5);
  ASSERT_EQ(r.size(), 3u);  // id 5 (cosine 0) left out
  EXPECT_EQ(r[0].id, 3);
  EXPECT_EQ(r[1].id, 2);  // a tie (0.6): the lower id first
  EXPECT_EQ(r[2].id, 7);
}

TEST(EmbeddingTest, ReciprocalRankFusionWithK60) {
  // BM25: 1, 2, 3; cosine: 3, 4. 3 = 1/63 + 1/61 beats 1 = 1/61; 2 = 1/62 and 4 = 1/62 tie.
  auto f = FuseRrf({{1, 2, 3}, {3, 4}});
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].id, 3);
  EXPECT_NEAR(f[0].score, 1.0 / 63 + 1.0 / 61, 1e-15);
  EXPECT_EQ(f[1].id, 1);
  EXPECT_EQ(f[2].id, 2);
  EXPECT_EQ(f[3].id, 4);
  EXPECT_TRUE(FuseRrf({{}, {}}).empty());
  EXPECT_EQ(FuseRrf({{9}}, 0)[0].score, 1.0);
}

// A model that knows fixed vectors by text; counts its calls; can be switched off.
class FakeModel : public Embedder {
 public:
  std::map<std::string, std::vector<float>> known;
  std::string model = "fake-3d";
  bool available = true;
  int calls = 0;
  size_t texts = 0;
  bool Embed(const std::vector<std::string>& in, EmbedBatch* out, std::string* err) override {
    ++calls;
    texts += in.size();
    if (!available) return *err = "model_unavailable: not installed", false;
    out->model = model;
    out->vectors.clear();
    for (const auto& t : in) out->vectors.push_back(known.count(t) ? known[t] : std::vector<float>{0, 0, 1});
    return true;
  }
};

class RetrievalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kz_retr_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    model_.known = {{"triton relu kernels1", {1, 0, 0}},
                    {"triton relu kernels1 memorybound", {0.95f, 0, 0.3f}},
                    {"cuda hardtanh kernels2", {0.9f, 0.1f, 0}},  // close to relu, no keyword shared
                    {"cuda matmul kernels4", {0, 1, 0}}};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<ExperienceLibrary> Open() {
    std::string err;
    auto lib = ExperienceLibrary::Open((dir_ / "e.db").string(), &err);
    EXPECT_TRUE(lib) << err;
    return lib;
  }
  static Experience Record(const std::string& sig, const std::string& change) {
    Experience e;
    e.signature = sig;
    e.structure = "1 kernel";
    e.change = change;
    e.effect = 1.5;
    e.gpu = "H100";
    return e;
  }
  std::filesystem::path dir_;
  FakeModel model_;
};

TEST_F(RetrievalTest, ASchemaOneLibraryIsMigratedWithNoRecordLost) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "e.db").string().c_str(), &db), SQLITE_OK);
  const char* v1 = R"(
CREATE TABLE experience(id INTEGER PRIMARY KEY, signature TEXT NOT NULL, structure TEXT NOT NULL,
  change TEXT NOT NULL, effect REAL NOT NULL, gpu TEXT NOT NULL, uses INTEGER NOT NULL DEFAULT 0,
  wins INTEGER NOT NULL DEFAULT 0);
CREATE VIRTUAL TABLE experience_fts USING fts5(signature, content='experience', content_rowid='id');
CREATE TABLE experience_keys(key TEXT PRIMARY KEY, record INTEGER NOT NULL);
INSERT INTO experience VALUES(1, 'cuda hardtanh kernels2', 's', 'BLOCK 1024', 1.7, 'H200', 2, 2);
INSERT INTO experience_fts(rowid, signature) VALUES(1, 'cuda hardtanh kernels2');
INSERT INTO experience_keys VALUES('run/c4', 1);
PRAGMA user_version = 1;)";
  ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto lib = Open();
  ASSERT_TRUE(lib);
  Experience e;
  std::string err;
  ASSERT_TRUE(lib->Get(1, &e, &err)) << err;
  EXPECT_EQ(e.change, "BLOCK 1024");
  EXPECT_EQ(e.uses, 2);
  EXPECT_EQ(e.wins, 2);
  std::vector<Experience> found;
  ASSERT_TRUE(lib->Retrieve("hardtanh", 3, &found, &err)) << err;  // the FTS index kept
  EXPECT_EQ(found.size(), 1u);
  int64_t id = 0;
  ASSERT_TRUE(lib->Add(Record("x", "y"), "run/c4", &id, &err));  // the keys kept
  EXPECT_EQ(id, 1);
  ASSERT_TRUE(lib->Unembedded("", &found, &err));
  EXPECT_EQ(found.size(), 1u);  // no embedding yet: a retrieval will compute it
  lib.reset();
  lib = Open();  // opened again: version 2, nothing migrated twice
  ASSERT_TRUE(lib);
}

TEST_F(RetrievalTest, AnEmbeddingSharingNoKeywordIsFoundAndFused) {
  auto lib = Open();
  std::string err, note;
  int64_t id = 0;
  ASSERT_TRUE(lib->Add(Record("cuda hardtanh kernels2", "BLOCK 2048"), "k1", &id, &err));  // stored without one
  CachedEmbedder cache(&model_, (dir_ / "embeddings.jsonl").string());
  ExperienceRetriever r(lib.get(), &cache);
  ASSERT_TRUE(r.Learn(Record("cuda matmul kernels4", "tl.dot"), "k2", &note, &err)) << err;
  EXPECT_TRUE(note.empty()) << note;
  ASSERT_TRUE(r.Learn(Record("triton relu kernels1 memorybound", "num_warps 8"), "k3", &note, &err)) << err;
  Retrieval got;
  ASSERT_TRUE(r.Retrieve("triton relu kernels1", 3, &got, &err)) << err;
  ASSERT_EQ(got.records.size(), 2u);                // matmul: no keyword, cosine 0 < 0.5
  EXPECT_EQ(got.records[0].change, "num_warps 8");  // 1/61 (BM25) + 1/62 (cosine 0.95, second)
  EXPECT_EQ(got.records[1].change, "BLOCK 2048");   // 1/61 (cosine 0.99, first): back-filled, then found
  EXPECT_EQ(got.ranking, "bm25+embedding (reciprocal rank fusion k=60, min cosine 0.50, fake-3d)");
  std::vector<Experience> missing;
  ASSERT_TRUE(lib->Unembedded("fake-3d", &missing, &err));
  EXPECT_TRUE(missing.empty());
  int calls = model_.calls;
  ASSERT_TRUE(r.Retrieve("triton relu kernels1", 3, &got, &err));
  EXPECT_EQ(model_.calls, calls);  // the query's vector came from the run's cache
  CachedEmbedder reopened(&model_, (dir_ / "embeddings.jsonl").string());
  EXPECT_EQ(reopened.size(), cache.size());  // a resumed run reads the cache back
}

TEST_F(RetrievalTest, WithoutTheModelBm25AloneWithANote) {
  auto lib = Open();
  model_.available = false;
  ExperienceRetriever r(lib.get(), &model_);
  std::string err, note;
  ASSERT_TRUE(r.Learn(Record("cuda hardtanh kernels2", "BLOCK 2048"), "k1", &note, &err)) << err;
  EXPECT_EQ(note,
            "record 1 stored without an embedding: embedding model unavailable: model_unavailable: not installed");
  ASSERT_TRUE(r.Learn(Record("triton relu kernels1", "num_warps 8"), "k2", &note, &err)) << err;
  EXPECT_EQ(model_.calls, 1);  // not asked again after it failed
  Retrieval got;
  ASSERT_TRUE(r.Retrieve("triton relu kernels1", 3, &got, &err)) << err;
  ASSERT_EQ(got.records.size(), 1u);
  EXPECT_EQ(got.records[0].change, "num_warps 8");
  EXPECT_EQ(got.ranking, "bm25 only: embedding model unavailable: model_unavailable: not installed");
  ExperienceRetriever none(lib.get(), nullptr);
  ASSERT_TRUE(none.Retrieve("triton relu", 3, &got, &err));
  EXPECT_EQ(got.ranking, "bm25 only: no embedding model");
}

TEST_F(RetrievalTest, ABlobOfTheWrongLengthIsAClearErrorAndBm25Answers) {
  auto lib = Open();
  ExperienceRetriever r(lib.get(), &model_);
  std::string err, note;
  ASSERT_TRUE(r.Learn(Record("triton relu kernels1", "num_warps 8"), "k1", &note, &err)) << err;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "e.db").string().c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "UPDATE experience SET embedding = x'0000803f0000' WHERE id = 1", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  std::vector<std::pair<int64_t, std::vector<float>>> vs;
  EXPECT_FALSE(lib->Embedded("fake-3d", &vs, &err));
  EXPECT_EQ(err,
            "experience library: record 1 (fake-3d): an embedding of 6 bytes labelled with dimension 3 (expected 12 "
            "bytes of float32)");
  Retrieval got;
  ASSERT_TRUE(r.Retrieve("triton relu kernels1", 3, &got, &err)) << err;
  ASSERT_EQ(got.records.size(), 1u);  // BM25 still answers
  EXPECT_EQ(got.ranking, "bm25 only: " + err);
}

TEST_F(RetrievalTest, AModelThatChangedIsReembedded) {
  auto lib = Open();
  std::string err, note;
  {
    ExperienceRetriever r(lib.get(), &model_);
    ASSERT_TRUE(r.Learn(Record("cuda hardtanh kernels2", "BLOCK 2048"), "k1", &note, &err)) << err;
  }
  model_.model = "fake-3d-v2";
  ExperienceRetriever r(lib.get(), &model_);
  Retrieval got;
  ASSERT_TRUE(r.Retrieve("triton relu kernels1", 3, &got, &err)) << err;
  ASSERT_EQ(got.records.size(), 1u);
  EXPECT_EQ(got.records[0].change, "BLOCK 2048");
  std::vector<Experience> missing;
  ASSERT_TRUE(lib->Unembedded("fake-3d-v2", &missing, &err));
  EXPECT_TRUE(missing.empty());
}

}  // namespace
}  // namespace kz::optimize
