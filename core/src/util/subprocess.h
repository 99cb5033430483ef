// Running another program from hlm (sbatch, scontrol, gnuplot) and reading what it printed.
#pragma once
#include <string>
#include <vector>

namespace hlm {

struct CommandOutput {
  int status = -1;     // exit status; 127 when the program could not be started
  std::string output;  // stdout and stderr together
};

// Runs argv (argv[0] looked up on PATH) without a shell and waits for it. The program gets
// the usual signal mask (util/stop_signal.h).
CommandOutput run_program(const std::vector<std::string>& argv);

}  // namespace hlm
