// This host's name (see host.h).
#include "util/host.h"

#include <unistd.h>

namespace hlm {

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof(name) - 1) == 0 ? name : "localhost";
}

}  // namespace hlm
