// Output writers (sim/record): the runtime-schema files and the Perfetto
// trace, fed with hand-built events (no SystemC), parsed back and checked
// field by field.
#include "tests/catch.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <charconv>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "sim/record/big_array.h"
#include "sim/record/json_out.h"
#include "sim/record/writer.h"
#include "tests/cli_support.h"
#include "tests/skip.h"

using namespace npusim;
using namespace npusim::record;
using nlohmann::json;
using nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

using cli::slurp;

// A fresh directory under /tmp, removed with everything in it.
struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "npusim_writers_XXXXXX").string();  // under TMPDIR
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return path + "/" + f; }
  // Every file below the directory, relative, sorted.
  std::vector<std::string> listing() const {
    std::vector<std::string> v;
    for (const auto& e : fs::recursive_directory_iterator(path))
      if (e.is_regular_file()) v.push_back(fs::relative(e.path(), path).string());
    std::sort(v.begin(), v.end());
    return v;
  }
};

std::vector<std::string> keys_of(const ordered_json& j) {
  std::vector<std::string> v;
  for (auto it = j.begin(); it != j.end(); ++it) v.push_back(it.key());
  return v;
}

// Two clusters: AIC 0-1, AIV 2-5. The counter starts at 1000 and runs at
// 50 MHz, so 1 µs of simulated time is 50 cycles.
Platform small_platform() {
  Platform p;
  p.name = "test";
  p.topo.clusters = 2;
  p.topo.sys_cnt_freq_hz = 50000000;
  p.topo.sys_cnt_base = 1000;
  return p;
}

RunConfig small_config() {
  RunConfig c;
  c.task_window = {16384, 16384, 1024, 16384};
  c.heap = {268435456, 268435456, 2147483648ull, 268435456};
  c.dep_pool = {16384, 16384, 16384, 8};
  c.tensormap_pool = 65536;
  c.sched_threads = 3;
  return c;
}

KernelDef kernel(const std::string& name, int func_id, CoreType core) {
  KernelDef k;
  k.name = name;
  k.func_id = func_id;
  k.core = core;
  if (core != CoreType::AIV) k.lanes[kLaneAic].active = true;
  if (core != CoreType::AIC) k.lanes[kLaneAiv0].active = true;
  if (core == CoreType::MIX) k.lanes[kLaneAiv1].active = true;
  return k;
}

Tensor tensor(std::uint64_t addr, DType dtype, std::vector<std::int64_t> buf, std::vector<std::int64_t> off = {},
              std::vector<std::int64_t> shape = {}) {
  Tensor t;
  t.addr = addr;
  t.dtype = dtype;
  t.ndims = static_cast<std::uint8_t>(buf.size());
  for (std::size_t d = 0; d < buf.size(); ++d) {
    t.buf_shape[d] = buf[d];
    t.offset[d] = off.empty() ? 0 : off[d];
    t.shape[d] = shape.empty() ? buf[d] : shape[d];
  }
  return t;
}

Task task(TaskId id, const KernelDef* k, int block_num = 1) {
  Task t;
  t.id = id;
  t.ring = task_ring(id);
  t.kernel = k;
  t.kind = k ? TaskKind::Kernel : TaskKind::Dummy;
  t.active_mask = k ? k->active_mask() : 0;
  t.shape = shape_of_mask(t.active_mask);
  t.block_num = block_num;
  return t;
}

BlockRecord block(int core, std::uint32_t token, Time dispatch, Time receive, Time start, Time end, Time finish,
                  int thread = 0) {
  BlockRecord b;
  b.core = core;
  b.token = token;
  b.dispatch = dispatch;
  b.receive = receive;
  b.start = start;
  b.end = end;
  b.finish = finish;
  b.thread = thread;
  return b;
}

SchedPhaseRecord phase(int thread, SchedPhase kind, Time start, Time end, int processed) {
  SchedPhaseRecord r;
  r.thread = thread;
  r.kind = kind;
  r.start = start;
  r.end = end;
  r.loop_iter = 7;
  r.tasks_processed = processed;
  return r;
}

// One small run: QK (t0, AIC core 0) feeds ADD (r1t0, AIV core 2); an alloc
// task (t1) is submitted first and feeds ADD too; a dummy (t2) follows ADD.
struct Scenario {
  KernelDef qk = kernel("QK", 0, CoreType::AIC);
  KernelDef add = kernel("ADD", 1, CoreType::AIV);
  Task alloc = task(make_task_id(0, 1), nullptr);
  Task a = task(make_task_id(0, 0), &qk);
  Task b = task(make_task_id(1, 0), &add);
  Task dummy = task(make_task_id(0, 2), nullptr);
  Platform platform = small_platform();
  RunConfig config = small_config();

  Scenario() {
    alloc.kind = TaskKind::Alloc;
    a.blocks.push_back(block(0, 1, us(1), us(1) + 200000, us(1) + 500000, us(3), us(3) + 200000));
    b.blocks.push_back(block(2, 2, us(4), us(4) + 100000, us(4) + 300000, us(6), us(6) + 50000, 1));
    b.fanin = {{a.id, kDepWait | kDepRetain}, {alloc.id, kDepWait | kDepRetain}};
    a.all_consumers = {b.id};
    alloc.all_consumers = {b.id};
    dummy.fanin = {{b.id, kDepWait}};
    b.all_consumers = {dummy.id};
  }

  RunInfo info() const {
    RunInfo i;
    i.platform = &platform;
    i.config = &config;
    i.trace_name = "small";
    i.kernels = {&add, &qk};
    i.sched_threads = 3;
    i.orchestrator_thread = 3;
    return i;
  }

  void play(SimObserver& o) {
    OrchSubmitRecord s;
    s.submit_idx = 0;
    s.task_id = alloc.id;
    s.kind = TaskKind::Alloc;
    s.start = 0;
    s.end = 300000;
    o.on_submitted(alloc, {}, {});
    o.on_orch_submit(s);
    o.on_submitted(a, {}, {});
    s = {1, a.id, TaskKind::Kernel, 300000, 700000};
    o.on_orch_submit(s);
    SubmitRequest rb;
    rb.deps = {a.id};
    o.on_submitted(b, rb, {});
    s = {2, b.id, TaskKind::Kernel, 700000, us(1)};
    o.on_orch_submit(s);
    o.on_submitted(dummy, {}, {});
    s = {3, dummy.id, TaskKind::Dummy, us(1), us(1) + 100000};
    o.on_orch_submit(s);

    auto d = phase(0, SchedPhase::Dispatch, us(1) - 100000, us(1) + 100000, 1);
    d.pop_hit = 1;
    d.pop_miss = 2;
    d.shared_at_start = {1, 0, 0};
    o.on_sched_phase(d);
    o.on_block_finished(a, a.blocks[0]);
    a.block_finished(0);  // as the scheduler does: the record leaves the task
    auto c = phase(0, SchedPhase::Complete, us(3) + 200000, us(3) + 400000, 1);
    c.shared_at_end = {0, 1, 0};
    o.on_sched_phase(c);
    o.on_block_finished(b, b.blocks[0]);
    b.block_finished(0);
    auto m = phase(2, SchedPhase::DummyTask, us(7), us(7), 1);
    m.task_id = dummy.id;
    o.on_sched_phase(m);
    o.on_retired(alloc);
    o.on_retired(a);
    o.on_retired(b);
    o.on_retired(dummy);
  }
};

// The writers all at once, in one staging dir, fed by one Scenario.
std::vector<std::unique_ptr<OutputWriter>> all_writers(const std::string& dir, int level) {
  std::vector<std::unique_ptr<OutputWriter>> w;
  w.push_back(make_chip_swimlane_writer(dir, level));
  w.push_back(make_perfetto_writer(dir, level));
  w.push_back(make_deps_writer(dir));
  w.push_back(make_scope_stats_writer(dir));
  w.push_back(make_name_map_writer(dir));
  return w;
}

void run_scenario(const std::string& dir, int level) {
  Scenario s;
  auto writers = all_writers(dir, level);
  ObserverFanout fan;
  for (auto& w : writers) fan.add(w.get());
  std::string site = "my_orch.cpp:42";
  ScopeSample x;
  x.site = &site;
  fan.on_scope_sample(x);
  s.play(fan);
  for (auto& w : writers) w->finish(s.info());
}

