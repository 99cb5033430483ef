// SLURM's host lists and task counts, and the rank layout DistEnv reads inside an allocation.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>

#include "distributed/dist_env.h"
#include "hlm/errors.h"
#include "slurm/slurm_layout.h"

namespace {

using hlm::expand_hostlist;
using Hosts = std::vector<std::string>;

TEST(SlurmLayout, ExpandsHostListsLikeScontrol) {
  EXPECT_EQ(expand_hostlist("node[01-04,07],gpu3"),
            (Hosts{"node01", "node02", "node03", "node04", "node07", "gpu3"}));
  EXPECT_EQ(expand_hostlist("n[08-10]"), (Hosts{"n08", "n09", "n10"}));
  EXPECT_EQ(expand_hostlist("n[1-010]").back(), "n10");  // padding follows the first number
  EXPECT_EQ(expand_hostlist("r[1-2]-n[1-2]"), (Hosts{"r1-n1", "r1-n2", "r2-n1", "r2-n2"}));
  EXPECT_EQ(expand_hostlist("n[3,1]"), (Hosts{"n3", "n1"}));  // order kept, not sorted
  EXPECT_EQ(expand_hostlist("node"), (Hosts{"node"}));
}

TEST(SlurmLayout, RefusesAMalformedHostListNamingIt) {
  for (const std::string bad : {"", "n[3-1]", "n[1-2", "n1-2]", "a,,b", "n[x]"}) {
    try {
      expand_hostlist(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const hlm::ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("'" + bad + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(SlurmLayout, ExpandsTasksPerNodeWithRepeats) {
  EXPECT_EQ(hlm::expand_tasks_per_node("2(x3),1"), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(hlm::expand_tasks_per_node("4"), (std::vector<int>{4}));
  EXPECT_THROW(hlm::expand_tasks_per_node("2(x3"), hlm::ConfigError);
  EXPECT_THROW(hlm::expand_tasks_per_node("two"), hlm::ConfigError);
}

// Sets SLURM-style variables for one test and removes every launcher variable after it.
class SlurmEnvironment : public ::testing::Test {
 protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void set(const std::map<std::string, std::string>& vars) {
    for (const auto& [name, value] : vars) ::setenv(name.c_str(), value.c_str(), 1);
  }
  static void clear() {
    for (const char* name :
         {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
          "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NNODES", "SLURM_NODEID",
          "SLURM_TASKS_PER_NODE", "SLURM_JOB_NODELIST", "SLURM_NODELIST",
          "TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_RESTART_COUNT"})
      ::unsetenv(name);
  }
};

TEST_F(SlurmEnvironment, ARankOnTheLastNodeGetsItsNodesRankCountAndTheFirstHostAsMaster) {
  set({{"SLURM_PROCID", "6"},
       {"SLURM_LOCALID", "0"},
       {"SLURM_NTASKS", "7"},
       {"SLURM_NNODES", "4"},
       {"SLURM_NODEID", "3"},
       {"SLURM_TASKS_PER_NODE", "2(x3),1"},
       {"SLURM_JOB_NODELIST", "localhost,n[2-4]"}});
  const hlm::DistEnv env = hlm::DistEnv::from_environment();
  EXPECT_EQ(env.rank, 6);
  EXPECT_EQ(env.world_size, 7);
  EXPECT_EQ(env.local_rank, 0);
  EXPECT_EQ(env.local_world_size, 1);
  EXPECT_EQ(env.master_addr, "localhost");
}

TEST_F(SlurmEnvironment, TasksPerNodeThatDisagreeWithTheTaskCountAreAnError) {
  set({{"SLURM_PROCID", "0"},
       {"SLURM_NTASKS", "8"},
       {"SLURM_NNODES", "4"},
       {"SLURM_NODEID", "0"},
       {"SLURM_TASKS_PER_NODE", "2(x3),1"},
       {"SLURM_JOB_NODELIST", "localhost"}});
  try {
    hlm::DistEnv::from_environment();
    FAIL() << "accepted";
  } catch (const hlm::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("SLURM_TASKS_PER_NODE='2(x3),1'"), std::string::npos)
        << e.what();
  }
}

TEST_F(SlurmEnvironment, AMasterHostThatDoesNotResolveIsAnErrorNamingTheList) {
  set({{"SLURM_PROCID", "0"},
       {"SLURM_NTASKS", "2"},
       {"SLURM_TASKS_PER_NODE", "1(x2)"},
       {"SLURM_NODEID", "0"},
       {"SLURM_JOB_NODELIST", "hlm-no-such-host[1-2]"}});
  try {
    hlm::DistEnv::from_environment();
    FAIL() << "accepted";
  } catch (const hlm::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("hlm-no-such-host[1-2]"), std::string::npos) << what;
    EXPECT_NE(what.find("'hlm-no-such-host1'"), std::string::npos) << what;
  }
}

TEST_F(SlurmEnvironment, NoNodeListAndNoMasterAddrIsAnErrorNotLocalhost) {
  set({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}});
  EXPECT_THROW(hlm::DistEnv::from_environment(), hlm::ConfigError);
  set({{"MASTER_ADDR", "192.0.2.1"}});
  EXPECT_EQ(hlm::DistEnv::from_environment().master_addr, "192.0.2.1");
}

}  // namespace

TEST_F(SlurmEnvironment, TorchrunsStaticRendezvousMakesEveryRankAClientOfTheAgentsStore) {
  set({{"RANK", "0"},
       {"WORLD_SIZE", "2"},
       {"MASTER_ADDR", "192.0.2.1"},
       {"MASTER_PORT", "29611"},
       {"TORCHELASTIC_USE_AGENT_STORE", "True"},
       {"TORCHELASTIC_RESTART_COUNT", "2"}});
  const hlm::DistEnv env = hlm::DistEnv::from_environment();
  EXPECT_TRUE(env.agent_store);
  EXPECT_EQ(env.agent_restart_count, 2);
  ::setenv("TORCHELASTIC_USE_AGENT_STORE", "False", 1);  // c10d rendezvous: rank 0 serves
  EXPECT_FALSE(hlm::DistEnv::from_environment().agent_store);
}
