// Stop signals: SIGTERM or SIGUSR1 (SLURM's warning before the time limit) set a flag that the
// trainer and the launchers poll (see distributed/preemption.h for what they do with it).
//
// The signals are blocked in every thread started from main on and taken by one thread that
// does nothing but wait for them. A handler run on an ordinary thread is not safe here: oneDNN's
// JIT GEMM kernels (Debian 12's libdnnl 2.7, which hlm::gemm and LibTorch 1.13's matmuls ran on)
// point the stack register into the heap while they run, so the kernel writes a signal frame
// there and corrupts the heap (oneDNN issue #4845, fixed upstream by PR #4855). A stop signal
// arriving mid-GEMM aborted a rank about once in ten stops; a rank sent thousands of signals
// while training now runs on (tests/util/test_stop_signal.cpp). Any library's kernel that does
// the same is covered alike.
#pragma once

namespace hlm {

// Call first in main, before it starts any thread: threads inherit the blocked mask.
void install_stop_handlers();
// True once this process got a stop signal.
bool stop_signal_received();
// true: a stop signal ends the process at once with 128 + the signal (143 for SIGTERM), for
// commands with nothing to save (validate, status, plugins); false (the default): it sets the
// flag that stages and ranks poll to checkpoint and stop.
void set_stop_ends_process(bool ends);
// In a forked child before exec: the program it runs gets the usual signal mask back (a
// blocked SIGTERM would survive exec and make srun or a rank deaf to stops).
// Async-signal-safe.
void restore_signal_mask_in_child();

}  // namespace hlm
