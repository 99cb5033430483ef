// Console forms of error messages (see error_text.h).
#include "util/error_text.h"

#include <algorithm>
#include <cctype>
#include <utility>
#include <vector>

namespace hlm {

namespace {

// Where LibTorch's backtrace starts, after the message.
size_t backtrace_start(const std::string& what) {
  size_t at = std::string::npos;
  for (const char* marker : {"Exception raised from", "\nframe #0", "Exception raised in"})
    at = std::min(at, what.find(marker));
  return at;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

}  // namespace

bool has_backtrace(const std::string& what) { return backtrace_start(what) != std::string::npos; }

std::string error_summary(const std::string& what) {
  std::string text = what.substr(0, backtrace_start(what));
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      while (!out.empty() && out.back() == ' ') out.pop_back();
      if (!out.empty() && out.back() != ';') out += "; ";
    } else {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  return out;
}

std::string likely_parameters(const std::string& what) {
  // (words in the message, the parameters that set the sizes involved)
  static const std::vector<std::pair<std::vector<const char*>, const char*>> kKinds = {
      {{"out of memory", "can't allocate", "cannot allocate", "bad_alloc"},
       "batch, the model's context and d_model (lower them)"},
      {{"index out of range", "out of bounds", "index_select"},
       "the model's vocab_size (at least the tokenizer's vocabulary) and context"},
      {{"shape", "size mismatch", "invalid for input of size", "must match the size", "divisible"},
       "the model's d_model, n_head (d_model must be divisible by it), d_ff and context"},
      {{"expected a non-empty", "numel() == 0", "zero", "empty"},
       "batch, the model's context and the stage's records (is there enough data?)"},
  };
  const std::string text = lower(what.substr(0, backtrace_start(what)));
  for (const auto& [words, parameters] : kKinds)
    for (const char* word : words)
      if (text.find(word) != std::string::npos) return parameters;
  return "";
}

}  // namespace hlm
