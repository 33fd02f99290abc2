#include "sim/import/commands.h"

#include <memory>
#include <string>

#include "sim/config/command_line.h"
#include "sim/import/import.h"

namespace npusim::capture {

namespace import_commands {

struct ImportCommand {
  std::string capture_dir, out, name;
};

}  // namespace import_commands

void add_import_command(config::CommandLine& cl) {
  auto c = std::make_shared<import_commands::ImportCommand>();
  CLI::App* cmd = cl.add("import", "turn a device capture into a trace that replays it",
                         {{"CAPTURE_DIR", "a device capture folder"},
                          {"--output", "the trace to write"},
                          {"--name", "a trace name"}},
                         [c] {
                           import_to_file(c->capture_dir, c->out, c->name);
                           return 0;
                         });
  cmd->add_option("CAPTURE_DIR", c->capture_dir, "deps.json, chip_swimlane_records.json, name_map_*.json, "
                                                 "scope_stats/ (optional)")->required();
  cmd->add_option("-o,--output", c->out, "the trace to write")->required();
  cmd->add_option("--name", c->name, "the trace's name (default: the name map's orchestrator_name)");
}

}  // namespace npusim::capture