// Runs one writer over the scenario and returns the parsed file.
json scenario_file(OutputWriter& w, const std::string& dir, const std::string& file) {
  Scenario s;
  s.play(w);
  w.finish(s.info());
  return json::parse(slurp(dir + "/" + file));
}

// Events of a Perfetto trace matching a predicate.
std::vector<json> events_where(const json& trace, const std::function<bool(const json&)>& pred) {
  std::vector<json> v;
  for (const json& e : trace.at("traceEvents"))
    if (pred(e)) v.push_back(e);
  return v;
}

}  // namespace

// ------------------------------------------------------------- formatter

TEST_CASE("the JSON formatter prints microseconds exactly and escapes strings", "[writers]") {
  auto us_text = [](Time t) {
    JsonBuf b;
    b.us(t);
    return std::string(b.text());
  };
  CHECK(us_text(0) == "0.0");
  CHECK(us_text(1) == "0.000001");
  CHECK(us_text(10) == "0.00001");
  CHECK(us_text(1234567) == "1.234567");
  CHECK(us_text(80000000) == "80.0");
  CHECK(us_text(80240000) == "80.24");
  CHECK(us_text(90000) == "0.09");
  CHECK(us_text(18446744073709551615ull) == "18446744073709.551615");
  JsonBuf b;
  b.str("a\"b\\c\n\x01\xc3\xa9").ch(' ').i(-42).ch(' ').qu(18446744073709551615ull).ch(' ').boolean(false);
  CHECK(std::string(b.text()) == "\"a\\\"b\\\\c\\n\\u0001\xc3\xa9\" -42 \"18446744073709551615\" false");
  b.unput(6);
  CHECK(std::string(b.text()).substr(b.size() - 3) == "15\"");
}

TEST_CASE("the integer formatters print what std::to_chars prints, at every digit count and the extremes",
          "[writers]") {
  auto u_text = [](std::uint64_t v) {
    char b[24];
    return std::string(b, decimal::write_u(b, v));
  };
  auto i_text = [](std::int64_t v) {
    char b[24];
    return std::string(b, decimal::write_i(b, v));
  };
  auto to_chars_text = [](auto v) {
    char b[24];
    return std::string(b, std::to_chars(b, b + sizeof b, v).ptr);
  };
  CHECK(u_text(0) == "0");
  CHECK(u_text(9) == "9");
  CHECK(u_text(10) == "10");
  CHECK(u_text(99) == "99");
  CHECK(u_text(100) == "100");
  CHECK(u_text(18446744073709551615ull) == "18446744073709551615");
  CHECK(u_text(10000000000000000000ull) == "10000000000000000000");
  CHECK(u_text(9999999999999999999ull) == "9999999999999999999");
  CHECK(i_text(0) == "0");
  CHECK(i_text(-1) == "-1");
  CHECK(i_text(-10) == "-10");
  CHECK(i_text(std::numeric_limits<std::int64_t>::max()) == "9223372036854775807");
  CHECK(i_text(std::numeric_limits<std::int64_t>::min()) == "-9223372036854775808");
  CHECK(decimal::digits(0) == 1);
  CHECK(decimal::digits(1) == 1);
  CHECK(decimal::digits(18446744073709551615ull) == 20);
  // Each power of ten, one below it and one above it; every bit width; a
  // pseudo-random sweep; each against std::to_chars.
  int mismatches = 0;
  std::uint64_t p10 = 1;
  for (int k = 0; k < 20; ++k, p10 *= 10)
    for (std::uint64_t v : {p10 - 1, p10, p10 + 1}) {
      mismatches += u_text(v) != to_chars_text(v);
      mismatches += decimal::digits(v) != static_cast<int>(to_chars_text(v).size());
      const auto s = static_cast<std::int64_t>(v);
      mismatches += i_text(s) != to_chars_text(s) || i_text(-s) != to_chars_text(-s);
    }
  for (int bit = 0; bit < 64; ++bit) {
    const std::uint64_t v = std::uint64_t{1} << bit;
    mismatches += u_text(v) != to_chars_text(v) || u_text(v - 1) != to_chars_text(v - 1);
  }
  std::uint64_t x = 0x2545f4914f6cdd1dull;
  for (int k = 0; k < 200000; ++k) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const std::uint64_t v = x >> (k % 64);
    mismatches += u_text(v) != to_chars_text(v);
    mismatches += i_text(static_cast<std::int64_t>(v)) != to_chars_text(static_cast<std::int64_t>(v));
  }
  CHECK(mismatches == 0);
  // Through the buffer, beside other text.
  JsonBuf b;
  b.raw("[").u(0).ch(',').i(-9223372036854775807ll - 1).ch(',').qu(1000).ch(',').us(999999).raw("]");
  CHECK(std::string(b.text()) == "[0,-9223372036854775808,\"1000\",0.999999]");
}

TEST_CASE("direct formatting appends the same text as the buffer's own appends, growing the buffer once",
          "[writers]") {
  JsonBuf checked, direct;
  for (int k = 0; k < 3000; ++k) {  // past several growths of the buffer
    const std::string_view name = k % 2 ? "complete" : "dep";
    checked.raw("{\"id\": ").u(18446744073709551615ull - k).raw(", \"name\": \"").raw(name).raw("\", \"n\": ");
    checked.i(-9223372036854775807ll + k).ch(',').qu(k).ch(',').qi(-k).raw(", \"ts\": ").us(999999999999ull * k).raw("},\n");
    JsonBuf::Direct d(direct, name.size() + 256);
    d.raw("{\"id\": ").u(18446744073709551615ull - k).raw(", \"name\": \"").raw(name).raw("\", \"n\": ");
    d.i(-9223372036854775807ll + k).ch(',').qu(k).ch(',').qi(-k).raw(", \"ts\": ").us(999999999999ull * k).raw("},\n");
  }
  CHECK(direct.size() == checked.size());
  CHECK(direct.text() == checked.text());
  JsonBuf b;
  b.raw("x");
  { JsonBuf::Direct d(b, 64); }  // nothing written: nothing added
  {
    JsonBuf::Direct d(b, 64);
    d.ch('[').i(0).ch(',').u(1).ch(',').us(1500000).ch(',').raw(std::string_view()).ch(']');
  }
  CHECK(std::string(b.text()) == "x[0,1,1.5,]");
}

TEST_CASE("the microseconds formatter agrees with a plain decimal formatting on every trailing-zero count",
          "[writers]") {
  // The reference: the whole microseconds, '.', the six fraction digits with
  // trailing zeros dropped but one kept ("80.0").
  auto reference = [](Time t) {
    std::string frac = std::to_string(t % 1000000 + 1000000).substr(1);
    while (frac.size() > 1 && frac.back() == '0') frac.pop_back();
    return std::to_string(t / 1000000) + "." + frac;
  };
  auto us_text = [](Time t) {
    JsonBuf b;
    b.us(t);
    return std::string(b.text());
  };
  // Each fraction length 1..6 (and the whole-microsecond case), at small,
  // mid and the largest whole parts.
  CHECK(us_text(5) == "0.000005");
  CHECK(us_text(50) == "0.00005");
  CHECK(us_text(500) == "0.0005");
  CHECK(us_text(5000) == "0.005");
  CHECK(us_text(50000) == "0.05");
  CHECK(us_text(500000) == "0.5");
  CHECK(us_text(1000000) == "1.0");
  CHECK(us_text(1000001) == "1.000001");
  CHECK(us_text(999999999999) == "999999.999999");
  CHECK(us_text(123456100000) == "123456.1");
  CHECK(us_text(18446744073709000000ull) == "18446744073709.0");
  CHECK(us_text(18446744073709551610ull) == "18446744073709.55161");
  // Every multiple of 10^k below 10^6 for k = 0..5 over a stride, and a
  // pseudo-random sweep, against the reference.
  int mismatches = 0;
  for (Time step : {1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull})
    for (Time f = 0; f < 1000000; f += step * 7)
      for (Time whole : {0ull, 3ull, 123456789ull})
        mismatches += us_text(whole * 1000000 + f) != reference(whole * 1000000 + f);
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int k = 0; k < 200000; ++k) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const Time t = x >> (k % 40);
    mismatches += us_text(t) != reference(t);
  }
  CHECK(mismatches == 0);
}

