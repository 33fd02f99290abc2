// `npusim sweep INPUT --grid NAME=V1,V2,... [--grid ...] --csv OUT.csv
// [--jobs N] [--scheduler ADDR]`: a trace, scene or worker file run over the
// cartesian product of the grid, each point an `npusim run` (a worker file:
// `npusim worker` on the point's copy of it) in a child process (or a
// task on a Dask cluster) (a point's failure, fatal or
// crash is recorded in its row, not fatal to the sweep); one CSV row per
// point in grid order, and a plot of device_wall_ns next to the CSV
// (docs/sweeps.md).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace npusim::study {

struct SweepRequest {
  std::string input;               // trace, scene or worker file ("npusim_worker")
  std::string platform = "a2a3";   // name or path
  std::vector<std::string> grid;   // "NAME=V1,V2,...": a run option, a platform JSON pointer, "worker:/pointer"
  std::string csv;                 // the table; the plot is the same path with .svg
  int jobs = 0;                    // points run at once; 0 = the number of processors
  std::string scheduler;           // a Dask scheduler's address: the points run there ("" = here)
  bool quiet = false;
};

// Returns 0 when the sweep ran (whatever its points' statuses). A bad grid
// (unknown name, with the closest one; a value the option or the platform
// refuses; a malformed NAME=VALUES) is an InputError before anything runs.
int sweep(const SweepRequest& req, std::ostream& out, std::ostream& err);

}  // namespace npusim::study
