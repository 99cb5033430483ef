// The plugin host: loading, ABI and fingerprint checks, duplicates, errors from create().
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "hlm/dataset.h"
#include "hlm/errors.h"
#include "plugin/plugin_host.h"
#include "support/hlm_cli.h"

namespace fs = std::filesystem;

namespace {

std::string test_plugin(const std::string& variant) {
  return std::string(HLM_BINARY_DIR) + "/test_plugins/" + variant + "/libhlm_plugin_" + variant +
         ".so";
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

TEST(PluginHost, ReadsTheSdkVersionAndKindFromTheMacro) {
  hlm::PluginHost host;
  const auto& info = host.load_library(test_plugin("tiny_good"));
  EXPECT_EQ(info.kind, "dataset");  // hlm::Dataset::kPluginKind
  EXPECT_EQ(info.abi_minor, uint32_t(HLM_PLUGIN_ABI_MINOR));
  EXPECT_EQ(info.sdk_version, HLM_VERSION);
  EXPECT_NE(std::string(hlm::host_fingerprint()).find(" sdk=" HLM_VERSION), std::string::npos);
}

// Built with the ABI 1.0 descriptor, which ends before sdk_version: it loads, the missing
// field reads as absent, and its objects work.
TEST(PluginHost, LoadsAPluginBuiltAgainstTheOlderShorterDescriptor) {
  hlm::PluginHost host;
  const auto& info = host.load_library(test_plugin("tiny_abi_1_0"));
  EXPECT_EQ(info.abi_minor, 0u);
  EXPECT_EQ(info.version, "0.0.9");
  EXPECT_EQ(info.sdk_version, "");
  auto dataset = host.create<hlm::Dataset>("dataset", "tiny", {{"records", 3}});
  EXPECT_EQ(dataset->records().size(), 3u);
}

TEST(PluginHost, RefusesADescriptorWithoutARequiredFieldNamingIt) {
  hlm::PluginHost host;
  const std::string message = error_of([&] { host.load_library(test_plugin("tiny_null_create")); });
  EXPECT_NE(message.find("tiny_null_create"), std::string::npos) << message;
  EXPECT_NE(message.find("plugin descriptor has no 'create'"), std::string::npos) << message;
}

TEST(PluginHost, RefusesALibraryWithoutTheEntryPointNamingIt) {
  hlm::PluginHost host;
  const std::string message = error_of([&] { host.load_library(test_plugin("tiny_no_entry")); });
  EXPECT_NE(message.find("tiny_no_entry"), std::string::npos) << message;
  EXPECT_NE(message.find("not an hlm plugin: no 'hlm_plugin_entry' symbol"), std::string::npos)
      << message;
}

TEST(PluginHost, RefusesAPluginBuiltForAnotherAbiNamingBothVersions) {
  hlm::PluginHost host;
  const std::string message = error_of([&] { host.load_library(test_plugin("tiny_bad_abi")); });
  EXPECT_NE(message.find("incompatible plugin ABI version (plugin: 99, host: 1)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("tiny_bad_abi"), std::string::npos) << message;
  EXPECT_TRUE(host.plugins().empty());
}

TEST(PluginHost, RefusesAPluginBuiltAgainstAnotherLibTorchNamingBothFingerprints) {
  hlm::PluginHost host;
  const std::string message =
      error_of([&] { host.load_library(test_plugin("tiny_bad_fingerprint")); });
  EXPECT_NE(message.find("torch=0.0.0 cuda=1 cxx11abi=0 gcc=4"), std::string::npos) << message;
  EXPECT_NE(message.find(hlm::host_fingerprint()), std::string::npos) << message;
}

TEST(PluginHost, RefusesTwoPluginsWithTheSameName) {
  const fs::path dir = fs::temp_directory_path() / ("hlm_dup_" + std::to_string(::getpid()));
  fs::create_directories(dir / "a");
  fs::create_directories(dir / "b");
  fs::copy_file(test_plugin("tiny_good"), dir / "a/libhlm_plugin_tiny.so",
                fs::copy_options::overwrite_existing);
  fs::copy_file(test_plugin("tiny_good"), dir / "b/libhlm_plugin_tiny.so",
                fs::copy_options::overwrite_existing);
  hlm::PluginHost host;
  host.load_all({(dir / "a").string(), (dir / "b").string()});
  EXPECT_EQ(host.plugins().size(), 1u);  // the first one found
  ASSERT_EQ(host.refused().size(), 1u);
  EXPECT_NE(host.refused()[0].reason.find("duplicate dataset plugin 'tiny'"), std::string::npos)
      << host.refused()[0].reason;
  fs::remove_all(dir);
}

// Plugins are code: a library, or its folder, that its group or every user may write is refused
// with the path and the chmod that fixes it; owner-only again, it loads.
TEST(PluginHost, RefusesALibraryOrFolderOthersCanWrite) {
  const fs::path dir = fs::temp_directory_path() / ("hlm_writable_" + std::to_string(::getpid()));
  fs::create_directories(dir / "lib");
  fs::permissions(dir / "lib", fs::perms::owner_all | fs::perms::group_read |
                                   fs::perms::group_exec | fs::perms::others_read |
                                   fs::perms::others_exec);
  const fs::path library = dir / "lib/libhlm_plugin_tiny.so";
  fs::copy_file(test_plugin("tiny_good"), library, fs::copy_options::overwrite_existing);
  const auto refusal = [&]() -> std::string {
    try {
      hlm::PluginHost host;
      host.load_library(library.string());
      return "";
    } catch (const hlm::PluginError& e) {
      return e.what();
    }
  };
  fs::permissions(library, fs::perms::group_write, fs::perm_options::add);
  std::string why = refusal();
  EXPECT_NE(why.find("the library " + library.string() + " is writable by its group"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("chmod go-w " + library.string()), std::string::npos) << why;
  fs::permissions(library, fs::perms::group_write, fs::perm_options::remove);
  fs::permissions(dir / "lib", fs::perms::others_write, fs::perm_options::add);
  why = refusal();
  EXPECT_NE(why.find("its folder " + (dir / "lib").string() + " is writable by every user"),
            std::string::npos)
      << why;
  // Through a symlink, the file it points at is checked.
  fs::permissions(dir / "lib", fs::perms::others_write, fs::perm_options::remove);
  fs::create_symlink(library, dir / "link.so");
  fs::permissions(library, fs::perms::others_write, fs::perm_options::add);
  try {
    hlm::PluginHost host;
    host.load_library((dir / "link.so").string());
    ADD_FAILURE() << "a world-writable library behind a symlink was loaded";
  } catch (const hlm::PluginError& e) {
    EXPECT_NE(std::string(e.what()).find(library.string()), std::string::npos) << e.what();
  }
  fs::permissions(library, fs::perms::others_write, fs::perm_options::remove);
  EXPECT_EQ(refusal(), "");
  fs::remove_all(dir);
}

// A stale or broken library on the plugin path is listed with its reason; everything else
// still loads, and only a workflow that names a missing plugin fails, mentioning it.
TEST(PluginHost, ABrokenLibraryIsListedAndTheOthersStillWork) {
  hlm::test::ScratchDir dir("hlm_broken_plugin");
  std::ofstream(dir.path / "libhlm_plugin_broken.so") << "not an ELF file\n";
  fs::copy_file(test_plugin("tiny_bad_abi"), dir.path / "libhlm_plugin_tiny_bad_abi.so");
  const std::string path = "--plugin-path " + dir.path.string() + " ";

  const auto listed = hlm::test::run_hlm(path + "plugins");
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("gpt"), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("refused    " + (dir.path / "libhlm_plugin_broken.so").string() +
                               ": cannot load plugin"),
            std::string::npos)
      << listed.output;
  EXPECT_NE(listed.output.find("incompatible plugin ABI version"), std::string::npos)
      << listed.output;

  const auto valid = hlm::test::run_hlm(path + "validate workflows/quickstart.yaml");
  EXPECT_EQ(valid.exit_code, 0) << valid.output;

  std::ofstream(dir.path / "wf.yaml") << "name: x\nstages:\n  - id: t\n    kind: tokenize\n"
                                         "    params:\n      datasets: [{plugin: broken}]\n"
                                         "      tokenizer: {plugin: beat-vq}\n";
  const auto needs = hlm::test::run_hlm(path + "validate " + (dir.path / "wf.yaml").string());
  EXPECT_EQ(needs.exit_code, 2) << needs.output;
  EXPECT_NE(needs.output.find("unknown dataset plugin 'broken'"), std::string::npos)
      << needs.output;
  EXPECT_NE(needs.output.find("not loaded: " + (dir.path / "libhlm_plugin_broken.so").string()),
            std::string::npos)
      << needs.output;
}

TEST(PluginHost, ReportsAFactoryErrorWithThePluginName) {
  hlm::PluginHost host;
  host.load_library(test_plugin("tiny_good"));
  const std::string message = error_of([&] {
    host.create<hlm::Dataset>("dataset", "tiny", {{"records", -1}});
  });
  EXPECT_NE(message.find("dataset plugin 'tiny'"), std::string::npos) << message;
  EXPECT_NE(message.find("records must be >= 0, got -1"), std::string::npos) << message;
}

// A workflow names plugins, never files: a path given as a plugin's name loads nothing, even
// when it names a plugin library that exists outside the search path.
TEST(PluginHost, APathGivenAsAPluginNameLoadsNothing) {
  hlm::PluginHost host;
  host.load_library(test_plugin("tiny_good"));
  const std::string outside = test_plugin("tiny_null_create");
  ASSERT_TRUE(fs::exists(outside));
  const size_t loaded = host.plugins().size();
  const std::string message = error_of([&] { host.get("dataset", outside); });
  EXPECT_NE(message.find("no dataset plugin named '" + outside + "'"), std::string::npos)
      << message;
  EXPECT_EQ(host.plugins().size(), loaded);
}

TEST(PluginHost, SuggestsTheClosestNameForAnUnknownPlugin) {
  hlm::PluginHost host;
  host.load_library(test_plugin("tiny_good"));
  const std::string message = error_of([&] { host.get("dataset", "tinny"); });
  EXPECT_NE(message.find("did you mean 'tiny'"), std::string::npos) << message;
}

}  // namespace
