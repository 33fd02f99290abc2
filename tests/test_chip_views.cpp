// Views in the runtime's ChipTensor encoding (models/runtime/chip_view.h,
// tensor.h) and the trace keys that carry them (docs/trace-format.md,
// "Extensions for real programs"). The overlap rules mirror
// PTO2TensorMapEntry::check_overlap (simpler: src/a2a3/runtime/
// tensormap_and_ringbuffer/runtime/pto_tensormap.h).
#include "tests/catch.h"

#include "models/common/rng.h"
#include "models/runtime/chip_view.h"
#include "models/runtime/task.h"
#include "sim/trace/trace.h"
#include "tests/cli_support.h"

using namespace npusim;

namespace {

// A [rows, cols] fp32 external buffer.
Tensor buffer(DataStore& d, std::int64_t rows, std::int64_t cols) {
  return d.add_external("x", DType::FP32, {rows, cols}, 0, {});
}

Tensor chip(DataStore& d, const Tensor& buf, std::vector<std::int64_t> shape, std::vector<std::int64_t> strides,
            std::int64_t start, std::uint64_t byte_offset = 0) {
  ChipView v;
  v.dtype = buf.dtype;
  v.byte_offset = byte_offset;
  v.numel = buf.buffer_numel() - static_cast<std::int64_t>(byte_offset) / 4;
  v.ndims = static_cast<int>(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) v.shape[i] = shape[i], v.strides[i] = strides[i];
  v.start = start;
  return make_chip_view(d, buf, v);
}

}  // namespace

TEST_CASE("a ChipTensor view is a box of the layout its strides imply, else strided", "[views]") {
  DataStore d;
  const Tensor x = buffer(d, 16, 128);
  // rows 4..7 of [16, 128]: a box of the buffer's own layout
  Tensor rows = chip(d, x, {4, 128}, {128, 1}, 4 * 128);
  CHECK_FALSE(rows.strided);
  CHECK(rows.buf_shape[0] == 16);
  CHECK(rows.buf_shape[1] == 128);
  CHECK(rows.offset[0] == 4);
  // the same buffer reshaped to [2048]: a box of another layout (buf_shape [2048])
  Tensor flat = chip(d, x, {512}, {1}, 512);
  CHECK_FALSE(flat.strided);
  CHECK(flat.buf_shape[0] == 2048);
  CHECK(flat.offset[0] == 512);
  // a transpose: strides that no row-major layout has
  Tensor t = chip(d, x, {128, 16}, {1, 128}, 0);
  CHECK(t.strided);
  CHECK(t.start_offset() == 0);
  CHECK(t.stride(1) == 128);
  CHECK(t.buffer_numel() == 2048);
  // every other row: still a box, of the layout [8, 256]
  Tensor step = chip(d, x, {8, 128}, {256, 1}, 0);
  CHECK_FALSE(step.strided);
  CHECK(step.buf_shape[0] == 8);
  CHECK(step.buf_shape[1] == 256);
  // the round trip of the encoding
  const ChipView back = chip_view_of(t, 0);
  CHECK(back.strides[0] == 1);
  CHECK(back.strides[1] == 128);
  CHECK(back.numel == 2048);
}

TEST_CASE("the ChipTensor encoding of a view at a byte offset round-trips, the offset included", "[views]") {
  // chip_view_of is the inverse of make_chip_view for a view of `buffer` at
  // `byte_offset` (a scene's record of make_tensor_external inside another
  // buffer): every field comes back, so the view made again is the same view.
  DataStore d;
  const Tensor x = buffer(d, 16, 128);
  const Tensor t = chip(d, x, {4, 64}, {128, 2}, 3, 512);  // from row 1, every other column, 3 elements in
  CHECK(t.addr == x.addr + 512);
  const ChipView back = chip_view_of(t, 512);
  CHECK(back.byte_offset == 512);
  CHECK(back.numel == 2048 - 128);
  CHECK(back.ndims == 2);
  CHECK(back.shape[0] == 4);
  CHECK(back.shape[1] == 64);
  CHECK(back.strides[0] == 128);
  CHECK(back.strides[1] == 2);
  CHECK(back.start == 3);
  const Tensor again = make_chip_view(d, x, back);
  CHECK(again.addr == t.addr);
  CHECK(again.buffer == t.buffer);
  CHECK(again.start_offset() == t.start_offset());
  CHECK(again.strided);
  CHECK(again.stride(0) == t.stride(0));
  CHECK(again.stride(1) == t.stride(1));
  CHECK(again.buffer_numel() == t.buffer_numel());
}