TEST_CASE("the flat id set reports first insertions only, across growth", "[writers]") {
  FlatSet64 set;
  int first = 0, again = 0;
  for (std::uint64_t k = 0; k < 5000; ++k) first += set.insert(k * 0x10000000001ull);
  for (std::uint64_t k = 0; k < 5000; ++k) again += set.insert(k * 0x10000000001ull);
  CHECK(first == 5000);  // key 0 included
  CHECK(again == 0);
  CHECK(set.insert(7));
}

TEST_CASE("a grow array keeps its records in order as it grows from malloc to pages moved by mremap", "[writers]") {
  // GrowArray (big_array.h): below 1 MB realloc's, then a huge-page mapping
  // that grows by moving its pages (huge_pages::grow). 3,000,000 records of
  // 12 bytes (36 MB): the malloc steps, a first mapping of 1.5 MB (2 MB
  // mapped), then 3, 6, 12, 24 and 48 MB, sizes that are not whole 2 MB
  // pages, as the collectors' records (PathTask 96 bytes, Run 24) make them.
  struct Rec {
    std::uint32_t a = 7, b = 9, c = 11;
  };
  static_assert(sizeof(Rec) == 12, "12-byte records");
  GrowArray<Rec> v;
  CHECK(v.empty());
  const std::uint32_t n = 3000000;
  bool fresh_ok = true, aligned = true;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i % 2) {
      Rec& r = v.emplace_back();
      fresh_ok = fresh_ok && r.a == 7 && r.b == 9 && r.c == 11;
      r = Rec{i, ~i, i ^ 0x5a5a5a5au};
    } else {
      v.push_back(Rec{i, ~i, i ^ 0x5a5a5a5au});
    }
    if (v.size() * sizeof(Rec) >= (std::size_t{2} << 20))  // mapped: on a 2 MB boundary, grown in place or moved
      aligned = aligned && reinterpret_cast<std::uintptr_t>(v.data()) % (std::uintptr_t{2} << 20) == 0;
  }
  CHECK(fresh_ok);
  CHECK(aligned);
  REQUIRE(v.size() == n);
  bool in_order = true;
  for (std::uint32_t i = 0; i < n; ++i) in_order = in_order && v[i].a == i && v[i].b == ~i && v[i].c == (i ^ 0x5a5a5a5au);
  CHECK(in_order);
  CHECK(v.back().a == n - 1);
  CHECK(v.end() - v.begin() == static_cast<std::ptrdiff_t>(n));
  v.erase(v.begin() + 10, v.end());
  CHECK(v.size() == 10u);
  v.push_back(Rec{42, 43, 44});
  CHECK(v[10].a == 42u);
  CHECK(v[9].a == 9u);
}

TEST_CASE("huge_pages grow keeps the contents when the pages cannot be moved and copies them instead", "[writers]") {
  // A mapping split in two (its second huge page made read-only) is not one
  // mapping any more, so mremap refuses it (EFAULT) and grow falls back to a
  // new mapping and a copy.
  const std::size_t mb = std::size_t{1} << 20;
  auto* p = static_cast<unsigned char*>(huge_pages::allocate(3 * mb));  // 4 MB mapped
  for (std::size_t i = 0; i < 3 * mb; ++i) p[i] = static_cast<unsigned char>(i * 131 + 7);
  REQUIRE(::mprotect(p + 2 * mb, 2 * mb, PROT_READ) == 0);
  auto* q = static_cast<unsigned char*>(huge_pages::grow(p, 3 * mb, 7 * mb));
  bool same = true;
  for (std::size_t i = 0; i < 3 * mb; ++i) same = same && q[i] == static_cast<unsigned char>(i * 131 + 7);
  CHECK(same);
  CHECK(reinterpret_cast<std::uintptr_t>(q) % (std::uintptr_t{2} << 20) == 0);
  q[7 * mb - 1] = 1;  // the grown part is writable
  huge_pages::release(q, 7 * mb);
}

TEST_CASE("the task index numbers task ids in first-insertion order, across rings and growth", "[writers]") {
  TaskIndex index;
  CHECK(index.find(make_task_id(0, 0)) == TaskIndex::npos);  // empty
  for (std::uint64_t k = 0; k < 5000; ++k) {
    const auto [n, fresh] = index.insert(make_task_id(static_cast<int>(k % 3), k / 3));
    CHECK(n == k);
    CHECK(fresh);
  }
  const auto again = index.insert(make_task_id(1, 411));  // the 1234th inserted
  CHECK(again.first == 1234);
  CHECK_FALSE(again.second);
  CHECK(index.find(make_task_id(0, 0)) == 0);
  CHECK(index.find(make_task_id(1, 1666)) == 4999);
  CHECK(index.find(make_task_id(2, 1666)) == TaskIndex::npos);  // 5000 % 3 == 2 was never inserted
  CHECK(index.find(make_task_id(7, 0)) == TaskIndex::npos);     // a ring never seen
  CHECK(index.insert(make_task_id(3, 100000)).first == 5000);  // a gap in local ids
  CHECK(index.size() == 5001);
}

TEST_CASE("an out file writes its chunks in order through the I/O thread, and several files interleave", "[writers]") {
  TempDir dir;
  std::string want_a, want_b;
  {
    OutFile a(dir / "a"), b(dir / "b");
    // ~6 MB each: far more chunks than are ever in flight, so the producer
    // waits for room and reuses recycled blocks.
    for (int i = 0; i < 400000; ++i) {
      a.u(static_cast<std::uint64_t>(i)).ch(',');
      b.i(-i).ch(';');
      a.commit();
      b.commit();
      want_a += std::to_string(i) + ",";
      want_b += std::to_string(-i) + ";";
    }
    b.sync();  // everything so far is on disk, the file stays open
    CHECK(slurp(dir / "b") == want_b);
    b.raw("end");
    a.close();
    b.close();
  }
  CHECK(slurp(dir / "a") == want_a);
  CHECK(slurp(dir / "b") == want_b + "end");
}

TEST_CASE("a part held in memory appends the same text as one written to its file - past the budget too",
          "[writers]") {
  TempDir dir;
  // Rows of ~1 kB numbered n: `bytes` of them into f (committed per row).
  std::string row;
  for (int i = 0; i < 100; ++i) row += "0123456789";
  auto fill = [&](OutFile& f, std::size_t bytes, char sep) {
    for (std::size_t n = 0; n < bytes; n += row.size() + 8) {
      f.raw(row).u(n).ch(sep);
      f.commit();
    }
  };
  // Two held parts: the first spends most of the budget, the second runs
  // past it (its later chunks go to its file, after the held ones); the same
  // text through parts that are not held, into a plain and a gzip file each.
  const std::size_t big = OutFile::kHoldBudget - OutFile::kHoldBudget / 8, small = OutFile::kHoldBudget / 4;
  for (int level : {0, 1}) {
    const std::string name = level ? "out.gz" : "out";
    {
      OutFile held(dir / ("held_" + name), level), plain(dir / ("plain_" + name), level);
      ScratchFile a(dir.path, "a"), b(dir.path, "b"), c(dir.path, "c"), d(dir.path, "d");
      a.hold_in_memory();
      b.hold_in_memory();
      fill(a, big, ',');
      fill(b, small, ';');
      fill(c, big, ',');
      fill(d, small, ';');
      for (OutFile* f : {&held, &plain}) f->raw("head[");
      held.append(a);
      plain.append(c);
      for (OutFile* f : {&held, &plain}) f->raw("][");
      held.append(b);
      plain.append(d);
      for (OutFile* f : {&held, &plain}) f->raw("]");
      held.close();
      plain.close();
      CHECK(cli::entries(dir.path).size() == static_cast<std::size_t>(2 + 2 * level));  // the parts removed
    }
    const std::string got = slurp(dir / ("held_" + name));
    CHECK(got.size() > (level ? 1000u : big + small));
    CHECK(got == slurp(dir / ("plain_" + name)));  // the same bytes, the gzip chunks too
  }
}

