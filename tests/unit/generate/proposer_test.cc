// Proposer mode: the API-set format, and a run with a fake endpoint (records, files, resume).
#include "generate/proposer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <mutex>
#include <set>

#include "util/fs.h"

namespace kz::generate {
namespace {
namespace fs = std::filesystem;

TEST(ApiSet, ParsesAndRefusesWithAReason) {
  ApiSet s;
  std::string err;
  ASSERT_TRUE(ParseApiSet(R"({"id": "conv_relu-1.a", "apis": ["torch.nn.Conv2d", "torch.relu"], "note": 1})", &s, &err));
  EXPECT_EQ(s.id, "conv_relu-1.a");
  EXPECT_EQ(s.apis, (std::vector<std::string>{"torch.nn.Conv2d", "torch.relu"}));
  for (const char* bad : {"[1]", "{oops", R"({"apis": ["torch.relu"]})", R"({"id": "../x", "apis": ["a"]})",
                          R"({"id": ".hidden", "apis": ["a"]})", R"({"id": "a b", "apis": ["a"]})",
                          R"({"id": "a", "apis": []})", R"({"id": "a", "apis": "torch.relu"})",
                          R"({"id": "a", "apis": ["", "b"]})", R"({"id": "a", "apis": [3]})"}) {
    err.clear();
    EXPECT_FALSE(ParseApiSet(bad, &s, &err)) << bad;
    EXPECT_FALSE(err.empty()) << bad;
  }
}

// Answers with a module using the first API of the prompt; records what it was asked.
class ModuleEndpoint : public Endpoint {
 public:
  Result Complete(const Request& r, const std::atomic<bool>&) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      asked.insert(r.id);
    }
    std::string prompt = r.messages.front().content;
    std::string api = prompt.substr(prompt.find("APIs: ") + 6);
    api = api.substr(0, api.find_first_of(",\n"));
    std::string text = "```python\nclass Model(nn.Module):\n    def forward(self, x):\n        return " + api + "(x)\n```\n";
    Result out;
    out.latency_s = 0.25;
    out.attempts = 1;
    out.outcome = Reply{{{r.id.ends_with("/1") ? "no module today" : text, "stop", 9}}, {20, 9, 0, 9, false}, "m"};
    return out;
  }
  std::string Describe() const override { return "fake"; }
  std::set<std::string> asked;

 private:
  std::mutex mu_;
};

TEST(Proposer, WritesModulesAndResumes) {
  std::string err;
  std::string root = util::MakeTempDir(fs::temp_directory_path().string(), "kz_propose_test_", &err);
  ASSERT_TRUE(util::WriteFileAtomic(root + "/sets.jsonl",
                                    "{\"id\": \"a\", \"apis\": [\"torch.relu\", \"torch.exp\"]}\n\n"
                                    "{\"id\": \"b\", \"apis\": [\"torch.tanh\"]}\nbroken\n{\"id\": \"a\", \"apis\": [\"x\"]}\n",
                                    &err));
  std::vector<ApiSet> sets;
  std::vector<std::string> bad;
  ASSERT_TRUE(ReadApiSets(root + "/sets.jsonl", &sets, &bad, &err));
  ASSERT_EQ(sets.size(), 2u);
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_NE(bad[0].find("sets.jsonl:4: not a JSON object"), std::string::npos);
  EXPECT_NE(bad[1].find("sets.jsonl:5: id \"a\" repeated"), std::string::npos);
  ProposeOptions o;
  o.out_dir = root + "/run";
  o.model = "m";
  o.samples = 2;
  PromptTemplate t{"p.txt", "Set {{set_id}}. APIs: {{api_set}}\n"};
  ModuleEndpoint first;
  std::atomic<bool> cancel{false};
  EXPECT_EQ(RunPropose(o, sets, t, &first, &cancel), 0);
  EXPECT_EQ(first.asked, (std::set<std::string>{"a/0", "a/1", "b/0", "b/1"}));
  LoadedRun run = LoadRun(o.out_dir + "/proposals.jsonl", ProposalFormat());
  ASSERT_EQ(run.records.size(), 4u);
  EXPECT_EQ(run.records.at({"a", 0})["apis"], nlohmann::json({"torch.relu", "torch.exp"}));
  EXPECT_EQ(run.records.at({"b", 1})["reason"], "no_code");
  std::string module;
  ASSERT_TRUE(util::ReadFile(o.out_dir + "/" + ModuleFileName("b", 0), &module, &err));
  EXPECT_NE(module.find("return torch.tanh(x)"), std::string::npos);
  ModuleEndpoint second;  // a rerun asks for nothing
  EXPECT_EQ(RunPropose(o, sets, t, &second, &cancel), 0);
  EXPECT_TRUE(second.asked.empty());
  util::RemoveAll(root);
}

}  // namespace
}  // namespace kz::generate