TEST_CASE("overlap: per dimension in one layout, by linear extent otherwise", "[views]") {
  DataStore d;
  const Tensor x = buffer(d, 16, 128);
  const Tensor top = chip(d, x, {8, 128}, {128, 1}, 0), bottom = chip(d, x, {8, 128}, {128, 1}, 8 * 128);
  const Tensor left = chip(d, x, {16, 64}, {128, 1}, 0);
  CHECK(view_overlap(top, bottom) == Overlap::None);
  CHECK(view_overlap(x, top) == Overlap::Covered);
  CHECK(view_overlap(top, left) == Overlap::Other);
  // a reshape of the top half overlaps the top as Other (another layout), not the bottom (disjoint extents)
  const Tensor flat_top = chip(d, x, {1024}, {1}, 0);
  CHECK(view_overlap(flat_top, top) == Overlap::Other);
  CHECK(view_overlap(flat_top, bottom) == Overlap::None);
  // a transpose touches the whole buffer: Other against both halves
  const Tensor t = chip(d, x, {128, 16}, {1, 128}, 0);
  CHECK(view_overlap(t, top) == Overlap::Other);
  CHECK(view_overlap(top, t) == Overlap::Other);
  // an empty view overlaps nothing
  CHECK(view_overlap(chip(d, x, {0, 128}, {128, 1}, 0), x) == Overlap::None);
  // a newer version overlaps every older entry of the buffer, even a disjoint one
  Tensor newer = bottom;
  newer.version = 1;
  CHECK(view_overlap(newer, top) == Overlap::Other);
  CHECK(view_overlap(top, newer) == Overlap::None);
}

TEST_CASE("a view at a byte offset is another address with the same data", "[views]") {
  DataStore d;
  const Tensor x = d.add_external("x", DType::INT32, {8}, 0, {10, 11, 12, 13, 14, 15, 16, 17});
  const Tensor tail = chip(d, x, {7}, {1}, 0, 4);
  CHECK(tail.addr == x.addr + 4);
  CHECK(d.get(tail.buffer, 0) == 11);
  d.set(tail.buffer, 2, 99);
  CHECK(d.get(x.buffer, 3) == 99);
  CHECK(d.original(tail.buffer) == std::make_pair(x.buffer, std::int64_t{1}));
  CHECK(chip(d, x, {7}, {1}, 0, 4).buffer == tail.buffer);  // one alias per (buffer, offset)
}

TEST_CASE("sampled durations: the uniforms are above 0 and at most 1 so Box-Muller never takes log(0)", "[views]") {
  // unit_uniform maps the top 53 bits of a hash to the midpoints of 2^53
  // equal steps: 0.5 x 2^-53 for the smallest hash. The midpoint k + 0.5 is
  // a double only below 2^52; above it rounds to even, and for the largest
  // hashes (k = 2^53 - 1) to 2^53: u = 1.0 exactly, where log(u1) is 0 (a
  // normal of 0), never log(0). A `normal` duration's standard_normal takes
  // log(u1).
  CHECK(unit_uniform(0) == 0.5 / 9007199254740992.0);
  CHECK(unit_uniform(~std::uint64_t{0}) == 1.0);
  CHECK(unit_uniform(~std::uint64_t{0} - (std::uint64_t{1} << 11)) == 1.0 - 2.0 / 9007199254740992.0);
}