TEST_CASE("an out file reserves its blocks ahead as it grows and gives back those past its end when closed",
          "[writers]") {
  // OutFile::reserve_ahead: on ext4, past 1 MiB a file's blocks are
  // reserved 8 MiB at a time with fallocate's FALLOC_FL_KEEP_SIZE (its size
  // moves with the writes alone), and close() truncates it to its size,
  // which frees the blocks reserved past the end. Where TMPDIR is not ext4,
  // or cannot reserve 8 MiB, only the text, the size and the blocks after
  // close are checked.
  TempDir dir;
  const std::uint64_t mib = 1 << 20;
  auto allocated = [&](const std::string& f) {
    struct stat st {};
    REQUIRE(::stat(f.c_str(), &st) == 0);
    return std::pair<std::uint64_t, std::uint64_t>{static_cast<std::uint64_t>(st.st_size),
                                                   static_cast<std::uint64_t>(st.st_blocks) * 512};
  };
  bool reserves = false;
  {
    struct statfs fs {};
    const int fd = ::open((dir / "probe").c_str(), O_WRONLY | O_CREAT, 0644);
    REQUIRE(fd >= 0);
    reserves = ::fstatfs(fd, &fs) == 0 && fs.f_type == 0xEF53 &&
               ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(8 * mib)) == 0;
    ::close(fd);
    reserves = reserves && allocated(dir / "probe").second >= 8 * mib;
    ::unlink((dir / "probe").c_str());
  }
  std::string want, row(1000, 'x');
  OutFile f(dir / "out"), small(dir / "small");
  for (int i = 0; i < 3000; ++i) {  // ~3 MB: past the 1 MiB where reserving starts
    f.raw(row).u(static_cast<std::uint64_t>(i)).ch('\n');
    f.commit();
    want += row + std::to_string(i) + "\n";
  }
  small.raw("[1]");
  f.sync();
  const auto [size, blocks] = allocated(dir / "out");
  CHECK(size == want.size());  // the reserved blocks are past the size, not in it
  if (reserves) CHECK(blocks >= size + mib);
  f.close();
  small.close();
  // The same text written plainly: what the file takes without reserving.
  std::ofstream(dir / "plain", std::ios::binary) << want;
  std::ofstream(dir / "plain_small", std::ios::binary) << "[1]";
  const auto [size_after, blocks_after] = allocated(dir / "out");
  CHECK(size_after == want.size());
  CHECK(blocks_after < allocated(dir / "plain").second + mib);  // given back
  CHECK(allocated(dir / "small").second <= allocated(dir / "plain_small").second);
  CHECK(slurp(dir / "out") == want);
  CHECK(slurp(dir / "small") == "[1]");
}

TEST_CASE("a write error in a background chunk is reported when the file is closed", "[writers]") {
  TempDir dir;
  OutFile f(dir / "out");
  set_write_fault(2, ENOSPC);  // the second chunk's write (the fault-injection seam, docs/testing.md)
  std::string row(1000, 'x');
  for (int i = 0; i < 1000; ++i) {  // ~1 MB: several chunks go to the I/O thread
    f.raw(row);
    f.commit();
  }
  CHECK_THROWS_WITH(f.close(), (dir / "out") + ": cannot write: No space left on device");
  set_write_fault(0, 0);
}

TEST_CASE("a scratch file that cannot be read back is an error, not a shorter output", "[writers]") {
  TempDir dir;
  OutFile f(dir / "out");
  CHECK_THROWS_WITH(f.append_file(dir / "missing"), (dir / "missing") + ": cannot read: No such file or directory");
  CHECK_THROWS_WITH(for_each_record<int>(dir / "missing", [](int) {}),
                    (dir / "missing") + ": cannot read: No such file or directory");
  f.close();
}

// ------------------------------------------------------------- scope stats

TEST_CASE("scope_stats writes the version 6 metadata line then one record per sample", "[writers]") {
  TempDir dir;
  auto w = make_scope_stats_writer(dir.path);
  std::string root, site = "some/dir/my_orch.cpp:42";
  ScopeSample x;
  x.site = &root;
  x.dep_pool_start = x.dep_pool_end = 1;
  w->on_scope_sample(x);
  ScopeSample y;
  y.site = &site;
  y.begin = false;
  y.depth = 1;
  y.ring = 1;
  y.task_window_start = 1;
  y.task_window_end = 3;
  y.heap_start = 65536;
  y.heap_end = 196608;
  y.dep_pool_start = 1;
  y.dep_pool_end = 3;
  y.tensormap = 2;
  w->on_scope_sample(y);
  // EXPLICIT_ORCH_FATAL goes through report_fatal, which sets the header's
  // fatal_latched (orch_report_fatal_v -> scope_stats_on_fatal).
  LatchedError e;
  e.code = ErrorCode::ExplicitOrchFatal;
  e.message = "st injected fatal";
  w->on_error(e);
  Scenario s;
  w->finish(s.info());

  REQUIRE(w->files() == std::vector<std::string>{"scope_stats/scope_stats.jsonl"});
  CHECK(dir.listing() == std::vector<std::string>{"scope_stats/scope_stats.jsonl"});  // scratch removed
  auto lines = cli::lines_of(slurp(dir / "scope_stats/scope_stats.jsonl"));
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] ==
        "{\"version\": 6, \"fatal\": true, \"dropped\": 0, \"total\": 2, "
        "\"task_window_max\": [16384, 16384, 1024, 16384], "
        "\"heap_max\": [268435456, 268435456, 2147483648, 268435456], "
        "\"dep_pool_max\": [16384, 16384, 16384, 8], \"tensormap_max\": 65536}");
  CHECK(lines[1] ==
        "{\"site\": \"(unknown):0\", \"phase\": \"begin\", \"depth\": 0, \"ring\": 0, "
        "\"task_window_start\": 0, \"task_window_end\": 0, \"heap_start\": 0, \"heap_end\": 0, "
        "\"dep_pool_start\": 1, \"dep_pool_end\": 1, \"tensormap\": 0}");
  CHECK(lines[2] ==
        "{\"site\": \"my_orch.cpp:42\", \"phase\": \"end\", \"depth\": 1, \"ring\": 1, "
        "\"task_window_start\": 1, \"task_window_end\": 3, \"heap_start\": 65536, \"heap_end\": 196608, "
        "\"dep_pool_start\": 1, \"dep_pool_end\": 3, \"tensormap\": 2}");
}

TEST_CASE("scope_stats sites keep a basename of at most 31 characters and escape quotes", "[writers]") {
  TempDir dir;
  auto w = make_scope_stats_writer(dir.path);
  std::string site = "a_very_long_orchestration_file_name.cpp:1234", quoted = "q\"x:5";
  ScopeSample x;
  x.site = &site;
  w->on_scope_sample(x);
  x.site = &quoted;
  w->on_scope_sample(x);
  Scenario s;
  w->finish(s.info());
  auto lines = cli::lines_of(slurp(dir / "scope_stats/scope_stats.jsonl"));
  REQUIRE(lines.size() == 3);
  CHECK(json::parse(lines[1])["site"] == "a_very_long_orchestration_file_:1234");
  CHECK(json::parse(lines[2])["site"] == "q\"x:5");
  CHECK(json::parse(lines[0])["fatal"] == false);
}

// ---------------------------------------------------------------- name map

TEST_CASE("name_map lists kernels by ascending func_id under the trace name", "[writers]") {
  TempDir dir;
  auto w = make_name_map_writer(dir.path);
  Scenario s;
  KernelDef attn = kernel("ATTN", 11, CoreType::MIX);
  RunInfo info = s.info();
  info.kernels = {&attn, &s.add, &s.qk};
  w->finish(info);
  REQUIRE(w->files() == std::vector<std::string>{"name_map_small.json"});
  CHECK(slurp(dir / "name_map_small.json") ==
        "{\"level\": 2, \"orchestrator_name\": \"small\", "
        "\"callable_id_to_name\": {\"0\": \"QK\", \"1\": \"ADD\", \"11\": \"ATTN\"}}\n");
}

// -------------------------------------------------------------------- deps

