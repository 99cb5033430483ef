// The plugin template makes a plugin that builds outside the tree and that hlm loads.
#include <gtest/gtest.h>

#include "support/hlm_cli.h"

namespace {

TEST(PluginTemplate, MakesAnOutOfTreePluginThatBuildsAndLoads) {
  hlm::test::ScratchDir dir("hlm_template");
  const std::string dest = (dir.path / "heartsine").string();
  const std::string make = "bash '" HLM_SOURCE_DIR "/tools/new-plugin.sh' heartsine '" + dest +
                           "' && cmake -S '" + dest + "' -B '" + dest +
                           "/build' -G Ninja -Dhlm_DIR='" HLM_BINARY_DIR
                           "' >/dev/null && cmake --build '" +
                           dest + "/build' 2>&1";
  ASSERT_EQ(std::system(make.c_str()), 0) << make;
  const auto r = hlm::test::run_hlm("--plugin-path '" + dest + "/build/plugins' plugins");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("heartsine"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sine-wave records (template)"), std::string::npos) << r.output;
}

}  // namespace