TEST_CASE("element values: the device's bits and the data store's values", "[views]") {
  CHECK(float_bits(2.0, DType::FP32) == 0x40000000);
  CHECK(float_bits(1.0, DType::BF16) == 0x3f80);
  CHECK(float_bits(1.0, DType::FP16) == 0x3c00);
  CHECK(float_bits(65504.0, DType::FP16) == 0x7bff);
  CHECK(float_bits(1e6, DType::FP16) == 0x7c00);  // beyond fp16: infinity
  // Round to nearest, ties to even (IEEE 754's default, the cast the device's
  // fp16 and bf16 conversions make): a value halfway between two
  // representable ones takes the one with an even last bit.
  CHECK(float_bits(1.0 + 1.0 / 2048, DType::FP16) == 0x3c00);  // between 0x3c00 and 0x3c01
  CHECK(float_bits(1.0 + 3.0 / 2048, DType::FP16) == 0x3c02);  // between 0x3c01 and 0x3c02
  CHECK(float_bits(1.0 + 1.0 / 4096, DType::FP16) == 0x3c00);  // below halfway
  CHECK(float_bits(1.5 / 16777216, DType::FP16) == 0x0002);    // subnormal: 1.5 x 2^-24
  CHECK(float_bits(0.5 / 16777216, DType::FP16) == 0x0000);    // 2^-25: halfway to the smallest subnormal
  CHECK(float_bits(1.0 + 1.0 / 256, DType::BF16) == 0x3f80);   // between 0x3f80 and 0x3f81
  CHECK(float_bits(1.0 + 3.0 / 256, DType::BF16) == 0x3f82);
  CHECK(element_bits(-1, DType::INT32) == 0xffffffffull);
  CHECK(element_from_bits(0xffffffffull, DType::INT32) == -1);
  CHECK(element_from_bits(0xffffffffull, DType::UINT32) == 4294967295ll);
  CHECK(element_from_bits(0x1ff, DType::INT8) == -1);
}

namespace {
trace::Trace parse_views(const std::string& program, const std::string& tensors =
                                                   R"({"x": {"shape": [16, 128], "dtype": "fp32"}})") {
  return trace::parse_trace(R"({"npusim_trace": 1, "kernels": {"K": {"func_id": 0, "core": "aiv",
      "duration": {"ns_by_block": [100, 200]}}}, "tensors": )" + tensors + R"(, "program": )" + program + "}",
                            "t.json", "t");
}
std::string load_error(const std::string& program) {
  try {
    parse_views(program);
  } catch (const InputError& e) {
    return e.path() + "|" + e.message();
  }
  return "no error";
}
}  // namespace

TEST_CASE("trace: the strided form, version, creator, wait deps, fill, set and fatal", "[views][trace]") {
  trace::Trace t = parse_views(R"([
    {"op": "submit", "kernel": "K", "id": "w", "args": [{"out": "o", "shape": [4], "dtype": "int32", "fill": 5}]},
    {"op": "submit", "kernel": "K", "args": [{"in": "x", "start": 512, "shape": [1024], "strides": [1]},
                                            {"inout": "x", "shape": [128, 16], "strides": [1, 128], "version": 2},
                                            {"in": "o", "creator": false}], "deps": [{"wait": "w"}, "w"]},
    {"op": "set", "tensor": "o", "element": 3, "value": 9},
    {"op": "read", "tensor": "o", "index": [3], "bind": "v"},
    {"op": "fatal", "code": 9, "message": "stop"}])");
  CHECK(t.kernels[0]->lanes[kLaneAiv0].phases[0].duration.kind == Duration::Kind::ByBlock);
  DataStore data;
  auto src = trace::make_interpreter(t, data);
  trace::DryRunOutputs outs(data);
  OrchOp op;
  REQUIRE(src->next(op));
  CHECK(op.submit.args[0].fill == 5);
  src->deliver_task(make_task_id(0, 0), outs.make(op.submit.args, make_task_id(0, 0)));
  REQUIRE(src->next(op));
  const SubmitRequest& r = op.submit;
  CHECK_FALSE(r.args[0].tensor.strided);
  CHECK(r.args[0].tensor.buf_shape[0] == 2048);
  CHECK(r.args[0].tensor.offset[0] == 512);
  CHECK(r.args[1].tensor.strided);
  CHECK(r.args[1].tensor.version == 2);
  CHECK(r.args[2].tensor.owner == kNoTask);
  CHECK(r.dep_flags == std::vector<std::uint8_t>{std::uint8_t{kDepWait}, std::uint8_t{kDepWait | kDepRetain}});
  src->deliver_task(make_task_id(0, 1), outs.make(r.args, make_task_id(0, 1)));
  REQUIRE(src->next(op));
  CHECK(op.kind == OrchOp::Kind::Write);
  CHECK(op.read_element == 3);
  CHECK(op.write_value == 9);
  REQUIRE(src->next(op));
  CHECK(op.kind == OrchOp::Kind::Read);
  CHECK(op.read_element == 3);
  src->deliver_value(9);
  REQUIRE(src->next(op));
  CHECK(op.kind == OrchOp::Kind::Fatal);
  CHECK(op.fatal_code == 9);
  CHECK(op.fatal_message == "stop");
  CHECK_FALSE(src->next(op));
}

