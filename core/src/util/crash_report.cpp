// Stack on a fatal signal (see crash_report.h). Only async-signal-safe calls in the handler:
// write, backtrace_symbols_fd (backtrace is loaded before, so it allocates nothing then),
// signal and raise.
#include "util/crash_report.h"

#include <execinfo.h>
#include <unistd.h>

#include <csignal>
#include <initializer_list>

namespace hlm {
namespace {

void report_and_die(int signal_number) {
  char line[] = "fatal signal 00; stack:\n";  // the number by hand: no printf in a handler
  line[13] = char('0' + signal_number / 10 % 10);
  line[14] = char('0' + signal_number % 10);
  (void)!write(STDERR_FILENO, line, sizeof(line) - 1);
  void* frames[64];
  backtrace_symbols_fd(frames, backtrace(frames, 64), STDERR_FILENO);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

}  // namespace

void install_crash_report() {
  void* warm_up[1];
  backtrace(warm_up, 1);  // loads libgcc now, not inside the handler
  for (int s : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE}) std::signal(s, report_and_die);
}

}  // namespace hlm
