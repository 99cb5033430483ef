// A process that aborts or crashes (SIGABRT, SIGSEGV, SIGBUS, SIGFPE) writes its stack to
// stderr before it dies, so a rank that fails on another node leaves more in its log than
// glibc's one line.
#pragma once

namespace hlm {

void install_crash_report();

}  // namespace hlm
