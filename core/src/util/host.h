// This host's name, for lock files and metrics targets.
#pragma once
#include <string>

namespace hlm {

// gethostname(2); "localhost" when it fails.
std::string host_name();

}  // namespace hlm
