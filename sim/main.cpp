// npusim command line (placeholder until the engine lands).
#include <cstdio>
#include <systemc>

int sc_main(int, char*[]) {
  std::fprintf(stderr, "npusim: not built yet\n");
  return 2;
}
