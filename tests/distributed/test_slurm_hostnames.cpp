// hlm's host-list expansion against SLURM's own: `scontrol show hostnames` on the same lists.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "slurm/slurm_layout.h"
#include "support/hlm_cli.h"

namespace {

// scontrol's expansion, one host a line; it needs a slurm.conf to start, any will do.
std::vector<std::string> scontrol_hostnames(const std::string& conf, const std::string& list) {
  const auto r = hlm::test::run_command("SLURM_CONF='" + conf + "' scontrol show hostnames '" +
                                        list + "' 2>&1");
  std::vector<std::string> hosts;
  std::istringstream lines(r.output);
  for (std::string host; std::getline(lines, host);) hosts.push_back(host);
  return hosts;
}

TEST(SlurmHostnames, ExpandsTwentyListsExactlyAsScontrolDoes) {
  if (std::system("command -v scontrol >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "scontrol missing (bash tools/setup.sh deps installs slurm-client)";
  hlm::test::ScratchDir dir("hlm_scontrol");
  const std::string conf = (dir.path / "slurm.conf").string();
  std::ofstream(conf) << "ClusterName=hlmtest\nSlurmctldHost=localhost\nNodeName=localhost CPUs=1\n"
                         "PartitionName=p Nodes=localhost\n";
  const std::vector<std::string> lists = {"node[01-04,07],gpu3",
                                          "n[08-10]",
                                          "n[1-010]",
                                          "n[001-003]",
                                          "r[1-2]-n[1-2]",
                                          "n[1-2][3-4]",
                                          "n[3,1]",
                                          "n[1,1]",
                                          "a,b,a",
                                          "node",
                                          "n1,n[2-3]",
                                          "n[00-02],gpu[7-8]",
                                          "n[9-10],m",
                                          "gpu[0-15]",
                                          "cn[098-102]",
                                          "x1,y[5-6],z",
                                          "mel[0001-0004]",
                                          "a[1-3,7,9-10]",
                                          "rack[1-3]-gpu[0-1]",
                                          "h[0-0]",
                                          "n[10-12,2]",
                                          "login1,compute[1-2]"};
  for (const auto& list : lists)
    EXPECT_EQ(hlm::expand_hostlist(list), scontrol_hostnames(conf, list)) << list;
}

}  // namespace
