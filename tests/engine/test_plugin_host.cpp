// The plugin host: loading, ABI and fingerprint checks, duplicates, errors from create().
#include <gtest/gtest.h>

#include <filesystem>

#include "hlm/dataset.h"
#include "hlm/errors.h"
#include "plugin/plugin_host.h"

namespace fs = std::filesystem;

namespace {

std::string test_plugin(const std::string& variant) {
  return std::string(HLM_BINARY_DIR) + "/test_plugins/" + variant + "/libhlm_plugin_" + variant + ".so";
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const hlm::PluginError& e) {
    return e.what();
  }
  return "";
}

TEST(PluginHost, LoadsAPluginAndCreatesObjectsWithItsParams) {
  hlm::PluginHost host;
  const auto& info = host.load_library(test_plugin("tiny_good"));
  EXPECT_EQ(info.kind, "dataset");
  EXPECT_EQ(info.name, "tiny");
  EXPECT_EQ(info.version, "0.1.0");
  ASSERT_EQ(info.params.size(), 1u);
  auto dataset = host.create<hlm::Dataset>("dataset", "tiny", {{"records", 3}});
  EXPECT_EQ(dataset->records().size(), 3u);
}

TEST(PluginHost, RefusesAPluginBuiltForAnotherAbiNamingBothVersions) {
  hlm::PluginHost host;
  const std::string message = error_of([&] { host.load_library(test_plugin("tiny_bad_abi")); });
  EXPECT_NE(message.find("incompatible plugin ABI version (plugin: 99, host: 1)"), std::string::npos) << message;
  EXPECT_NE(message.find("tiny_bad_abi"), std::string::npos) << message;
  EXPECT_TRUE(host.plugins().empty());
}

TEST(PluginHost, RefusesAPluginBuiltAgainstAnotherLibTorchNamingBothFingerprints) {
  hlm::PluginHost host;
  const std::string message = error_of([&] { host.load_library(test_plugin("tiny_bad_fingerprint")); });
  EXPECT_NE(message.find("torch=0.0.0 cuda=1 cxx11abi=0 gcc=4"), std::string::npos) << message;
  EXPECT_NE(message.find(hlm::host_fingerprint()), std::string::npos) << message;
}

TEST(PluginHost, RefusesTwoPluginsWithTheSameName) {
  const fs::path dir = fs::temp_directory_path() / ("hlm_dup_" + std::to_string(::getpid()));
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  fs::copy_file(test_plugin("tiny_good"), dir / "a/libhlm_plugin_tiny.so", fs::copy_options::overwrite_existing);
  fs::copy_file(test_plugin("tiny_good"), dir / "b/libhlm_plugin_tiny.so", fs::copy_options::overwrite_existing);
  hlm::PluginHost host;
  const std::string message = error_of([&] { host.load_all({(dir / "a").string(), (dir / "b").string()}); });
  EXPECT_NE(message.find("duplicate dataset plugin 'tiny'"), std::string::npos) << message;
  fs::remove_all(dir);
}

TEST(PluginHost, ReportsAFactoryErrorWithThePluginName) {
  hlm::PluginHost host;
  host.load_library(test_plugin("tiny_good"));
  const std::string message = error_of([&] { host.create<hlm::Dataset>("dataset", "tiny", {{"records", -1}}); });
  EXPECT_NE(message.find("dataset plugin 'tiny'"), std::string::npos) << message;
  EXPECT_NE(message.find("records must be >= 0, got -1"), std::string::npos) << message;
}

TEST(PluginHost, SuggestsTheClosestNameForAnUnknownPlugin) {
  hlm::PluginHost host;
  host.load_library(test_plugin("tiny_good"));
  const std::string message = error_of([&] { host.get("dataset", "tinny"); });
  EXPECT_NE(message.find("did you mean 'tiny'"), std::string::npos) << message;
}

}  // namespace
