#include "optimize/experience.h"

#include <algorithm>
#include <cstdio>
#include <regex>
#include <set>

#include <sqlite3.h>

namespace kz::optimize {

namespace {
// Version 2 (issue 21) adds each record's embedding: a float32 BLOB labelled with its model
// and dimension, NULL where none was computed (retrieval by BM25 still finds such a record).
const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS experience(id INTEGER PRIMARY KEY, signature TEXT NOT NULL, structure TEXT NOT NULL,
  change TEXT NOT NULL, effect REAL NOT NULL, gpu TEXT NOT NULL, uses INTEGER NOT NULL DEFAULT 0,
  wins INTEGER NOT NULL DEFAULT 0, embedding BLOB, embedding_model TEXT, embedding_dim INTEGER);
CREATE VIRTUAL TABLE IF NOT EXISTS experience_fts USING fts5(signature, content='experience', content_rowid='id');
CREATE TABLE IF NOT EXISTS experience_keys(key TEXT PRIMARY KEY, record INTEGER NOT NULL);
PRAGMA user_version = 2;
)";
// Version 1 to 2: the three columns, NULL in every existing record; nothing else changes.
const char* kMigrate1To2 = R"(
BEGIN IMMEDIATE;
ALTER TABLE experience ADD COLUMN embedding BLOB;
ALTER TABLE experience ADD COLUMN embedding_model TEXT;
ALTER TABLE experience ADD COLUMN embedding_dim INTEGER;
PRAGMA user_version = 2;
COMMIT;
)";
struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};

bool Prepare(sqlite3* db, const char* sql, Stmt* st, std::string* err) {
  if (sqlite3_prepare_v2(db, sql, -1, &st->s, nullptr) == SQLITE_OK) return true;
  *err = std::string("experience library: ") + sqlite3_errmsg(db);
  return false;
}

void Bind(Stmt& st, int i, const std::string& v) {
  sqlite3_bind_text(st.s, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT);
}

// Prepares `select_where` (a SELECT whose WHERE condition may use ?1 = `model`) over the records
// not demoted (fewer than `min_uses` uses, or a win rate of at least `rate`), ordered by id.
bool PrepareLive(sqlite3* db, const std::string& select_where, const std::string& model, int min_uses, double rate,
                 Stmt* st, std::string* err) {
  std::string sql = select_where + " AND NOT (uses >= ?2 AND wins < ?3 * uses) ORDER BY id";
  if (!Prepare(db, sql.c_str(), st, err)) return false;
  Bind(*st, 1, model);
  sqlite3_bind_int(st->s, 2, min_uses);
  sqlite3_bind_double(st->s, 3, rate);
  return true;
}

// A step loop's end: SQLITE_DONE, or false and the library's message.
bool Done(sqlite3* db, int rc, std::string* err) {
  if (rc == SQLITE_DONE) return true;
  *err = std::string("experience library: ") + sqlite3_errmsg(db);
  return false;
}

std::string Text(sqlite3_stmt* s, int col) {
  auto* t = sqlite3_column_text(s, col);
  return t ? reinterpret_cast<const char*>(t) : "";
}

Experience Row(sqlite3_stmt* s) {
  return {sqlite3_column_int64(s, 0),
          Text(s, 1),
          Text(s, 2),
          Text(s, 3),
          sqlite3_column_double(s, 4),
          Text(s, 5),
          sqlite3_column_int(s, 6),
          sqlite3_column_int(s, 7)};
}
}  // namespace

std::unique_ptr<ExperienceLibrary> ExperienceLibrary::Open(const std::string& path, std::string* err) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    *err = "experience library " + path + ": " + (db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_close(db);
    return nullptr;
  }
  sqlite3_busy_timeout(db, 5000);  // runs on one host may share a library
  std::unique_ptr<ExperienceLibrary> lib(new ExperienceLibrary(db));
  int version = 0;
  {
    Stmt st;
    if (!Prepare(db, "PRAGMA user_version", &st, err)) return nullptr;
    if (sqlite3_step(st.s) == SQLITE_ROW) version = sqlite3_column_int(st.s, 0);
  }
  if (version > kExperienceSchema) {
    *err = "experience library " + path + ": schema version " + std::to_string(version) + " is newer than this kz (" +
           std::to_string(kExperienceSchema) + ")";
    return nullptr;
  }
  if (version == 1 && !lib->Exec(kMigrate1To2, err)) {
    std::string ignored;
    lib->Exec("ROLLBACK", &ignored);
    *err = path + ": migrating schema 1 to 2: " + *err;
    return nullptr;
  }
  if (!lib->Exec(kSchema, err)) {
    *err = path + ": " + *err;
    return nullptr;
  }
  return lib;
}

ExperienceLibrary::~ExperienceLibrary() { sqlite3_close(db_); }

