// Stage cache keys: a hash of everything that decides a stage's outputs, kept part by part in
// the manifest so a dry run can say which part changed when a stage is not reused.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "plugin/plugin_host.h"
#include "workflow/workflow.h"

namespace hlm {

struct CacheKey {
  std::string key;  // hex hash of `parts`
  // stage: kind@version; build: hlm's own code (build IDs); params: the resolved params;
  // plugins: name@version#build-id of each plugin named; data: what the stage reads from
  // outside the run (dataset fingerprints); needs: the keys of the stages it needs.
  nlohmann::json parts;
};

// What the instance reads from outside the run (its kind's external_inputs; null without one).
// An error it throws (a dataset folder or a foundation run that is not there) is thrown again,
// of the same type, prefixed with where the stage is declared: "FILE:LINE: stage 'ID': ".
nlohmann::json stage_external_inputs(const workflow::StageInstance& instance,
                                     const PluginHost& plugins);

CacheKey stage_cache_key(const workflow::StageInstance& instance,
                         const std::map<std::string, std::string>& needed_keys,
                         const PluginHost& plugins);

// The manifest of the finished stage with this key under runs_dir, if its artifacts are
// still there: "reused from DIR". Otherwise what differs from the newest finished stage of
// the same id in the same workflow ("runs: data changed since DIR"), or that none finished.
std::string cache_reuse_note(const CacheKey& key, const std::string& runs_dir,
                             const std::string& workflow_name, const std::string& instance_id);

}  // namespace hlm
