// The multiproc launcher with small shell and Python ranks: each rank's environment, a program
// that cannot start, a port taken between the pick and rank 0's bind retried on another port,
// and ranks that write much while being stopped drained instead of blocking on a full pipe
// until they are killed.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <mutex>

#include "multiproc/launcher.h"

namespace {

TEST(Launcher, EachRankGetsItsVariablesTheOptionsAndThisProcesssEnvironment) {
  setenv("HLM_TEST_INHERITED", "kept", 1);
  hlm::LaunchOptions o;
  o.nproc = 2;
  o.env = {{"HLM_TEST_ADDED", "added"}, {"HLM_TEST_INHERITED", "replaced"}};
  o.argv = {"/bin/sh", "-c",
            "echo $RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR "
            "$HLM_TEST_ADDED $HLM_TEST_INHERITED ${PATH:+path}"};
  std::mutex mutex;
  std::map<int, std::string> lines;
  o.on_line = [&](int rank, const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex);
    lines[rank] = line;
  };
  ASSERT_TRUE(hlm::launch_ranks(o).ok());
  EXPECT_EQ(lines[0], "0 0 2 2 127.0.0.1 added replaced path");
  EXPECT_EQ(lines[1], "1 1 2 2 127.0.0.1 added replaced path");
  unsetenv("HLM_TEST_INHERITED");
}

TEST(Launcher, AProgramThatCannotStartFailsWith127AndSaysWhich) {
  hlm::LaunchOptions o;
  o.argv = {"hlm-no-such-program"};
  std::string said;
  o.on_line = [&](int, const std::string& line) { said += line; };
  const hlm::LaunchResult r = hlm::launch_ranks(o);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.exit_codes.at(0), 127);
  EXPECT_EQ(said, "cannot start hlm-no-such-program");
}

// A listening socket on 127.0.0.1 holding a port for the test's lifetime.
struct HeldPort {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int port = 0;
  HeldPort() {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    listen(fd, 1);
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
  }
  ~HeldPort() { close(fd); }
};

TEST(Launcher, RetriesOnAnotherPortWhenRankZeroFindsItsPortTaken) {
  const HeldPort taken;
  std::vector<int> picked;
  hlm::LaunchOptions o;
  o.nproc = 2;
  // Rank 0 binds MASTER_PORT as a store would, exiting 98 when it is taken.
  o.argv = {"/usr/bin/python3", "-c",
            "import os, socket, sys\n"
            "if os.environ['RANK'] == '0':\n"
            "    s = socket.socket()\n"
            "    try: s.bind(('127.0.0.1', int(os.environ['MASTER_PORT'])))\n"
            "    except OSError: sys.exit(98)\n"};
  o.free_port = [&] {
    picked.push_back(picked.empty() ? taken.port : hlm::free_tcp_port());
    return picked.back();
  };
  o.grace_seconds = 2;
  o.on_line = [](int, const std::string&) {};
  const hlm::LaunchResult r = hlm::launch_ranks(o);
  EXPECT_TRUE(r.ok()) << "rank " << r.failed_rank;
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[0], taken.port);
  EXPECT_NE(picked[1], taken.port);
}

TEST(Launcher, KeepsReadingAStoppingRanksOutputSoItCanFinish) {
  hlm::LaunchOptions o;
  o.nproc = 2;
  // Rank 1 fails at once; rank 0, asked to stop, writes ~600 KB (ten pipes' worth) and exits 0.
  o.argv = {"/bin/sh", "-c",
            "if [ \"$RANK\" = 1 ]; then sleep 0.3; exit 3; fi\n"
            "trap 'seq 1 100000; exit 0' TERM\n"
            "while true; do sleep 0.05; done\n"};
  o.grace_seconds = 20;
  std::string last;
  int lines = 0;
  o.on_line = [&](int rank, const std::string& line) {
    if (rank == 0) last = line, ++lines;
  };
  const hlm::LaunchResult r = hlm::launch_ranks(o);
  EXPECT_EQ(r.failed_rank, 1);
  EXPECT_EQ(r.exit_codes[1], 3);
  EXPECT_EQ(r.exit_codes[0], 0);  // finished its output, not killed (137)
  EXPECT_EQ(lines, 100000);
  EXPECT_EQ(last, "100000");
}

}  // namespace
