// The npusim process itself, before and around any subcommand: memory kept
// for the way out when an allocation fails, SystemC's scratch heap given
// back, and the filter that keeps control characters from the terminal.
#pragma once

#include <ostream>

namespace npusim::host {

// Gives SystemC's unused scratch heap back, keeps address space for the way
// out of an allocation failure and installs the new-handler that releases it
// (npusim::out_of_memory() then says so). Call once, first thing in main.
void prepare_process();

// Every character npusim prints on standard output and standard error goes
// through a filter from here on: control characters other than newline and
// tab are printed as \xHH.
void filter_standard_streams();

// The message of a run that exhausted host memory (its peak included).
void report_out_of_memory(std::ostream& err);

}  // namespace npusim::host
