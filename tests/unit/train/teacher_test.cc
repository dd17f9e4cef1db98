// The template teacher (src/train/teacher.h): seeded, reproducible, within its bounds, every
// family and op reachable. Whether its kernels are right is tested through the verifier
// (e2e_train_teacher).
#include "train/teacher.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace kz::train {
namespace {

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(TeacherTest, SameOptionsAndIndexGiveTheSamePair) {
  TeacherOptions o;
  o.seed = 7;
  for (int64_t i = 0; i < 20; ++i) {
    TeacherPair a = MakePair(o, i), b = MakePair(o, i);
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.task_source, b.task_source);
    EXPECT_EQ(a.kernel_source, b.kernel_source);
  }
  TeacherOptions other = o;
  other.seed = 8;
  int differ = 0;
  for (int64_t i = 0; i < 20; ++i) differ += MakePair(o, i).task_source != MakePair(other, i).task_source;
  EXPECT_GE(differ, 18) << "another seed gives another sequence";
}

TEST(TeacherTest, PairsStayWithinTheSizeBoundsAndTheFormat) {
  TeacherOptions o;
  o.max_elements = 4096;
  o.max_rows = 64;
  o.max_cols = 512;
  for (int64_t i = 0; i < 200; ++i) {
    TeacherPair p = MakePair(o, i);
    EXPECT_LE(p.rows * p.cols, o.max_elements) << p.id;
    EXPECT_GE(p.rows, o.min_rows);
    EXPECT_LE(p.rows, o.max_rows);
    EXPECT_GE(p.cols, o.min_cols);
    EXPECT_LE(p.cols, o.max_cols);
    EXPECT_TRUE(Has(p.task_source, "class Model(nn.Module)") && Has(p.task_source, "def get_inputs()") &&
                Has(p.task_source, "def get_init_inputs()") && Has(p.task_source, "M = " + std::to_string(p.rows)))
        << p.task_source;
    EXPECT_TRUE(Has(p.kernel_source, "class ModelNew(nn.Module)") && Has(p.kernel_source, "@triton.jit"))
        << p.kernel_source;
    EXPECT_FALSE(Has(p.kernel_source, "torch.relu") || Has(p.kernel_source, "torch.sigmoid") ||
                 Has(p.kernel_source, "torch.sum") || Has(p.kernel_source, "torch.softmax"))
        << "the kernel does the work itself: " << p.kernel_source;
  }
}

TEST(TeacherTest, EveryFamilyAndOpAppearsAndFamiliesCanBeChosen) {
  TeacherOptions o;
  std::set<std::string> families, ops;
  for (int64_t i = 0; i < 300; ++i) {
    TeacherPair p = MakePair(o, i);
    families.insert(p.family);
    ops.insert(p.ops.begin(), p.ops.end());
  }
  EXPECT_EQ(families.size(), FamilyNames().size());
  for (const char* op : {"relu", "sigmoid", "silu", "tanh", "abs", "square", "leaky_relu", "clamp", "exp_neg_abs",
                         "scale", "shift", "mul", "add", "sum", "amax", "mean", "softmax", "log_softmax"})
    EXPECT_TRUE(ops.count(op)) << op;
  o.families = {"softmax"};
  for (int64_t i = 0; i < 30; ++i) EXPECT_EQ(MakePair(o, i).family, "softmax");
}

TEST(TeacherTest, UnusableOptionsAreRefusedWithTheReason) {
  TeacherOptions o;
  EXPECT_EQ(Validate(o), "");
  o.families = {"matmul"};
  EXPECT_NE(Validate(o).find("unknown family 'matmul'"), std::string::npos);
  o = {};
  o.max_chain = 0;
  EXPECT_NE(Validate(o).find("max_chain"), std::string::npos);
  o = {};
  o.min_rows = 100;
  o.max_rows = 10;
  EXPECT_NE(Validate(o).find("rows"), std::string::npos);
  o = {};
  o.max_elements = 10;
  EXPECT_NE(Validate(o).find("max_elements"), std::string::npos);
  o = {};
  o.max_cols = 1 << 20;
  EXPECT_NE(Validate(o).find("max_cols"), std::string::npos);
}

}  // namespace
}  // namespace kz::train