TEST_CASE("deps lists tasks with their args, skips alloc tasks, and marks manual scope and dummies",
          "[writers]") {
  TempDir dir;
  auto w = make_deps_writer(dir.path);
  KernelDef add = kernel("ADD", 1, CoreType::AIV), attn = kernel("ATTN", 11, CoreType::MIX);
  Tensor x = tensor(0x1000, DType::FP32, {4, 8}, {1, 0}, {2, 8});
  Tensor y = tensor(0x2000, DType::FP16, {16});
  Tensor z = tensor(0x3000, DType::INT8, {2, 3, 4}, {0, 1, 2}, {2, 2, 2});

  Task alloc = task(make_task_id(0, 0), nullptr);
  alloc.kind = TaskKind::Alloc;
  alloc.args = {y};
  alloc.arg_tags = {ArgTag::Output};
  Task t1 = task(make_task_id(0, 1), &add);
  t1.args = {x, y};
  t1.arg_tags = {ArgTag::Input, ArgTag::Output};
  Task t2 = task(make_task_id(1, 0), &attn, 4);
  t2.early_resolve = true;
  t2.args = {y, x, z};
  t2.arg_tags = {ArgTag::Inout, ArgTag::Input, ArgTag::NoDep};
  Task d = task(make_task_id(0, 2), nullptr);
  d.manual_scope = true;

  w->on_submitted(alloc, {}, {});
  w->on_submitted(t1, {}, {});
  w->on_submitted(t2, {}, {});
  w->on_submitted(d, {}, {});
  w->finish(Scenario().info());
  REQUIRE(w->files() == std::vector<std::string>{"deps.json"});
  CHECK(dir.listing() == std::vector<std::string>{"deps.json"});

  auto doc = ordered_json::parse(slurp(dir / "deps.json"));
  CHECK(keys_of(doc) == std::vector<std::string>{"tasks", "tensors", "edges"});
  const auto& tasks = doc["tasks"];
  REQUIRE(tasks.size() == 3);
  CHECK(keys_of(tasks[0]) ==
        std::vector<std::string>{"task_id", "scope", "early_dispatch", "kernel_ids", "block_num", "args"});
  CHECK(tasks[0]["task_id"] == "1");
  CHECK(tasks[0]["scope"] == "auto");
  CHECK(tasks[0]["early_dispatch"] == false);
  CHECK(tasks[0]["kernel_ids"] == ordered_json::array({-1, 1, -1}));
  CHECK(tasks[0]["block_num"] == 1);
  const auto& arg0 = tasks[0]["args"][0];
  CHECK(keys_of(arg0) ==
        std::vector<std::string>{"idx", "type", "tensor_id", "dtype", "shape", "start_offset", "strides"});
  CHECK(arg0["type"] == "INPUT");
  // FNV-1a-64 of the bytes 00 10 00 00 00 00 00 00 | 00 00 00 00, worked out by hand.
  CHECK(arg0["tensor_id"] == "5247134848181355493");
  CHECK(arg0["dtype"] == "FLOAT32");
  CHECK(arg0["shape"] == ordered_json::array({2, 8}));
  CHECK(arg0["start_offset"] == "8");
  CHECK(arg0["strides"] == ordered_json::array({8, 1}));
  CHECK(tasks[0]["args"][1] == ordered_json::parse(R"({"idx":1,"type":"OUTPUT"})"));

  CHECK(tasks[1]["task_id"] == "4294967296");
  CHECK(tasks[1]["early_dispatch"] == true);
  CHECK(tasks[1]["kernel_ids"] == ordered_json::array({11, 11, 11}));
  CHECK(tasks[1]["block_num"] == 4);
  CHECK(tasks[1]["args"][0]["type"] == "INOUT");
  CHECK(tasks[1]["args"][2]["type"] == "UNKNOWN");  // NO_DEP
  CHECK(tasks[1]["args"][2]["start_offset"] == "6");
  CHECK(tasks[1]["args"][2]["strides"] == ordered_json::array({12, 4, 1}));

  CHECK(tasks[2]["scope"] == "manual");
  CHECK(tasks[2]["kernel_ids"] == ordered_json::array({-1, -1, -1}));
  CHECK(tasks[2]["args"] == ordered_json::array());

  // x appears twice, listed once; in order of first sight.
  const auto& tensors = doc["tensors"];
  REQUIRE(tensors.size() == 3);
  CHECK(tensors[0] == ordered_json::parse(R"({"tensor_id":"5247134848181355493","buffer_addr":"4096",)"
                                          R"("version":0,"dtype":"FLOAT32","buffer_numel":"32"})"));
  CHECK(tensors[1]["tensor_id"] == "7751803121509639669");
  CHECK(tensors[1]["buffer_numel"] == "16");
  CHECK(tensors[2]["dtype"] == "INT8");
  CHECK(tensors[2]["buffer_numel"] == "24");
  CHECK(doc["edges"] == ordered_json::array());
}

// dep_gen_replay.cpp (dep_gen_replay_emit_deps_json, annot_pass,
// write_deps_json): explicit deps first, then per argument the creator edge
// (only for a producer without an edge in this task yet) and every tensormap
// match, newest entry first, each naming the producer entry's tensor.
TEST_CASE("deps edges carry the fields of their source, in the replay's order", "[writers]") {
  TempDir dir;
  auto w = make_deps_writer(dir.path);
  KernelDef add = kernel("ADD", 1, CoreType::AIV);
  Tensor whole = tensor(0x1000, DType::FP32, {4, 8});
  Tensor part = tensor(0x1000, DType::FP32, {4, 8}, {2, 0}, {1, 8});
  whole.version = 3;
  part.version = 3;
  Task t3 = task(make_task_id(0, 3), &add);  // writes the whole buffer
  t3.args = {whole};
  t3.arg_tags = {ArgTag::OutputExisting};
  Task t4 = task(make_task_id(0, 4), &add);  // then one row of it
  t4.args = {part};
  t4.arg_tags = {ArgTag::OutputExisting};
  Tensor read = part;
  read.owner = make_task_id(0, 2);
  Task t5 = task(make_task_id(0, 5), &add);
  t5.args = {read};
  t5.arg_tags = {ArgTag::Input};
  SubmitRequest r5;
  r5.deps = {make_task_id(0, 1), make_task_id(0, 1)};  // listed twice, one edge
  Task t6 = task(make_task_id(0, 6), &add);          // reads the row twice, creator also an explicit dep
  t6.args = {read, read};
  t6.arg_tags = {ArgTag::Input, ArgTag::Input};
  SubmitRequest r6;
  r6.deps = {make_task_id(0, 2)};
  w->on_submitted(t3, {}, {});
  w->on_submitted(t4, {}, {});
  w->on_submitted(t5, r5, {});
  w->on_submitted(t6, r6, {});
  w->finish(Scenario().info());

  const std::string text = slurp(dir / "deps.json");
  CHECK(text.find("],\"tensors\":[") != std::string::npos);  // no whitespace between the sections
  CHECK(text.find("],\"edges\":[") != std::string::npos);
  CHECK(text.back() == '\n');
  auto doc = ordered_json::parse(text);
  const auto& edges = doc["edges"];
  REQUIRE(edges.size() == 9);
  CHECK(edges[0] ==
        ordered_json::parse(R"({"pred":"1","succ":"5","arg":-1,"source":"explicit","flags":["wait","retain"]})"));
  CHECK(edges[1] == ordered_json::parse(
                        R"({"pred":"2","succ":"5","arg":0,"source":"creator","flags":["wait","retain"],)"
                        R"("tensor_id":"16774850196195639414","consumer_dtype":"FLOAT32","consumer_shape":[1,8],)"
                        R"("consumer_start_offset":"16","consumer_strides":[8,1]})"));
  CHECK(keys_of(edges[2]) == std::vector<std::string>{"pred", "succ", "arg", "source", "flags", "overlap", "tensor_id",
                                                      "consumer_dtype", "consumer_shape", "consumer_start_offset",
                                                      "consumer_strides", "producer_shape", "producer_start_offset",
                                                      "producer_strides"});
  CHECK(edges[2]["pred"] == "4");  // the newer entry first
  CHECK(edges[2]["flags"] == ordered_json::array({"wait"}));
  CHECK(edges[2]["overlap"] == "covered");
  CHECK(edges[2]["producer_shape"] == ordered_json::array({1, 8}));
  CHECK(edges[2]["producer_start_offset"] == "16");
  CHECK(edges[2]["producer_strides"] == ordered_json::array({8, 1}));
  CHECK(edges[3]["pred"] == "3");
  CHECK(edges[3]["overlap"] == "other");
  CHECK(edges[3]["producer_shape"] == ordered_json::array({4, 8}));
  // t6: the explicit edge to t2 takes the place of both creator edges; the
  // tensormap edges of both arguments are all listed.
  CHECK(edges[4]["source"] == "explicit");
  CHECK(edges[4]["pred"] == "2");
  for (int k = 5; k < 9; ++k) CHECK(edges[k]["source"] == "tensormap");
  CHECK(edges[5]["arg"] == 0);
  CHECK(edges[6]["arg"] == 0);
  CHECK(edges[7]["arg"] == 1);
  CHECK(edges[8]["arg"] == 1);
  CHECK(edges[8]["pred"] == "3");
  CHECK(doc["tensors"].size() == 1);
}

