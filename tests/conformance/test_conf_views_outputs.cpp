// Conformance of two submit-side rules with the runtime's source
// (hw-native-sys/simpler): the zero-size view of the offset/shape form
// (src/common/task_interface/tensor.h ChipTensor::view) and the int32 sum of a
// task's OUTPUT sizes (src/a2a3/runtime/tensormap_and_ringbuffer/runtime/
// pto_runtime2_types.h PTO2OutputLayout::total_output_size, pto_orchestrator.cpp
// calculate_output_layout, pto_ring_buffer.h PTO2TaskAllocator::alloc).
#include "tests/catch.h"

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli_support.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string write_trace(const std::string& name, const json& trace) {
  const fs::path dir = cli::scratch(name);
  fs::create_directories(dir);
  const fs::path file = dir / "trace.json";
  std::ofstream(file) << trace.dump();
  return file.string();
}

json kernels() { return {{"K", {{"func_id", 0}, {"core", "aiv"}, {"duration", {{"ns", 100}}}}}}; }

}  // namespace

// Upstream: common/task_interface/tensor.h ChipTensor::view. A view with any
// new shape of 0 captures no bytes: its start stays the parent's, the shapes
// are taken as given and the offsets are not checked (codegen clamps a
// dynamic length to 0 and leaves the offset out of range). The offset/shape
// form was refused ("shape must be >= 1") and an out-of-range offset was
// "view out of bounds"; both now run, as on the device.
TEST_CASE("a zero-size offset/shape view is valid with its offset out of range [cli]", "[conformance][cli]") {
  const json trace = {
      {"npusim_trace", 1},
      {"name", "zero_view"},
      {"kernels", kernels()},
      {"tensors", {{"x", {{"shape", {4, 8}}, {"dtype", "fp32"}}}}},
      {"program",
       {{{"op", "view"}, {"bind", "e"}, {"of", "x"}, {"offset", {9, 0}}, {"shape", {0, 8}}},
        {{"op", "submit"}, {"kernel", "K"}, {"args", {{{"in", "e"}}, {{"out", "y"}, {"shape", {1}}, {"dtype", "fp32"}}}}},
        {{"op", "view"}, {"bind", "f"}, {"of", "x"}, {"offset", {"4 - 4"}}, {"shape", {"0"}}}}}};
  // The second view has the wrong rank: still refused, zero-size or not.
  cli::RunResult bad = cli::run_summary("'" + write_trace("zv_bad", trace) + "' --quiet", "zv_bad_out");
  CHECK(bad.status == 2);
  CHECK(cli::has(bad.err, "/program/2"));
  json ok_trace = trace;
  ok_trace["program"].erase(2);
  cli::RunResult r = cli::run_summary("'" + write_trace("zv", ok_trace) + "' --quiet --no-host-stats", "zv_out");
  CHECK(r.status == 0);
  REQUIRE(r.summary.is_object());
  CHECK(r.summary["status"] == "ok");
  CHECK(r.summary["tasks"]["completed"] == 1);
  // A non-empty view out of range is still refused.
  json oob = ok_trace;
  oob["program"][0]["shape"] = {1, 8};
  cli::RunResult o = cli::run_summary("'" + write_trace("zv_oob", oob) + "' --quiet", "zv_oob_out");
  CHECK(o.status == 2);
  CHECK(cli::has(o.err, "view out of bounds in dim 0: offset 9 + shape 1 > 4"));
}

// Upstream: pto_runtime2_types.h PTO2OutputLayout (int32_t total_output_size),
// pto_orchestrator.cpp calculate_output_layout (the padded sizes summed into
// it), pto_ring_buffer.h PTO2TaskAllocator::alloc (`output_size > 0 ?
// PTO2_ALIGN_UP(output_size, PTO2_ALIGN_SIZE) : 0`). Two 1 GiB outputs total
// 2^31 bytes: the int32 wraps to -2147483648, the allocator takes a 0-byte
// block, and the run goes on (npusim used to wait for 2 GiB of a 256 MiB heap
// and report HEAP_RING_DEADLOCK); npusim warns that the outputs overlap the
// heap of later tasks.
TEST_CASE("outputs totalling 2 GiB wrap the int32 total_output_size to a 0-byte block [cli]",
          "[conformance][cli]") {
  const json trace = {
      {"npusim_trace", 1},
      {"name", "output_wrap"},
      {"kernels", kernels()},
      {"program",
       {{{"op", "submit"},
         {"kernel", "K"},
         {"args",
          {{{"out", "a"}, {"shape", {268435456}}, {"dtype", "fp32"}},
           {{"out", "b"}, {"shape", {268435456}}, {"dtype", "fp32"}}}}}}}};
  cli::RunResult r = cli::run_summary("'" + write_trace("wrap", trace) + "' --quiet --no-host-stats", "wrap_out");
  CHECK(r.status == 0);
  REQUIRE(r.summary.is_object());
  CHECK(r.summary["status"] == "ok");
  CHECK(r.summary["warnings"]["by_kind"]["output_size_wrap"] == 1);
  CHECK(cli::has(r.err, "total 2147483648 bytes (padded), 2 GiB or more: the runtime's int32 total_output_size "
                        "wraps to -2147483648 and the heap allocator takes a 0-byte block"));
}