TEST_CASE("an empty view is the zero-length range at its start: it meets a view holding that start strictly inside", "[views]") {
  // simpler: pto_tensormap.h, PTO2TensorMapEntry::check_overlap with
  // Segment::line_segment_intersection (end > other.begin && other.end >
  // begin), on a ChipTensor whose extent_elem() is 0 (tensor.h, view(): an
  // empty view is contiguous with extent 0, its start_offset the parent's).
  DataStore d;
  const Tensor x = buffer(d, 16, 128);
  const Tensor top = chip(d, x, {8, 128}, {128, 1}, 0), bottom = chip(d, x, {8, 128}, {128, 1}, 8 * 128);
  const Tensor inside = chip(d, x, {0, 128}, {128, 1}, 4 * 128);   // origin row 4: inside x and top
  const Tensor boundary = chip(d, x, {0, 128}, {128, 1}, 8 * 128); // origin row 8: where bottom begins
  CHECK(view_overlap(inside, x) == Overlap::Other);
  CHECK(view_overlap(inside, top) == Overlap::Other);
  CHECK(view_overlap(inside, bottom) == Overlap::None);
  CHECK(view_overlap(boundary, top) == Overlap::None);     // 1024 > 1024 fails: ends meet, no overlap
  CHECK(view_overlap(boundary, bottom) == Overlap::None);  // 1024 > 1024 fails from the other side
  // as the producer's entry: the consumer's box contains it
  CHECK(view_overlap(x, inside) == Overlap::Covered);
  CHECK(view_overlap(top, inside) == Overlap::Covered);
  CHECK(view_overlap(bottom, inside) == Overlap::None);
  CHECK(view_overlap(inside, inside) == Overlap::None);  // s > s fails
}

TEST_CASE("overlap in the consumer's layout: a producer over a buffer of another size", "[views]") {
  // simpler: pto_tensormap.h, PTO2TensorMapEntry::check_overlap: the
  // reference shape's first extent is the INPUT's buffer.size / element size
  // / strides[0]; the entry is compared in that layout if it fits in it, so
  // views of one address taken over buffers of different sizes (ChipTensors
  // made with another size) are compared per dimension, not as Other.
  DataStore d;
  const Tensor x = buffer(d, 16, 128);
  auto sized = [&](std::int64_t numel, std::vector<std::int64_t> shape, std::int64_t start) {
    ChipView v;
    v.dtype = x.dtype;
    v.numel = numel;
    v.ndims = 2;
    v.shape[0] = shape[0], v.shape[1] = shape[1];
    v.strides[0] = 128, v.strides[1] = 1;
    v.start = start;
    return make_chip_view(d, x, v);
  };
  const Tensor left4 = sized(2048, {4, 64}, 0);      // rows 0..3, columns 0..63, of a 16-row buffer
  const Tensor right8 = sized(1024, {8, 64}, 64);    // rows 0..7, columns 64..127, of an 8-row buffer
  const Tensor whole8 = sized(1024, {8, 128}, 0);    // rows 0..7 of an 8-row buffer
  const Tensor whole16 = sized(2048, {16, 128}, 0);  // rows 0..15 of a 16-row buffer
  CHECK(view_overlap(right8, left4) == Overlap::None);    // the element ranges meet, the columns do not
  CHECK(view_overlap(whole8, left4) == Overlap::Covered);
  CHECK(view_overlap(whole16, right8) == Overlap::Covered);
  // the producer's box reaches beyond the consumer's reference shape (rows 0..15 of 8): Other
  CHECK(view_overlap(whole8, whole16) == Overlap::Other);
  // a consumer buffer that strides[0] does not divide: Other
  CHECK(view_overlap(sized(1000, {4, 64}, 0), left4) == Overlap::Other);
}