// INOUT removes the entries it covers from the replay's tensormap
// (annot_pass: remove_entry on COVERED), after they matched.
TEST_CASE("deps: an INOUT that covers an earlier write replaces it in the replay", "[writers]") {
  TempDir dir;
  auto w = make_deps_writer(dir.path);
  KernelDef add = kernel("ADD", 1, CoreType::AIV);
  Tensor x = tensor(0x2000, DType::FP32, {8});
  Task a = task(make_task_id(0, 0), &add), b = task(make_task_id(0, 1), &add), c = task(make_task_id(0, 2), &add);
  a.args = b.args = c.args = {x};
  a.arg_tags = {ArgTag::OutputExisting};
  b.arg_tags = {ArgTag::Inout};
  c.arg_tags = {ArgTag::Input};
  w->on_submitted(a, {}, {});
  w->on_submitted(b, {}, {});
  w->on_submitted(c, {}, {});
  w->finish(Scenario().info());
  auto doc = ordered_json::parse(slurp(dir / "deps.json"));
  const auto& edges = doc["edges"];
  REQUIRE(edges.size() == 2);
  CHECK(edges[0]["pred"] == "0");
  CHECK(edges[0]["succ"] == "1");
  CHECK(edges[1]["pred"] == "1");  // not a: b's covering write removed a's entry
  CHECK(edges[1]["succ"] == "2");
}

// ----------------------------------------------------------- chip swimlane

TEST_CASE("chip swimlane level 1 has AICore rows in cycles and nothing of the AICPU", "[writers]") {
  TempDir dir;
  auto w = make_chip_swimlane_writer(dir.path, 1);
  scenario_file(*w, dir.path, "chip_swimlane_records.json");
  auto doc = ordered_json::parse(slurp(dir / "chip_swimlane_records.json"));
  CHECK(keys_of(doc) == std::vector<std::string>{"chip_swimlane_level", "metadata", "aicore_tasks", "aicpu_tasks"});
  CHECK(doc["chip_swimlane_level"] == 1);
  CHECK(keys_of(doc["metadata"]) == std::vector<std::string>{"clock_freq_hz", "num_cores", "core_types"});
  CHECK(doc["metadata"]["clock_freq_hz"] == 50000000);
  CHECK(doc["metadata"]["num_cores"] == 6);
  CHECK(doc["metadata"]["core_types"] == ordered_json::array({"aic", "aic", "aiv", "aiv", "aiv", "aiv"}));
  // QK: start 1.5 µs = 1000 + 75, end 3 µs = 1150, receive 1.2 µs = 1060.
  CHECK(doc["aicore_tasks"] == ordered_json::parse("[[0, 0, 1, 1075, 1150, 15], [2, 4294967296, 2, 1215, 1300, 10]]"));
  CHECK(doc["aicpu_tasks"] == ordered_json::array());
  CHECK(dir.listing() == std::vector<std::string>{"chip_swimlane_records.json"});
}

TEST_CASE("chip swimlane level 3 adds AICPU rows, core_to_thread and four scheduler arrays", "[writers]") {
  TempDir dir;
  auto w = make_chip_swimlane_writer(dir.path, 3);
  scenario_file(*w, dir.path, "chip_swimlane_records.json");
  auto doc = ordered_json::parse(slurp(dir / "chip_swimlane_records.json"));
  CHECK(keys_of(doc) == std::vector<std::string>{"chip_swimlane_level", "metadata", "aicore_tasks", "aicpu_tasks",
                                                  "aicpu_scheduler_phases"});
  // Cluster ci = {AIC ci, AIV 2+2ci, AIV 3+2ci} -> thread ci % 3.
  CHECK(doc["metadata"]["core_to_thread"] == ordered_json::array({0, 1, 0, 0, 1, 1}));
  CHECK(doc["aicpu_tasks"] == ordered_json::parse("[[0, 1, 1050, 1160], [2, 2, 1200, 1302]]"));
  const auto& phases = doc["aicpu_scheduler_phases"];
  REQUIRE(phases.size() == 4);
  REQUIRE(phases[0].size() == 2);
  CHECK(phases[1] == ordered_json::array());
  CHECK(phases[3] == ordered_json::array());
  CHECK(keys_of(phases[0][0]) == std::vector<std::string>{"kind", "start_cycles", "end_cycles", "loop_iter",
                                                          "tasks_processed", "pop_hit", "pop_miss",
                                                          "shared_at_start", "shared_at_end"});
  CHECK(phases[0][0] == ordered_json::parse(R"({"kind": "dispatch", "start_cycles": 1045, "end_cycles": 1055,
      "loop_iter": 7, "tasks_processed": 1, "pop_hit": 1, "pop_miss": 2, "shared_at_start": [1,0,0],
      "shared_at_end": [0,0,0]})"));
  CHECK(keys_of(phases[0][1]) == std::vector<std::string>{"kind", "start_cycles", "end_cycles", "loop_iter",
                                                          "tasks_processed", "shared_at_start", "shared_at_end"});
  CHECK(phases[0][1]["shared_at_end"] == ordered_json::array({0, 1, 0}));
  REQUIRE(phases[2].size() == 1);
  CHECK(keys_of(phases[2][0]) == std::vector<std::string>{"kind", "start_cycles", "end_cycles", "loop_iter",
                                                          "tasks_processed", "task_id", "shared_at_start",
                                                          "shared_at_end"});
  CHECK(phases[2][0]["kind"] == "dummy_task");
  CHECK(phases[2][0]["task_id"] == 2);
}

TEST_CASE("chip swimlane level 4 adds the orchestrator phases", "[writers]") {
  TempDir dir;
  auto w = make_chip_swimlane_writer(dir.path, 4);
  scenario_file(*w, dir.path, "chip_swimlane_records.json");
  auto doc = ordered_json::parse(slurp(dir / "chip_swimlane_records.json"));
  CHECK(doc["chip_swimlane_level"] == 4);
  const auto& orch = doc["aicpu_orchestrator_phases"];
  REQUIRE(orch.size() == 1);
  REQUIRE(orch[0].size() == 4);
  CHECK(orch[0][0] == ordered_json::parse(R"({"submit_idx": 0, "task_id": 1, "start_cycles": 1000, "end_cycles": 1015})"));
  CHECK(orch[0][2]["task_id"] == 4294967296ull);
  CHECK(orch[0][3]["end_cycles"] == 1055);
  CHECK(doc["aicpu_scheduler_phases"].size() == 4);
}

TEST_CASE("chip swimlane clamps queue depths to int16", "[writers]") {
  TempDir dir;
  auto w = make_chip_swimlane_writer(dir.path, 3);
  auto r = phase(1, SchedPhase::Release, 0, us(1), 3);
  r.shared_at_start = {40000, -40000, 5};
  w->on_sched_phase(r);
  w->finish(Scenario().info());
  auto doc = ordered_json::parse(slurp(dir / "chip_swimlane_records.json"));
  CHECK(doc["aicpu_scheduler_phases"][1][0]["shared_at_start"] == ordered_json::array({32767, -32768, 5}));
  CHECK(doc["aicore_tasks"] == ordered_json::array());
}

// --------------------------------------------------------------- perfetto

