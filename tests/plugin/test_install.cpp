// `cmake --install` lays out a prefix whose hlm finds its own libraries and plugins: the
// install rules and the plugin search path (<exe>/../lib/hlm/plugins) agree.
#include <gtest/gtest.h>

#include <cstdlib>

#include "support/hlm_cli.h"

namespace {

TEST(Install, AnInstalledHlmLoadsThePluginsInstalledBesideIt) {
  hlm::test::ScratchDir prefix("hlm_install");
  const std::string install =
      "cmake --install '" HLM_BINARY_DIR "' --prefix '" + prefix.path.string() + "' >/dev/null";
  ASSERT_EQ(std::system(install.c_str()), 0) << install;
  const auto plugins_dir = prefix.path / "lib/hlm/plugins";
  ASSERT_TRUE(std::filesystem::exists(plugins_dir / "libhlm_plugin_gpt.so"));
  ASSERT_TRUE(std::filesystem::exists(prefix.path / "include/hlm/plugin.h"));

  // Run from the prefix with no HLM_PLUGIN_PATH: what it lists comes from the install.
  const auto listed = hlm::test::run_command("env -u HLM_PLUGIN_PATH '" +
                                             (prefix.path / "bin/hlm").string() + "' plugins 2>&1");
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  const std::string& output = listed.output;
  for (const char* name : {"wfdb", "beat-vq", "gpt", "bert", "gloo", "shm"})
    EXPECT_NE(output.find(" " + std::string(name) + " "), std::string::npos) << name << "\n"
                                                                             << output;
  EXPECT_NE(output.find(plugins_dir.string()), std::string::npos) << output;
  EXPECT_EQ(output.find(HLM_BINARY_DIR "/plugins"), std::string::npos) << output;
  EXPECT_EQ(output.find("refused"), std::string::npos) << output;
}

}  // namespace
