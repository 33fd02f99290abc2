#include "sim/config/command_line.h"

#include <algorithm>
#include <iostream>

#include "models/common/errors.h"
#include "sim/config/run_options.h"
#include "sim/config/suggest.h"

namespace npusim::config {

CommandLine::CommandLine(const std::string& description, const std::string& version) : app_(description) {
  app_.name("npusim");
  app_.require_subcommand(1);
  app_.set_version_flag("--version", version);
}

CLI::App* CommandLine::add(const std::string& name, const std::string& description, Expectations expects,
                           std::function<int()> run) {
  CLI::App* sub = app_.add_subcommand(name, description);
  // Unknown options and arguments are collected, not refused by CLI11, so
  // that the message can say what was probably meant (unexpected()).
  sub->allow_extras();
  subcommands_.push_back({sub, std::move(expects), std::move(run)});
  return sub;
}

// "npusim: error: MESSAGE", then where to read the usage.
std::optional<int> CommandLine::usage_error(const std::string& message, const CLI::App* sub) {
  std::cerr << "npusim: error: " << message << "\n"
            << "npusim: see 'npusim " << (sub ? sub->get_name() + " " : std::string()) << "--help'\n";
  return kExitUsageError;
}

// The first argument the subcommand did not take: an option it does not
// have (with the closest one it has), or one argument too many.
std::optional<int> CommandLine::unexpected(const CLI::App& sub) {
  const std::vector<std::string> extra = sub.remaining();
  if (extra.empty()) return std::nullopt;
  const std::string& arg = extra.front();
  const std::string where = " for 'npusim " + sub.get_name() + "'";
  if (arg.size() < 2 || arg[0] != '-')
    return usage_error("unexpected argument '" + arg + "'" + where, &sub);
  const std::string name = arg.substr(0, arg.find('='));
  std::vector<std::string> names;
  for (const CLI::Option* o : sub.get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  const std::string guess = closest(name, names);
  return usage_error("unknown option '" + name + "'" + where + (guess.empty() ? "" : "; did you mean '" + guess + "'?"),
                     &sub);
}

// What a value of `option` of subcommand `sub` should be, as the subcommand
// said when it was added.
std::string CommandLine::expectation(const CLI::App& sub, const std::string& option) const {
  for (const Subcommand& s : subcommands_) {
    if (s.app != &sub) continue;
    const auto it = s.expects.find(option);
    if (it != s.expects.end()) return it->second;
  }
  return "a value";
}

// A value that is empty or only blanks where a path, number or name is
// expected: CLI11 would take it as the default (a number's 0, a path not
// given) and the command would go on as if the option had not been there.
std::optional<int> CommandLine::blank_value(const CLI::App& sub) {
  for (const CLI::Option* o : sub.get_options()) {
    if (o->get_expected_min() == 0) continue;  // a flag
    for (const std::string& v : o->results()) {
      if (v.find_first_not_of(" \t\n\r\f\v") != std::string::npos) continue;
      const std::string name = o->get_name();
      std::cerr << "npusim: error: "
                << npusim::InputError::format(kCommandLine, name,
                                              "expected " + expectation(sub, name) + ", got \"" + v + "\"")
                << "\n";
      return kExitUsageError;
    }
  }
  return std::nullopt;
}

std::optional<int> CommandLine::parse(int argc, char* argv[]) {
  if (argc < 2) {  // run bare: the usage
    std::cerr << app_.help();
    return kExitUsageError;
  }
  std::vector<std::string> commands;
  for (const CLI::App* sub : app_.get_subcommands({})) commands.push_back(sub->get_name());
  const std::string first = argv[1];
  if (first.empty() || first[0] != '-') {
    if (std::find(commands.begin(), commands.end(), first) == commands.end()) {
      const std::string guess = closest(first, commands);
      std::string list;
      for (const std::string& c : commands) list += (list.empty() ? "" : ", ") + c;
      return usage_error("unknown command '" + first + "'" +
                             (guess.empty() ? "" : "; did you mean '" + guess + "'?") + " (commands: " + list + ")",
                         nullptr);
    }
  }
  try {
    app_.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app_.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app_.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app_.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::vector<CLI::App*> chosen = app_.get_subcommands();
    if (chosen.empty() && first[0] == '-') {  // npusim has no options of its own but these
      const std::string name = first.substr(0, first.find('='));
      const std::string guess = closest(name, {"--help", "--version"});
      return usage_error("unknown option '" + name + "'" + (guess.empty() ? "" : "; did you mean '" + guess + "'?"),
                         nullptr);
    }
    const CLI::App* sub = chosen.empty() ? nullptr : chosen.front();
    if (sub) {  // an unknown option, then a blank value, come before what CLI11 complains of
      if (auto status = unexpected(*sub); status) return status;
      if (auto status = blank_value(*sub); status) return status;
    }
    return usage_error(e.what(), sub);
  }
  for (const CLI::App* sub : app_.get_subcommands())
    if (auto status = unexpected(*sub); status) return status;
  for (const CLI::App* sub : app_.get_subcommands())
    if (auto status = blank_value(*sub); status) return status;
  return std::nullopt;
}

int CommandLine::execute() {
  for (const Subcommand& s : subcommands_)
    if (*s.app) return s.run();
  return kExitUsageError;
}

}  // namespace npusim::config