TEST_CASE("perfetto trace names processes and lanes with metadata events", "[writers]") {
  TempDir dir;
  auto w = make_perfetto_writer(dir.path, 4);
  json trace = scenario_file(*w, dir.path, "merged_swimlane.json");
  auto meta = [&](const char* name, int pid, int tid = -1) {
    auto v = events_where(trace, [&](const json& e) {
      return e["ph"] == "M" && e["name"] == name && e["pid"] == pid && (tid < 0 || e["tid"] == tid);
    });
    REQUIRE(v.size() == 1);
    CHECK(v[0]["cat"] == "__metadata");
    return v[0]["args"];
  };
  CHECK(meta("process_name", 1)["name"] == "AICPU Orchestrator");
  CHECK(meta("process_name", 2)["name"] == "AICPU Scheduler");
  CHECK(meta("process_name", 3)["name"] == "Scheduler View");
  CHECK(meta("process_name", 4)["name"] == "Worker View");
  CHECK(meta("process_sort_index", 4)["sort_index"] == 4);
  CHECK(meta("thread_name", 1, 4000)["name"] == "Orch_0");
  CHECK(meta("thread_name", 2, 30000)["name"] == "Sched_0");
  CHECK(meta("thread_name", 2, 30020)["name"] == "Sched_2");
  CHECK(meta("thread_name", 2, 3999)["name"] == "shared_ready_queue (global)");
  CHECK(meta("thread_sort_index", 2, 3999)["sort_index"] == 100);
  CHECK(meta("thread_name", 4, 10000)["name"] == "AIC_0");
  CHECK(meta("thread_name", 4, 10020)["name"] == "AIV_2");
  CHECK(meta("thread_name", 4, 19002)["name"] == "AICPU_2");  // the dummy marker's thread
  CHECK(meta("thread_name", 4, 19003)["name"] == "AICPU_3");  // the orchestrator (alloc)
  CHECK(meta("thread_name", 3, 10000)["name"] == "AIC_0");
  // Metadata comes last, once every lane is known.
  CHECK(trace["traceEvents"].back()["ph"] == "M");
  CHECK(dir.listing() == std::vector<std::string>{"merged_swimlane.json"});
}

TEST_CASE("perfetto worker bars carry the converter's args and a dependency flow pair", "[writers]") {
  TempDir dir;
  auto w = make_perfetto_writer(dir.path, 3);
  json trace = scenario_file(*w, dir.path, "merged_swimlane.json");
  auto bars = events_where(trace, [](const json& e) { return e["ph"] == "X" && e["pid"] == 4 && e["cat"] == "event"; });
  REQUIRE(bars.size() == 2);
  const json& qk = bars[0];
  CHECK(qk["name"] == "QK(t0)");
  CHECK(qk["tid"] == 10000);
  CHECK(qk["ts"] == 1.2);
  CHECK(qk["dur"] == 1.8);
  CHECK(qk["args"] == json::parse(R"({"event-hint": "Task:t0, FuncId:0, CoreId:0", "fanout-hint": "1: [r1t0]",
      "fanin-hint": "0: []", "duration-us": 1.8, "kernel-duration-us": 1.5, "local_setup_us": 0.3, "taskId": 0})"));
  const json& add = bars[1];
  CHECK(add["name"] == "ADD(r1t0)");
  CHECK(add["tid"] == 10020);
  CHECK(add["args"]["fanin-hint"] == "2: [t0, t1]");
  CHECK(add["args"]["fanout-hint"] == "1: [t2]");
  CHECK(add["args"]["taskId"] == 4294967296ull);

  // Dependency t0 -> r1t0: from inside QK's bar end to ADD's bar start. The
  // alloc producer t1 has no bar, so no flow from it.
  auto dep = events_where(trace, [](const json& e) { return e["cat"] == "flow" && e["name"] == "dependency"; });
  REQUIRE(dep.size() == 2);
  CHECK(dep[0]["ph"] == "s");
  CHECK(dep[0]["pid"] == 4);
  CHECK(dep[0]["tid"] == 10000);
  CHECK(dep[0]["ts"] == 2.99);
  CHECK(dep[1]["ph"] == "f");
  CHECK(dep[1]["bp"] == "e");
  CHECK(dep[1]["tid"] == 10020);
  CHECK(dep[1]["ts"] == 4.1);
  CHECK(dep[0]["id"] == dep[1]["id"]);

  // Dispatch flows: scheduler lane at dispatch -> worker lane at kernel start.
  auto disp = events_where(trace, [](const json& e) { return e["cat"] == "flow" && e["name"] == "dispatch"; });
  REQUIRE(disp.size() == 4);
  CHECK(disp[0]["pid"] == 2);
  CHECK(disp[0]["tid"] == 30000);
  CHECK(disp[0]["ts"] == 1.0);
  CHECK(disp[1]["pid"] == 4);
  CHECK(disp[1]["ts"] == 1.5);
  CHECK(disp[2]["tid"] == 30010);
}

TEST_CASE("perfetto scheduler phases, queue counter, dummy marker and alloc marker", "[writers]") {
  TempDir dir;
  auto w = make_perfetto_writer(dir.path, 4);
  json trace = scenario_file(*w, dir.path, "merged_swimlane.json");
  auto sched = events_where(trace, [](const json& e) { return e["ph"] == "X" && e["pid"] == 2; });
  REQUIRE(sched.size() == 2);
  CHECK(sched[0]["name"] == "dispatch(1)");
  CHECK(sched[0]["cname"] == "terrible");
  CHECK(sched[0]["cat"] == "scheduler");
  CHECK(sched[0]["ts"] == 0.9);
  CHECK(sched[0]["dur"] == 0.2);
  CHECK(sched[0]["args"]["shared_at_start (aic,aiv,mix)"] == json::array({1, 0, 0}));
  CHECK(sched[1]["name"] == "complete(1)");
  CHECK(sched[1]["cname"] == "good");
  CHECK(sched[1]["args"]["finishes_processed"] == 1);
  auto counters = events_where(trace, [](const json& e) { return e["ph"] == "C" && e["cat"] == "queue"; });
  REQUIRE(counters.size() == 2);
  CHECK(counters[1]["args"] == json::parse(R"({"AIC": 0, "AIV": 1, "MIX": 0})"));
  CHECK(counters[1]["tid"] == 3999);
  CHECK(counters[1]["ts"] == 3.4);

  auto dummy = events_where(trace, [](const json& e) { return e["ph"] == "X" && e["tid"] == 19002; });
  REQUIRE(dummy.size() == 1);
  CHECK(dummy[0]["name"] == "dummy(t2)");
  CHECK(dummy[0]["dur"] == 0.02);
  CHECK(dummy[0]["args"]["phase"] == "dummy_task");

  auto orch = events_where(trace, [](const json& e) { return e["ph"] == "X" && e["pid"] == 1; });
  REQUIRE(orch.size() == 4);
  CHECK(orch[1]["name"] == "submit(t0)");
  CHECK(orch[1]["args"] == json::parse(R"({"phase": "orch_submit", "submit_idx": 1, "task_id": 0})"));
  auto alloc = events_where(trace, [](const json& e) { return e["ph"] == "X" && e["tid"] == 19003; });
  REQUIRE(alloc.size() == 1);
  CHECK(alloc[0]["name"] == "alloc(t1)");
  CHECK(alloc[0]["dur"] == 0.3);
}

TEST_CASE("perfetto scheduler view puts a block dispatched into the pending slot on the overflow lane",
          "[writers]") {
  TempDir dir;
  auto w = make_perfetto_writer(dir.path, 2);
  KernelDef k = kernel("spmd_mul", 3, CoreType::AIV), plain = kernel("MUL", 4, CoreType::AIV);
  Task t = task(make_task_id(2, 7), &k, 2);
  Task u = task(make_task_id(0, 9), &plain, 3);
  t.blocks.push_back(block(3, 1, us(1), us(1), us(1), us(2), us(2)));
  t.blocks.push_back(block(3, 2, us(1) + 500000, us(2), us(2), us(3), us(3)));  // pending while block 0 runs
  u.blocks.push_back(block(3, 3, us(4), us(4), us(4), us(5), us(5)));
  w->on_submitted(t, {}, {});
  w->on_submitted(u, {}, {});
  for (const auto& b : t.blocks) w->on_block_finished(t, b);
  w->on_block_finished(u, u.blocks[0]);
  w->on_retired(t);
  w->on_retired(u);
  w->finish(Scenario().info());
  json trace = json::parse(slurp(dir / "merged_swimlane.json"));
  auto view = events_where(trace, [](const json& e) { return e["ph"] == "X" && e["pid"] == 3; });
  REQUIRE(view.size() == 3);
  CHECK(view[0]["tid"] == 10030);
  CHECK(view[1]["tid"] == 10031);
  CHECK(view[2]["tid"] == 10030);
  CHECK(view[0]["name"] == "spmd_mul(r2t7)");  // already says spmd
  CHECK(view[2]["name"] == "MUL_spmd(t9)");
  CHECK(view[1]["args"]["dispatch-time-us"] == 1.5);
  CHECK(view[1]["args"]["aicpu-duration-us"] == 1.5);
  auto names = events_where(trace, [](const json& e) { return e["name"] == "thread_name" && e["pid"] == 3; });
  REQUIRE(names.size() == 2);
  CHECK(names[1]["tid"] == 10031);
  // Level 2: no scheduler process, no dispatch flows.
  CHECK(events_where(trace, [](const json& e) { return e["pid"] == 2; }).empty());
  CHECK(events_where(trace, [](const json& e) { return e["cat"] == "flow"; }).empty());
}

