// Parsing the launcher's name (see rank_launcher.h).
#include "launch/rank_launcher.h"

#include "hlm/errors.h"

namespace hlm {

RankLauncher::Kind RankLauncher::parse(const std::string& name) {
  if (name == "local") return Kind::local;
  if (name == "srun") return Kind::srun;
  if (name == "job-file") return Kind::job_file;
  throw ConfigError("launcher '{}' is not one of local, srun, job-file", name);
}

}  // namespace hlm
