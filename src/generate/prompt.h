// Prompt templates: text files with `{{name}}` placeholders (prompts/ at the repository
// root holds the shipped ones, versioned in their file names, docs/generate.md). No
// escapes, no logic: a placeholder is `{{` + [A-Za-z0-9_]+ + `}}`; anything else is text.
#pragma once
#include <map>
#include <string>

namespace kz::generate {

struct PromptTemplate {
  std::string name;  // file name, e.g. "coder_cuda_oneshot.v1.txt"
  std::string text;
};

// Replaces every placeholder with its value. False with *err naming the first placeholder
// that has no value (a typo in a user's template must not reach the model).
bool RenderTemplate(const std::string& text, const std::map<std::string, std::string>& values, std::string* out,
                    std::string* err);

// Reads a template file; false with *err when unreadable, not UTF-8 or without any placeholder.
bool LoadTemplate(const std::string& path, PromptTemplate* out, std::string* err);

// The shipped template for a mode: "coder_cuda_oneshot.v1.txt", "coder_triton_oneshot.v1.txt",
// "proposer_module.v1.txt".
std::string DefaultTemplateName(const std::string& backend, bool proposer);

// The prompts/ directory: $KZ_PROMPTS_DIR, else <exe>/../../prompts (build/bin/kz), else the
// source tree's. "" when none exists.
std::string LocatePromptsDir(const std::string& exe);

}  // namespace kz::generate