TEST_CASE("perfetto draws a predicated skip as a marker with the task's label", "[writers]") {
  TempDir dir;
  auto w = make_perfetto_writer(dir.path, 3);
  KernelDef k = kernel("SKIPPED", 9, CoreType::AIC);
  Task t = task(make_task_id(3, 4), &k, 2);
  t.predicate_false = true;
  w->on_submitted(t, {}, {});
  auto m = phase(1, SchedPhase::PredicatedSkip, us(2), us(2), 1);
  m.task_id = t.id;
  w->on_sched_phase(m);
  w->on_retired(t);
  w->finish(Scenario().info());
  json trace = json::parse(slurp(dir / "merged_swimlane.json"));
  auto marks = events_where(trace, [](const json& e) { return e["ph"] == "X"; });
  REQUIRE(marks.size() == 1);
  CHECK(marks[0]["name"] == "SKIPPED_spmd(r3t4)");
  CHECK(marks[0]["pid"] == 4);
  CHECK(marks[0]["tid"] == 19001);
  CHECK(marks[0]["ts"] == 2.0);
  CHECK(marks[0]["dur"] == 0.02);
  CHECK(marks[0]["args"]["phase"] == "predicated_skip");
  CHECK(marks[0]["args"]["predicated_pass"] == false);
}

TEST_CASE("perfetto level 1 draws only the worker view", "[writers]") {
  TempDir dir;
  auto w = make_perfetto_writer(dir.path, 1);
  json trace = scenario_file(*w, dir.path, "merged_swimlane.json");
  for (const json& e : trace["traceEvents"]) CHECK(e["pid"] == 4);
  CHECK(events_where(trace, [](const json& e) { return e["name"] == "dependency"; }).size() == 2);
}

// ------------------------------------------------------------- all writers

TEST_CASE("writers produce identical bytes for identical events and leave no scratch files", "[writers]") {
  TempDir one, two;
  run_scenario(one.path, 4);
  run_scenario(two.path, 4);
  auto files = one.listing();
  CHECK(files == std::vector<std::string>{"chip_swimlane_records.json", "deps.json", "merged_swimlane.json",
                                          "name_map_small.json", "scope_stats/scope_stats.jsonl"});
  CHECK(two.listing() == files);
  for (const auto& f : files) {
    INFO(f);
    CHECK(slurp(one / f) == slurp(two / f));
  }
}

TEST_CASE("a writer destroyed without finishing removes its scratch files", "[writers]") {
  TempDir dir;
  {
    auto writers = all_writers(dir.path, 4);
    // One scenario each: playing one hands its block records over (the
    // scheduler's contract: a finished block leaves its task).
    std::vector<Scenario> s(writers.size());
    for (std::size_t i = 0; i < writers.size(); ++i) s[i].play(*writers[i]);
  }
  CHECK(dir.listing().empty());
}

// Not run by ctest: `npusim_tests "[.bench]" -s` prints each writer's cost
// per event (6 events a task: submit, orchestrator record, dispatch phase,
// block, complete phase, retire) and its finish() cost per task.
TEST_CASE("writers cost per event", "[.bench]") {
  KernelDef k = kernel("ADD", 1, CoreType::AIV);
  Tensor x = tensor(0x1000, DType::FP32, {64, 64}, {0, 0}, {16, 64});
  const int n = 200000;
  // The tasks of a chain, built before timing; each retires after its successor ran.
  std::vector<Task> tasks;
  tasks.reserve(n);
  for (int i = 0; i < n; ++i) {
    Task t = task(make_task_id(0, static_cast<std::uint64_t>(i)), &k);
    t.args = {x, x};
    t.arg_tags = {ArgTag::Input, ArgTag::Output};
    if (i) {
      t.fanin = {{tasks.back().id, kDepWait}};
      tasks.back().all_consumers = {t.id};
      t.args[0].owner = tasks.back().id;  // a creator edge
    }
    Time base = us(static_cast<std::uint64_t>(i));
    t.blocks.push_back(block(2 + i % 4, static_cast<std::uint32_t>(i), base, base + 100000, base + 200000,
                             base + 800000, base + 900000, i % 3));
    tasks.push_back(std::move(t));
  }
  const char* names[] = {"chip_swimlane", "perfetto", "deps", "scope_stats", "name_map", "all five"};
  for (int which = 0; which < 6; ++which) {
    TempDir dir;
    auto writers = all_writers(dir.path, 4);
    ObserverFanout fan;
    for (int w = 0; w < 5; ++w)
      if (which == 5 || which == w) fan.add(writers[w].get());
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) {
      Task& t = tasks[i];
      Time base = us(static_cast<std::uint64_t>(i));
      fan.on_submitted(t, {}, {});
      fan.on_orch_submit({static_cast<std::uint64_t>(i), t.id, TaskKind::Kernel, base, base + 50000});
      fan.on_sched_phase(phase(i % 3, SchedPhase::Dispatch, base, base + 10000, 1));
      fan.on_block_finished(t, t.blocks[0]);
      fan.on_sched_phase(phase(i % 3, SchedPhase::Complete, base + 900000, base + 950000, 1));
      if (i) fan.on_retired(tasks[i - 1]);
    }
    fan.on_retired(tasks.back());
    auto t1 = std::chrono::steady_clock::now();
    Scenario s;
    for (auto& w : writers) w->finish(s.info());
    auto t2 = std::chrono::steady_clock::now();
    double ev = std::chrono::duration<double, std::nano>(t1 - t0).count() / (6.0 * n);
    double fin = std::chrono::duration<double, std::nano>(t2 - t1).count() / n;
    WARN(names[which] << ": " << ev << " ns per event, finish " << fin << " ns per task (" << n << " tasks)");
  }
}

namespace {
// Logs each hook it is called for, as "<name>:<hook>".
class HookLog : public SimObserver {
 public:
  HookLog(std::vector<std::string>& log, std::string name, std::uint32_t mask)
      : log_(log), name_(std::move(name)), mask_(mask) {}
  std::uint32_t hooks() const override { return mask_; }
  void on_submitted(const Task&, const SubmitRequest&, const std::vector<EdgeInfo>&) override { put("submitted"); }
  void on_ready(Task&) override { put("ready"); }
  void on_completed(Task&) override { put("completed"); }
  void on_retired(Task&) override { put("retired"); }
  void on_block_finished(const Task&, const BlockRecord&) override { put("block"); }
  void on_sched_phase(const SchedPhaseRecord&) override { put("phase"); }
  void on_orch_submit(const OrchSubmitRecord&) override { put("orch"); }

 private:
  void put(const char* h) { log_.push_back(name_ + ":" + h); }
  std::vector<std::string>& log_;
  std::string name_;
  std::uint32_t mask_;
};
}  // namespace

TEST_CASE("the observer fan-out calls each observer for the hooks it names only - in the order added", "[writers]") {
  std::vector<std::string> log;
  HookLog all(log, "all", hook::All), phases(log, "phases", hook::SchedPhase | hook::Retired),
      none(log, "none", 0), mask(log, "mask", hook::All);
  ObserverFanout fan;
  fan.add(&all);
  fan.add(&phases);
  fan.add(&none);
  fan.add(&mask, hook::Ready | hook::SchedPhase);  // the mask given, not the observer's
  fan.add(nullptr);
  Task t;
  SubmitRequest q;
  BlockRecord b;
  fan.on_submitted(t, q, {});     // one observer: the tail call
  fan.on_ready(t);                // two
  fan.on_sched_phase({});         // three
  fan.on_retired(t);              // two
  fan.on_block_finished(t, b);    // one
  fan.on_orch_submit({});         // one
  fan.on_completed(t);            // one
  fan.on_ring_progress(0);        // nobody overrides it: the default, nothing logged
  CHECK(log == std::vector<std::string>{"all:submitted", "all:ready", "mask:ready", "all:phase", "phases:phase",
                                        "mask:phase", "all:retired", "phases:retired", "all:block", "all:orch",
                                        "all:completed"});
  ObserverFanout empty;
  empty.on_sched_phase({});  // no observer: nothing to call
  CHECK(empty.empty());
}
