// Conformance of the tensormap's lookup with the runtime's source
// (hw-native-sys/simpler src/a2a3/runtime/tensormap_and_ringbuffer/runtime/
// pto_tensormap.h): check_overlap's reference shape read from the padded
// storage of a runtime-allocated output, and the bucket chain a lookup walks.
// Plain C++ on the tiny platform, the runtime driven without time.
#include "tests/catch.h"

#include <memory>
#include <vector>

#include "models/runtime/runtime.h"
#include "models/runtime/tensormap.h"
#include "tests/runtime_fixture.h"

using namespace npusim;
using namespace testing_support;

namespace {

struct Rt {
  Platform platform = tiny_platform();
  RunConfig config = config_for(platform);
  DataStore data;
  std::unique_ptr<Runtime> rt;
  std::unique_ptr<KernelDef> k = kernel("K", 0, CoreType::AIV, 1000);
  SubmitProgress p;  // the last submit's

  Rt() {
    rt = std::make_unique<Runtime>(platform, config, data, nullptr);
    rt->begin_orchestration();
  }
  Task* sub(std::vector<SubmitArg> args) {
    const SubmitRequest r = submit(k.get(), std::move(args));
    p = SubmitProgress{};
    if (rt->submit_prepare(r, p, false, 0).kind != SubmitStatus::Kind::Done) return nullptr;
    if (rt->submit_wire(p).kind != SubmitStatus::Kind::Done) return nullptr;
    rt->submit_commit(r, p, 0);
    return p.task;
  }
  Tensor output(Task* t) {
    std::vector<Tensor> outs;
    rt->outputs_of(*t, outs);
    return outs.at(0);
  }
};

SubmitArg out2(std::int64_t rows, std::int64_t cols) {
  SubmitArg a = out(rows * cols);
  a.tensor.ndims = 2;
  a.tensor.shape = {rows, cols};
  a.tensor.buf_shape = {rows, cols};
  return a;
}

// Columns [c0, c0 + n) of every row of a 2-D tensor.
Tensor cols(Tensor t, std::int64_t c0, std::int64_t n) {
  t.offset = {0, c0};
  t.shape = {t.buf_shape[0], n};
  return t;
}

bool waits_for(const Task* t, TaskId producer) {
  for (const FaninRef& f : t->fanin)
    if (f.producer == producer) return true;
  return false;
}

}  // namespace

// pto_tensormap.h PTO2TensorMapEntry::check_overlap: the reference shape's
// first extent is input.buffer.size / elem_size / strides[0], else OTHER when
// that does not divide; pto_orchestrator.cpp calculate_output_layout and
// pto_runtime2_types.h PTO2TaskPayload::init give a runtime-allocated
// output's buffer.size padded to PTO2_PACKED_OUTPUT_ALIGN (1024 B).
// A [3, 100] fp32 output is 1200 B, stored as 2048 B = 512 elements, and
// 512 % 100 = 12: the left and right column halves (linear extents [0, 250)
// and [50, 300) meet) are OTHER, a dependency, although the boxes are
// disjoint. A [4, 256] output is 4096 B, unpadded: 1024 % 256 = 0 and the
// halves are NO_OVERLAP. An external [3, 100] tensor's buffer.size is its
// 1200 B: 300 % 100 = 0, NO_OVERLAP.
TEST_CASE("check_overlap reads an output's padded storage: disjoint boxes depend", "[conformance]") {
  Rt h;
  Task* c = h.sub({out2(3, 100)});
  REQUIRE(c);
  const Tensor y = h.output(c);
  CHECK(y.storage_bytes == 2048);
  CHECK(y.storage_numel() == 512);
  CHECK(view_overlap(cols(y, 50, 50), cols(y, 0, 50)) == Overlap::Other);
  Task* w = h.sub({arg(ArgTag::Inout, cols(y, 0, 50))});
  REQUIRE(w);
  Task* r = h.sub({arg(ArgTag::Input, cols(y, 50, 50))});
  REQUIRE(r);
  CHECK(waits_for(r, c->id));  // the creator (Step A)
  CHECK(waits_for(r, w->id));  // the tensormap: OTHER
  CHECK(r->fanin.size() == 2);

  Task* c2 = h.sub({out2(4, 256)});
  REQUIRE(c2);
  const Tensor z = h.output(c2);
  CHECK(z.storage_bytes == 4096);
  CHECK(view_overlap(cols(z, 128, 128), cols(z, 0, 128)) == Overlap::None);
  Task* w2 = h.sub({arg(ArgTag::Inout, cols(z, 0, 128))});
  Task* r2 = h.sub({arg(ArgTag::Input, cols(z, 128, 128))});
  REQUIRE((w2 && r2));
  CHECK_FALSE(waits_for(r2, w2->id));
  CHECK(r2->fanin.size() == 1);  // the creator only

  Tensor x = h.data.add_external("x", DType::FP32, {3, 100}, 0, {});
  CHECK(x.storage_numel() == 300);
  CHECK(view_overlap(cols(x, 50, 50), cols(x, 0, 50)) == Overlap::None);
}