bool ExperienceLibrary::Exec(const std::string& sql, std::string* err) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &msg) == SQLITE_OK) return true;
  *err = std::string("experience library: ") + (msg ? msg : "error");
  sqlite3_free(msg);
  return false;
}

bool ExperienceLibrary::KeySeen(const std::string& key, int64_t* id, std::string* err) {
  Stmt st;
  if (!Prepare(db_, "SELECT record FROM experience_keys WHERE key = ?", &st, err)) return false;
  Bind(st, 1, key);
  if (sqlite3_step(st.s) != SQLITE_ROW) return false;
  if (id) *id = sqlite3_column_int64(st.s, 0);
  return true;
}

bool ExperienceLibrary::Add(const Experience& e, const std::string& key, int64_t* id, std::string* err) {
  err->clear();
  if (!Exec("BEGIN IMMEDIATE", err)) return false;
  if (KeySeen(key, id, err)) return Exec("COMMIT", err);
  auto fail = [&] {
    std::string ignored;
    Exec("ROLLBACK", &ignored);
    return false;
  };
  if (!err->empty()) return fail();
  Stmt ins, fts, k;
  if (!Prepare(db_, "INSERT INTO experience(signature, structure, change, effect, gpu) VALUES(?, ?, ?, ?, ?)", &ins,
               err))
    return fail();
  Bind(ins, 1, e.signature);
  Bind(ins, 2, e.structure);
  Bind(ins, 3, e.change);
  sqlite3_bind_double(ins.s, 4, e.effect);
  Bind(ins, 5, e.gpu);
  if (sqlite3_step(ins.s) != SQLITE_DONE) return *err = sqlite3_errmsg(db_), fail();
  int64_t rid = sqlite3_last_insert_rowid(db_);
  if (!Prepare(db_, "INSERT INTO experience_fts(rowid, signature) VALUES(?, ?)", &fts, err)) return fail();
  sqlite3_bind_int64(fts.s, 1, rid);
  Bind(fts, 2, e.signature);
  if (sqlite3_step(fts.s) != SQLITE_DONE) return *err = sqlite3_errmsg(db_), fail();
  if (!Prepare(db_, "INSERT INTO experience_keys(key, record) VALUES(?, ?)", &k, err)) return fail();
  Bind(k, 1, key);
  sqlite3_bind_int64(k.s, 2, rid);
  if (sqlite3_step(k.s) != SQLITE_DONE) return *err = sqlite3_errmsg(db_), fail();
  if (id) *id = rid;
  return Exec("COMMIT", err);
}

bool ExperienceLibrary::Retrieve(const std::string& query, size_t k, std::vector<Experience>* out, std::string* err) {
  out->clear();
  std::string match;  // each keyword quoted (FTS5 syntax characters are data), any may match
  std::set<std::string> seen;
  static const std::regex kWord(R"([A-Za-z0-9_]+)");
  for (std::sregex_iterator it(query.begin(), query.end(), kWord), end; it != end; ++it)
    if (seen.insert(it->str()).second) match += (match.empty() ? "\"" : " OR \"") + it->str() + "\"";
  if (match.empty()) return true;
  Stmt st;
  if (!Prepare(db_,
               "SELECT e.id, e.signature, e.structure, e.change, e.effect, e.gpu, e.uses, e.wins FROM experience_fts f "
               "JOIN experience e ON e.id = f.rowid WHERE experience_fts MATCH ? AND "
               "NOT (e.uses >= ? AND e.wins < ? * e.uses) ORDER BY bm25(experience_fts), e.effect DESC, e.id LIMIT ?",
               &st, err))
    return false;
  Bind(st, 1, match);
  sqlite3_bind_int(st.s, 2, kMinUses);
  sqlite3_bind_double(st.s, 3, kDemoteRate);
  sqlite3_bind_int64(st.s, 4, int64_t(k));
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) out->push_back(Row(st.s));
  if (rc != SQLITE_DONE) return *err = std::string("experience library: ") + sqlite3_errmsg(db_), false;
  return true;
}

bool ExperienceLibrary::RecordUse(int64_t id, bool won, const std::string& key, std::string* err) {
  err->clear();
  if (!Exec("BEGIN IMMEDIATE", err)) return false;
  if (KeySeen(key, nullptr, err)) return Exec("COMMIT", err);
  Stmt up, k;
  bool ok =
      err->empty() && Prepare(db_, "UPDATE experience SET uses = uses + 1, wins = wins + ? WHERE id = ?", &up, err);
  if (ok) {
    sqlite3_bind_int(up.s, 1, won ? 1 : 0);
    sqlite3_bind_int64(up.s, 2, id);
    ok = sqlite3_step(up.s) == SQLITE_DONE;
  }
  if (ok && (ok = Prepare(db_, "INSERT INTO experience_keys(key, record) VALUES(?, ?)", &k, err))) {
    Bind(k, 1, key);
    sqlite3_bind_int64(k.s, 2, id);
    ok = sqlite3_step(k.s) == SQLITE_DONE;
  }
  if (!ok) {
    if (err->empty()) *err = std::string("experience library: ") + sqlite3_errmsg(db_);
    std::string ignored;
    Exec("ROLLBACK", &ignored);
    return false;
  }
  return Exec("COMMIT", err);
}