TEST_CASE("trace: errors of the extensions", "[views][trace]") {
  CHECK(load_error(R"([{"op": "submit", "kernel": "K", "args": [{"in": "x", "start": 1, "shape": [4]}]}])") ==
        "/program/0/args/0|the strided form of a view needs \"shape\" and \"strides\" (\"start\" given)");
  CHECK(load_error(R"([{"op": "submit", "kernel": "K", "args": [{"in": "x", "offset": [0, 0], "strides": [1, 1],
        "shape": [1, 1]}]}])") == "/program/0/args/0/offset|\"offset\" cannot be combined with the strided form "
                                   "(\"start\" and \"strides\"): give the view in one form");
  CHECK(load_error(R"([{"op": "read", "tensor": "x", "index": [0, 0], "element": 0}])") ==
        "/program/0|expected exactly one of \"index\" or \"element\"");
  CHECK(load_error(R"([{"op": "fatal", "code": 0}])") == "/program/0/code|expected an integer in [1, 2147483647], got 0");
  CHECK(load_error(R"([{"op": "submit", "kernel": "K", "args": [{"in": "x", "creator": true}]}])") ==
        "/program/0/args/0/creator|only \"creator\": false is meaningful (the view keeps its tensor's creator otherwise)");
  // evaluated when run: a strided view beyond its buffer
  trace::Trace t = parse_views(R"([{"op": "submit", "kernel": "K", "args": [{"in": "x", "start": 2000, "shape": [100], "strides": [1]}]}])");
  DataStore data;
  auto src = trace::make_interpreter(t, data);
  OrchOp op;
  CHECK_THROWS_WITH(src->next(op), "t.json: at /program/0/args/0: view out of bounds: its last element 2099 >= the buffer's 2048 elements");
}

TEST_CASE("set_tensor_data waits for the writer's readers, and a reported fatal fails the run", "[cli][views]") {
  std::filesystem::path dir = cli::scratch("set_trace");
  std::filesystem::create_directories(dir);
  // t0 writes o (1 us), t1 reads it (3 us): the set must wait for t1 to finish and release o.
  std::ofstream(dir / "set.json") << R"({"npusim_trace": 1, "name": "set",
    "kernels": {"W": {"func_id": 0, "core": "aiv", "duration": {"ns": 1000}},
                "R": {"func_id": 1, "core": "aiv", "duration": {"ns": 3000}}},
    "program": [
      {"op": "submit", "kernel": "W", "args": [{"out": "o", "shape": [4], "dtype": "int32"}]},
      {"op": "submit", "kernel": "R", "args": [{"in": "o"}]},
      {"op": "set", "tensor": "o", "element": 0, "value": 7},
      {"op": "read", "tensor": "o", "element": 0, "bind": "v"},
      {"op": "submit", "kernel": "W", "block_num": "v", "args": []}]})";
  std::filesystem::path out;
  cli::Result r = cli::run("'" + (dir / "set.json").string() + "' --no-host-stats -q", "set_out", out);
  REQUIRE(r.status == 0);
  const cli::json d = cli::load(out / "deps.json");
  CHECK(d["tasks"][2]["block_num"] == 7);  // the value written
  const std::string stats = cli::slurp(out / "task_stats.csv");
  // t2 is submitted only after t1's end (the set's wait for the reader)
  std::istringstream rows(stats);
  std::string line;
  std::vector<std::vector<std::string>> cells;
  while (std::getline(rows, line)) {
    std::vector<std::string> c;
    std::istringstream cs(line);
    for (std::string x; std::getline(cs, x, ',');) c.push_back(x);
    cells.push_back(c);
  }
  REQUIRE(cells.size() == 4);
  const auto col = [&](const char* name) {
    return static_cast<std::size_t>(std::find(cells[0].begin(), cells[0].end(), name) - cells[0].begin());
  };
  CHECK(std::stoll(cells[3][col("submit_ns")]) > std::stoll(cells[2][col("last_end_ns")]));

  std::ofstream(dir / "fatal.json") << R"({"npusim_trace": 1, "name": "fatal",
    "kernels": {"W": {"func_id": 0, "core": "aiv", "duration": {"ns": 1000}}},
    "program": [{"op": "submit", "kernel": "W", "args": []}, {"op": "fatal", "code": 9, "message": "bad input"}]})";
  cli::RunResult f = cli::run_summary("'" + (dir / "fatal.json").string() + "' --no-host-stats", "fatal_trace");
  CHECK(f.status == 1);
  CHECK(f.summary["error"]["name"] == "EXPLICIT_ORCH_FATAL");
  CHECK(cli::has(f.err, "FATAL(code=9): bad input"));
}
