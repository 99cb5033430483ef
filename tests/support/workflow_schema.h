// A small workflow schema (stage kinds and plugins shaped like hlm's own), without GoogleTest:
// the workflow tests and the workflow fuzz targets load workflows against it.
#pragma once
#include <vector>

#include "workflow/workflow.h"

namespace hlm::workflow::test_support {

inline const hlm_param_decl kWfdbParams[] = {
    {"dir", "string", nullptr, "folder holding the records"},
    {"records", "list", "[]", "record names; empty means all"},
    {"sample_rate_hz", "float", "360", "resample to this rate"},
};
inline const hlm_param_decl kBeatVqParams[] = {
    {"codes", "int", "64", "codebook size"},
    {"window_samples", "int", "256", "samples per beat window"},
};
inline const hlm_param_decl kGptParams[] = {
    {"layers", "int", "2", "transformer layers"},
    {"d_model", "int", "64", "model width"},
};

inline std::vector<ParamSpec> specs_of(const hlm_param_decl* decls, size_t count) {
  std::vector<ParamSpec> out;
  for (size_t i = 0; i < count; ++i) out.push_back(from_decl(decls[i]));
  return out;
}

inline Schema test_schema() {
  Schema schema;
  schema.add_plugin("dataset", "wfdb", specs_of(kWfdbParams, 3));
  schema.add_plugin("dataset", "csv", {{"path", "string", "", "CSV file", true}});
  schema.add_plugin("tokenizer", "beat-vq", specs_of(kBeatVqParams, 2));
  schema.add_plugin("model", "gpt", specs_of(kGptParams, 2));
  schema.add_stage_kind("tokenize",
                        {{"dataset", "plugin:dataset", "", "dataset plugin block", true},
                         {"tokenizer", "plugin:tokenizer", "", "tokenizer plugin block", true},
                         {"threads", "int", "1", "worker threads", false}});
  schema.add_stage_kind("pretrain",
                        {{"model", "plugin:model", R"({"plugin": "gpt"})", "model block", false},
                         {"window", "int", "256", "context in tokens", false},
                         {"lr", "float", "0.001", "learning rate", false},
                         {"threads", "int", "1", "threads per rank", false},
                         {"world_size", "int", "1", "ranks", false},
                         {"causal", "bool", "true", "GPT objective", false},
                         {"precision", "choice:fp32|bf16", "\"fp32\"", "arithmetic", false},
                         {"tags", "map", "{}", "free-form labels", false},
                         {"resume_from", "string", "null", "checkpoint", false}});
  schema.add_stage_kind("evaluate",
                        {{"datasets", "list:plugin:dataset", "", "labelled datasets", true}});
  return schema;
}

}  // namespace hlm::workflow::test_support