bool ExperienceLibrary::SetEmbedding(int64_t id, const Embedding& e, std::string* err) {
  Stmt st;
  if (!Prepare(db_, "UPDATE experience SET embedding = ?, embedding_model = ?, embedding_dim = ? WHERE id = ?", &st,
               err))
    return false;
  std::string blob = EncodeVector(e.vector);
  sqlite3_bind_blob(st.s, 1, blob.data(), int(blob.size()), SQLITE_TRANSIENT);
  Bind(st, 2, e.model);
  sqlite3_bind_int(st.s, 3, int(e.vector.size()));
  sqlite3_bind_int64(st.s, 4, id);
  if (sqlite3_step(st.s) != SQLITE_DONE) return *err = std::string("experience library: ") + sqlite3_errmsg(db_), false;
  return true;
}

bool ExperienceLibrary::Embedded(const std::string& model, std::vector<std::pair<int64_t, std::vector<float>>>* out,
                                 std::string* err) {
  out->clear();
  Stmt st;
  if (!PrepareLive(db_, "SELECT id, embedding, embedding_dim FROM experience WHERE embedding_model = ?1", model,
                   kMinUses, kDemoteRate, &st, err))
    return false;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st.s, 0);
    const void* blob = sqlite3_column_blob(st.s, 1);
    auto v = DecodeVector(blob, size_t(sqlite3_column_bytes(st.s, 1)), sqlite3_column_int(st.s, 2), err);
    if (!v) return *err = "experience library: record " + std::to_string(id) + " (" + model + "): " + *err, false;
    out->emplace_back(id, std::move(*v));
  }
  return Done(db_, rc, err);
}

bool ExperienceLibrary::Unembedded(const std::string& model, std::vector<Experience>* out, std::string* err) {
  out->clear();
  Stmt st;
  if (!PrepareLive(db_,
                   "SELECT id, signature, structure, change, effect, gpu, uses, wins FROM experience WHERE "
                   "(embedding_model IS NULL OR (?1 != '' AND embedding_model != ?1))",
                   model, kMinUses, kDemoteRate, &st, err))
    return false;
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) out->push_back(Row(st.s));
  return Done(db_, rc, err);
}

bool ExperienceLibrary::Get(int64_t id, Experience* out, std::string* err) {
  Stmt st;
  if (!Prepare(db_, "SELECT id, signature, structure, change, effect, gpu, uses, wins FROM experience WHERE id = ?",
               &st, err))
    return false;
  sqlite3_bind_int64(st.s, 1, id);
  if (sqlite3_step(st.s) != SQLITE_ROW) return *err = "experience library: no record " + std::to_string(id), false;
  *out = Row(st.s);
  return true;
}

nlohmann::json ExperienceToJson(const Experience& e) {
  return {{"id", e.id},
          {"signature", e.signature},
          {"structure", e.structure},
          {"change", e.change},
          {"effect", e.effect},
          {"gpu", e.gpu},
          {"uses", e.uses},
          {"wins", e.wins}};
}

Experience ExperienceFromJson(const nlohmann::json& j) {
  return {j.value("id", int64_t(0)), j.value("signature", ""), j.value("structure", ""), j.value("change", ""),
          j.value("effect", 1.0),    j.value("gpu", ""),       j.value("uses", 0),       j.value("wins", 0)};
}

std::string ExperienceText(const Experience& e) {
  char effect[32];
  std::snprintf(effect, sizeof effect, "%.2f", e.effect);
  return "On " + e.gpu + ", from a kernel of this kind (" + e.structure + "), the change that added {" + e.change +
         "} made it " + effect + "x as fast.";
}

std::string SignatureOf(const std::string& task_source, const std::string& backend, const std::vector<int>& cell) {
  std::set<std::string> ops;
  static const std::regex kCall(R"(\b(?:torch|F|nn|torch\.nn\.functional)\.([A-Za-z_][A-Za-z0-9_]*))");
  for (std::sregex_iterator it(task_source.begin(), task_source.end(), kCall), end; it != end; ++it) {
    std::string op = (*it)[1].str();
    std::transform(op.begin(), op.end(), op.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (op != "module" && op != "tensor" && op != "randn" && op != "rand") ops.insert(op);
  }
  std::string sig = backend;
  for (const auto& op : ops) sig += " " + op;
  if (cell.size() >= 3) {
    sig += " kernels" + std::to_string(cell[0]) + " launches" + std::to_string(cell[1]);
    sig += cell[2] == 1 ? " memorybound" : cell[2] == 2 ? " computebound" : "";
  }
  return sig;
}

}  // namespace kz::optimize
