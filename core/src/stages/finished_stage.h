// A finished stage of another run, named by a param (pretrain's `from`, tokenize's
// `codebook_from`): one checkpoint or codebook, made once (workflows/foundation.yaml) and used
// by many workflows.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace hlm {

// The manifest of the finished stage of kind `kind` at `path`: the stage's folder, or a run
// folder holding one stage of that kind (`path`/<id>/manifest.json). Throws ConfigError
// naming `param`, the path and what to give instead when there is none, it is of another kind,
// or it did not finish. The manifest's "dir" is the stage folder found.
nlohmann::json finished_stage(const std::string& path, const std::string& kind,
                              const std::string& param);

// As above, counting only the stages of that kind whose manifest `chosen` accepts (a run with
// two tokenize stages, one per tokenizer); `which` says what they are chosen by, for the
// errors ("with tokenizer rhythm").
using StageChoice = std::function<bool(const nlohmann::json& manifest)>;
nlohmann::json finished_stage(const std::string& path, const std::string& kind,
                              const std::string& param, const StageChoice& chosen,
                              const std::string& which);

// The run named by `key` in a stage's params (pretrain's `from`, tokenize's `codebook_from`):
// "" when the stage makes its own ("own", or nothing given).
std::string other_run(const nlohmann::json& params, const std::string& key);

// A fingerprint of the file at `path` (its size and modification time) for a stage's cache
// key: a checkpoint or codebook written again changes it. "missing" when there is none.
std::string file_fingerprint(const std::string& path);

}  // namespace hlm
