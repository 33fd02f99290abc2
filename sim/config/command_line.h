// npusim's command line (CLI11): the app, its subcommands and the usage
// errors (docs/outputs.md, "The command line"). Each folder that answers a
// subcommand's question adds that subcommand here, its options beside the
// code that runs it (sim/engine/commands.h, sim/study/commands.h, ...);
// sim/main.cpp adds them in order, parses and runs the one chosen.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace npusim::config {

// The exit status of a usage error: an input error's (engine::kExitInputError).
constexpr int kExitUsageError = 2;

// What a value of each option of a subcommand should be ("--platform" -> "a
// platform name or file"), for the message about a blank one; an option not
// listed is "a value".
using Expectations = std::map<std::string, std::string>;

class CommandLine {
 public:
  CommandLine(const std::string& description, const std::string& version);

  // Adds subcommand `name`; its caller adds its options to the App returned,
  // bound to values that `run` reads once they are parsed. Subcommands are
  // listed (help, the unknown-command message) in the order they are added.
  CLI::App* add(const std::string& name, const std::string& description, Expectations expects,
                std::function<int()> run);

  // Parses argv; a status when npusim is done (help, version, a usage error).
  std::optional<int> parse(int argc, char* argv[]);
  // Runs the subcommand that was chosen.
  int execute();

 private:
  struct Subcommand {
    CLI::App* app;
    Expectations expects;
    std::function<int()> run;
  };

  std::optional<int> usage_error(const std::string& message, const CLI::App* sub);
  std::optional<int> unexpected(const CLI::App& sub);
  std::string expectation(const CLI::App& sub, const std::string& option) const;
  std::optional<int> blank_value(const CLI::App& sub);

  CLI::App app_;
  std::vector<Subcommand> subcommands_;
};

}  // namespace npusim::config