// pto_tensormap.h PTO2TensorMap::lookup walks the whole chain of
// buckets[hash(addr)] (PTO2_TENSORMAP_NUM_BUCKETS 4096, hash() the top 12
// bits of addr * 0x9E3779B97F4A7C15): every entry not yet freed, stale ones
// (entry_valid false, skipped without truncating the chain) and entries of
// other addresses of the bucket included; pto_dep_compute.h's callback stops
// the walk only on a fatal. The submit is charged orch.lookup_ns per lookup
// plus orch.lookup_entry_ns per entry walked (models/aicpu/orchestrator.cpp).
TEST_CASE("a lookup walks the whole bucket chain, stale entries included", "[conformance]") {
  CHECK(TensorMap::bucket_of(0) == 0);
  CHECK(TensorMap::bucket_of(1) == 0x9E3);  // the top 12 bits of the constant
  Rt h;
  const Tensor t = h.data.add_external("t", DType::FP32, {64}, 0, {});
  // Another address in t's bucket: an external buffer found by its hash.
  Tensor other;
  for (int i = 0; i < 100000 && other.ndims == 0; ++i) {
    Tensor e = h.data.add_external("e", DType::FP32, {1}, 0, {});
    if (TensorMap::bucket_of(e.addr) == TensorMap::bucket_of(t.addr)) other = e;
  }
  REQUIRE(other.ndims == 1);
  REQUIRE(other.addr != t.addr);
  auto scoped = [&](std::vector<SubmitArg> args) {  // ring 1
    h.rt->scope_begin(ScopeMode::Auto, "s");
    Task* task = h.sub(std::move(args));
    h.rt->scope_end();
    return task;
  };
  REQUIRE(h.sub({arg(ArgTag::Input, t)}));
  CHECK(h.p.work.lookups == 1);
  CHECK(h.p.work.lookup_entries == 0);  // an empty chain
  Task* w1 = scoped({arg(ArgTag::Inout, view(t, 0, 32))});
  Task* w2 = h.sub({arg(ArgTag::OutputExisting, view(t, 32, 32))});
  Task* wo = h.sub({arg(ArgTag::OutputExisting, other)});
  REQUIRE((w1 && w2 && wo));
  CHECK(h.p.work.lookups == 0);  // OUTPUT_EXISTING: an insert, no lookup
  // The chain holds w1's and w2's entries of t and wo's of the other address.
  Task* r = h.sub({arg(ArgTag::Input, view(t, 0, 8))});
  REQUIRE(r);
  CHECK(h.p.work.lookups == 1);
  CHECK(h.p.work.lookup_entries == 3);
  CHECK(waits_for(r, w1->id));
  CHECK_FALSE(waits_for(r, w2->id));
  // w1 retires: its entry is stale once the map syncs ring 1 (at a ring-1
  // submit), but not freed before the periodic cleanup (every 64 retired
  // tasks): the chain still has 3 entries, w1's skipped.
  SubmitWork work;
  h.rt->complete_task(*w1, 0, work);
  h.rt->release_task(*w1);
  REQUIRE(h.rt->retired(w1->id));
  Task* r2 = scoped({arg(ArgTag::Input, view(t, 0, 8))});
  REQUIRE(r2);
  CHECK(h.p.work.lookup_entries == 3);
  CHECK(r2->fanin.empty());
  // A forced reclaim frees w1's entry: the chain is 2 long.
  std::array<std::uint64_t, kNumRings> alive{};
  for (int ring = 0; ring < kNumRings; ++ring) alive[ring] = h.rt->ring(ring).tail();
  CHECK(h.rt->tensormap().reclaim_all(alive) == 1);
  REQUIRE(h.sub({arg(ArgTag::Input, view(t, 0, 8))}));
  CHECK(h.p.work.lookup_entries == 2);
}
