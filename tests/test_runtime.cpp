// The runtime's rules on their own (no SystemC): dependency discovery per
// tag, fanin/fanout accounting, rings, heap packing and wrap, FIFO reclaim,
// scopes and the capacity fatals that are detected at submit.
#include "tests/catch.h"

#include "models/runtime/runtime.h"
#include "tests/runtime_harness.h"

using namespace npusim;
using namespace testing_support;

namespace {

bool has_edge(const std::vector<EdgeInfo>& es, TaskId pred, EdgeSource src) {
  for (const auto& e : es)
    if (e.pred == pred && e.source == src) return true;
  return false;
}

}  // namespace

TEST_CASE("a creator edge links a consumer to the task that made its input", "[runtime]") {
  Harness h;
  Task* a = h.sub(submit(h.k.get(), {out(256)}));
  REQUIRE(a);
  Task* b = h.sub(submit(h.k.get(), {arg(ArgTag::Input, h.output(a))}));
  REQUIRE(b);
  REQUIRE(h.rec.edges[1].size() == 1);
  CHECK(h.rec.edges[1][0].source == EdgeSource::Creator);
  CHECK(h.rec.edges[1][0].flags == (kDepWait | kDepRetain));
  CHECK(b->fanin_count == 2);  // one WAIT edge + the wiring guard
  CHECK_FALSE(b->is_ready());
  CHECK(h.rt->queue_size(Shape::AIV, false) == 1);  // only a
  h.rt->pop_ready(Shape::AIV, false);
  SubmitWork w;
  CHECK(h.rt->complete_task(*a, 0, w) == 1);  // one consumer visited
  CHECK(b->is_ready());
  CHECK(w.ready_pushes == 1);
  CHECK(h.rt->pop_ready(Shape::AIV, false) == b);
}

TEST_CASE("an INPUT reader creates no WAR edge and INOUT chains writers", "[runtime]") {
  Harness h;
  Tensor x = h.ext(1024);
  Task* w1 = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, x)}));
  Task* r = h.sub(submit(h.k.get(), {arg(ArgTag::Input, x)}));
  Task* w2 = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, x)}));
  REQUIRE((w1 && r && w2));
  CHECK(h.rec.edges[0].empty());
  REQUIRE(h.rec.edges[1].size() == 1);
  CHECK(h.rec.edges[1][0].pred == w1->id);
  CHECK(h.rec.edges[1][0].source == EdgeSource::Tensormap);
  CHECK(h.rec.edges[1][0].overlap == Overlap::Covered);
  // The second writer depends on the first writer only, never on the reader.
  REQUIRE(h.rec.edges[2].size() == 1);
  CHECK(h.rec.edges[2][0].pred == w1->id);
  CHECK_FALSE(has_edge(h.rec.edges[2], r->id, EdgeSource::Tensormap));
}

TEST_CASE("OUTPUT_EXISTING registers as a writer without looking up earlier ones", "[runtime]") {
  Harness h;
  Tensor x = h.ext(1024);
  Task* w1 = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, x)}));
  Task* w2 = h.sub(submit(h.k.get(), {arg(ArgTag::OutputExisting, x)}));
  Task* r = h.sub(submit(h.k.get(), {arg(ArgTag::Input, x)}));
  REQUIRE((w1 && w2 && r));
  CHECK(h.rec.edges[1].empty());  // no WAW edge on the earlier writer
  CHECK(has_edge(h.rec.edges[2], w1->id, EdgeSource::Tensormap));
  CHECK(has_edge(h.rec.edges[2], w2->id, EdgeSource::Tensormap));
}

TEST_CASE("views of one buffer: disjoint ones are independent, overlapping ones are ordered", "[runtime]") {
  Harness h;
  Tensor x = h.ext(1024);
  Task* a = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, 0, 512))}));
  Task* b = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, 512, 512))}));
  Task* c = h.sub(submit(h.k.get(), {arg(ArgTag::Input, view(x, 256, 512))}));
  REQUIRE((a && b && c));
  CHECK(h.rec.edges[1].empty());
  REQUIRE(h.rec.edges[2].size() == 2);
  CHECK(h.rec.edges[2][0].overlap == Overlap::Other);
  CHECK(has_edge(h.rec.edges[2], a->id, EdgeSource::Tensormap));
  CHECK(has_edge(h.rec.edges[2], b->id, EdgeSource::Tensormap));
  // The whole buffer covers a and b.
  Task* d = h.sub(submit(h.k.get(), {arg(ArgTag::Input, x)}));
  REQUIRE(d);
  REQUIRE(h.rec.edges[3].size() == 2);
  for (const auto& e : h.rec.edges[3]) CHECK(e.overlap == Overlap::Covered);
}

TEST_CASE("a buffer's writers are found newest first as its group grows from one entry and empties again",
          "[runtime]") {
  // The tensormap keeps a group's one live entry outside its tree and moves
  // it in at the second insert: the matches and their order are the tree's.
  Harness h;
  Tensor x = h.ext(1024);
  Task* w1 = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, 0, 512))}));
  Task* w2 = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, 512, 512))}));
  Task* w3 = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, 0, 512))}));
  REQUIRE((w1 && w2 && w3));
  CHECK(h.rec.edges[1].empty());
  REQUIRE(h.rec.edges[2].size() == 1);  // w1, covered and removed
  CHECK(h.rec.edges[2][0].pred == w1->id);
  CHECK(h.rec.edges[2][0].overlap == Overlap::Covered);
  // The whole buffer: w3 and w2, newest first; both covered and removed.
  Task* w4 = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, x)}));
  REQUIRE(w4);
  REQUIRE(h.rec.edges[3].size() == 2);
  CHECK(h.rec.edges[3][0].pred == w3->id);
  CHECK(h.rec.edges[3][1].pred == w2->id);
  for (const auto& e : h.rec.edges[3]) CHECK(e.overlap == Overlap::Covered);
  // w4 alone is left: a part of the buffer overlaps it without covering it.
  Task* r = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, 256, 256))}));
  REQUIRE(r);
  REQUIRE(h.rec.edges[4].size() == 1);
  CHECK(h.rec.edges[4][0].pred == w4->id);
  CHECK(h.rec.edges[4][0].overlap == Overlap::Other);
  // w4 and r are live; the whole buffer again covers both.
  Task* w5 = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, x)}));
  REQUIRE(w5);
  REQUIRE(h.rec.edges[5].size() == 2);
  CHECK(h.rec.edges[5][0].pred == r->id);
  CHECK(h.rec.edges[5][1].pred == w4->id);
  CHECK(h.rt->tensormap().in_use() == 1);
}

TEST_CASE("an INOUT chain of the very same view gets the overlap test's answer at every link", "[runtime]") {
  // The tensormap keeps view_overlap(v, v) with an entry of view v and
  // passes it on to the next insert of v (an accumulator's chain): each
  // link must still get what the test itself gives, Covered, Other or None.
  Harness h;
  Task* a = h.sub(submit(h.k.get(), {out(300)}));  // 1200 bytes, storage padded to 1024-byte multiples
  REQUIRE(a);
  Tensor row = h.output(a);  // as 3 x 100: the padded storage (512 elements) is no multiple of 100
  row.ndims = 2;
  row.buf_shape[0] = 3;
  row.buf_shape[1] = 100;
  row.offset[0] = 1;
  row.shape[0] = 1;
  row.shape[1] = 100;
  const Tensor x = h.ext(1024);
  const Tensor part = view(x, 256, 256), empty = view(x, 800, 0);  // the empty one away from part
  REQUIRE(view_overlap(part, part) == Overlap::Covered);
  REQUIRE(view_overlap(row, row) == Overlap::Other);
  REQUIRE(view_overlap(empty, empty) == Overlap::None);
  for (const Tensor& v : {part, row, empty}) {
    const Overlap expect = view_overlap(v, v);
    std::vector<TaskId> writers;
    for (int link = 0; link < 4; ++link) {
      const std::size_t at = h.rec.edges.size();
      Task* w = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, v)}));
      REQUIRE(w);
      std::vector<TaskId> found;
      for (const EdgeInfo& e : h.rec.edges.at(at))
        if (e.source == EdgeSource::Tensormap) {
          CHECK(e.overlap == expect);
          found.push_back(e.pred);
        }
      // Covered: the last writer only (it is removed); Other: every earlier
      // writer, newest first (none is removed); None: no edge.
      std::vector<TaskId> want;
      if (expect == Overlap::Covered && !writers.empty()) want.push_back(writers.back());
      if (expect == Overlap::Other) want.assign(writers.rbegin(), writers.rend());
      CHECK(found == want);
      writers.push_back(w->id);
    }
  }
}

TEST_CASE("views of another layout: disjoint element ranges are independent, overlapping ones are ordered",
          "[runtime]") {
  // pto_tensormap.h, PTO2TensorMapEntry::check_overlap: the element-range
  // intersection (L1) rejects first; only views whose ranges meet and whose
  // dtype or ndims differ are OTHER without a per-dimension test.
  Harness h;
  Tensor x = h.ext(1024);
  Task* a = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, 0, 512))}));  // elements 0..511
  REQUIRE(a);
  auto row = [&](std::int64_t r) {  // x as 2 x 512, row r
    Tensor v = x;
    v.ndims = 2;
    v.buf_shape[0] = 2;
    v.buf_shape[1] = 512;
    v.offset[0] = r;
    v.offset[1] = 0;
    v.shape[0] = 1;
    v.shape[1] = 512;
    return v;
  };
  Task* b = h.sub(submit(h.k.get(), {arg(ArgTag::Input, row(1))}));  // elements 512..1023
  REQUIRE(b);
  CHECK(h.rec.edges[1].empty());
  Task* c = h.sub(submit(h.k.get(), {arg(ArgTag::Input, row(0))}));  // elements 0..511
  REQUIRE(c);
  REQUIRE(h.rec.edges[2].size() == 1);
  CHECK(h.rec.edges[2][0].overlap == Overlap::Other);
  CHECK(has_edge(h.rec.edges[2], a->id, EdgeSource::Tensormap));
}

TEST_CASE("an empty view depends on the writer whose range holds its origin strictly inside", "[runtime]") {
  // simpler: pto_tensormap.h, PTO2TensorMapEntry::check_overlap: the
  // element-range test is Segment::line_segment_intersection on half-open
  // ranges, and an empty view's range is [s, s) (extent_elem() 0), so it
  // meets an entry [b, e) when b < s < e (OTHER), and none at b or e.
  Harness h;
  Tensor x = h.ext(1024);
  Task* a = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, 0, 512))}));
  Task* b = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, 512, 512))}));
  Task* c = h.sub(submit(h.k.get(), {arg(ArgTag::Input, view(x, 256, 0))}));
  Task* e = h.sub(submit(h.k.get(), {arg(ArgTag::Input, view(x, 512, 0))}));
  Task* f = h.sub(submit(h.k.get(), {arg(ArgTag::Input, view(x, 0, 0))}));
  REQUIRE((a && b && c && e && f));
  REQUIRE(h.rec.edges[2].size() == 1);
  CHECK(has_edge(h.rec.edges[2], a->id, EdgeSource::Tensormap));
  CHECK(h.rec.edges[2][0].overlap == Overlap::Other);
  CHECK(h.rec.edges[3].empty());
  CHECK(h.rec.edges[4].empty());
  // An empty INOUT registers an entry at its origin, which a reader of the
  // range around it finds (COVERED: the reader's range contains it).
  Task* g = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, 768, 0))}));
  Task* r = h.sub(submit(h.k.get(), {arg(ArgTag::Input, view(x, 700, 100))}));
  REQUIRE((g && r));
  REQUIRE(h.rec.edges[6].size() == 2);
  CHECK(h.rec.edges[6][0].pred == g->id);
  CHECK(h.rec.edges[6][0].overlap == Overlap::Covered);
  CHECK(h.rec.edges[6][1].pred == b->id);
}

TEST_CASE("in a manual scope only explicit deps make edges", "[runtime]") {
  Harness h;
  Tensor x = h.ext(1024);
  REQUIRE(h.rt->scope_begin(ScopeMode::Manual, "m:1"));
  Task* a = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, x), out(64)}));
  Task* b = h.sub(submit(h.k.get(), {arg(ArgTag::Input, x), arg(ArgTag::Input, h.output(a, 0))}));
  Task* c = h.sub(submit(h.k.get(), {arg(ArgTag::Input, x)}, {a->id}));
  REQUIRE((a && b && c));
  CHECK(h.rec.edges[1].empty());
  REQUIRE(h.rec.edges[2].size() == 1);
  CHECK(h.rec.edges[2][0].source == EdgeSource::Explicit);
  CHECK(h.rec.edges[2][0].arg == -1);
  // An auto scope may not nest in a manual one.
  CHECK_FALSE(h.rt->scope_begin(ScopeMode::Auto, "a:2"));
  CHECK(h.rt->error().code == ErrorCode::InvalidArgs);
}

TEST_CASE("scope depth selects the ring and depth 3 and deeper share ring 3", "[runtime]") {
  Harness h;
  std::vector<int> rings;
  for (int d = 0; d < 6; ++d) {
    Task* t = h.sub(submit(h.k.get(), {}));
    REQUIRE(t);
    rings.push_back(task_ring(t->id));
    REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s"));
  }
  CHECK(rings == std::vector<int>{0, 1, 2, 3, 3, 3});
}

TEST_CASE("eight tasks in one scope with ring_task_window 4 is SCOPE_DEADLOCK at the fourth", "[runtime]") {
  RunOptions o;
  o.ring_task_window = RingValues{4, 4, 4, 4};
  Harness h(o);
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s:1"));
  int submitted = 0;
  for (int i = 0; i < 8; ++i) {
    if (!h.sub(submit(h.k.get(), {}))) break;
    ++submitted;
  }
  CHECK(submitted == 3);  // window-1 tasks fit; the fourth submit fails
  CHECK(h.last.kind == SubmitStatus::Kind::Fatal);
  CHECK(h.rt->error().code == ErrorCode::ScopeDeadlock);
  CHECK(h.rt->error().message == "FATAL: Scope Deadlock Detected! (ring 1)");
}

TEST_CASE("outputs are packed into one heap block rounded to 1024 per output", "[runtime]") {
  Harness h;
  // 100 and 300 floats: 400 B -> 1024, 1200 B -> 2048; block 3072.
  Task* a = h.sub(submit(h.k.get(), {out(100), out(300)}));
  REQUIRE(a);
  CHECK(a->heap_end - a->heap_begin == 3072);
  Tensor o0 = h.output(a, 0), o1 = h.output(a, 1);
  CHECK(o1.addr - o0.addr == 1024);
  CHECK(o0.owner == a->id);
  CHECK(h.rt->ring(0).heap_top() == 3072);
}

TEST_CASE("the task window admits at most window-1 live tasks and back-pressure clears by FIFO reclaim", "[runtime]") {
  RunOptions o;
  o.ring_task_window = RingValues{0, 4, 0, 0};
  Harness h(o);
  // One task per closed scope on ring 1: scope pins are released, so only
  // the tasks' completion holds the slots.
  std::vector<Task*> ts;
  auto scoped = [&]() {
    h.rt->scope_begin(ScopeMode::Auto, "s");
    Task* t = h.sub(submit(h.k.get(), {}));
    h.rt->scope_end();
    return t;
  };
  for (int i = 0; i < 3; ++i) ts.push_back(scoped());
  REQUIRE(ts[2]);
  CHECK(h.rt->ring(1).live() == 3);
  CHECK(scoped() == nullptr);  // a fourth live task would fill the window
  CHECK(h.last.kind == SubmitStatus::Kind::Blocked);
  CHECK(h.last.blocked == Resource::TaskWindow);
  CHECK(h.last.ring == 1);
  CHECK_FALSE(h.rt->has_error());
  // Completing a younger task frees nothing (FIFO); completing the head does.
  h.rt->pop_ready(Shape::AIV, false);
  h.rt->pop_ready(Shape::AIV, false);
  h.finish(ts[1]);
  CHECK(h.rt->ring(1).tail() == 0);
  h.finish(ts[0]);
  CHECK(h.rt->ring(1).tail() == 2);
  SubmitProgress p;
  h.rt->scope_begin(ScopeMode::Auto, "s");
  CHECK(h.rt->submit_prepare(submit(h.k.get(), {}), p, false, 0).kind == SubmitStatus::Kind::Done);
}

TEST_CASE("reclaim is FIFO per ring: a consumed younger task waits for the head", "[runtime]") {
  Harness h;
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s:1"));
  Task* a = h.sub(submit(h.k.get(), {out(256)}));
  Task* b = h.sub(submit(h.k.get(), {out(256)}));
  REQUIRE((a && b));
  TaskId aid = a->id, bid = b->id;
  h.rt->scope_end();  // scope pins released
  h.rt->pop_ready(Shape::AIV, false);
  h.rt->pop_ready(Shape::AIV, false);
  h.finish(b);
  CHECK(b->state == TaskState::Consumed);
  CHECK(h.rt->ring(1).tail() == 0);  // head a still live: b cannot be reclaimed
  CHECK(h.rec.retired.empty());
  h.finish(a);
  CHECK(h.rt->ring(1).tail() == 2);
  CHECK(h.rec.retired == std::vector<TaskId>{aid, bid});
  // The heap tail follows at the next allocation attempt (update_heap_tail).
  CHECK(h.rt->ring(1).heap_used() == 2048);
  CHECK(h.rt->ring(1).heap_refresh_tail());
  CHECK(h.rt->ring(1).heap_used() == 0);
}

TEST_CASE("a task is CONSUMED only after its scope ends and its retaining consumers release", "[runtime]") {
  Harness h;
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s:1"));
  Task* a = h.sub(submit(h.k.get(), {out(256)}));
  Task* b = h.sub(submit(h.k.get(), {arg(ArgTag::Input, h.output(a))}));
  REQUIRE((a && b));
  h.rt->pop_ready(Shape::AIV, false);
  h.finish(a);
  CHECK(a->state == TaskState::Completed);  // scope open, b retains it
  h.rt->scope_end();
  CHECK(a->state == TaskState::Completed);  // b still holds a RETAIN pin
  h.rt->pop_ready(Shape::AIV, false);
  h.finish(b);
  CHECK(a->state == TaskState::Consumed);
  CHECK(h.rt->ring(1).tail() == 2);
}

TEST_CASE("alloc_tensors completes inline and its consumers take a creator edge", "[runtime]") {
  Harness h;
  SubmitRequest r;
  r.args = {out(64)};
  Task* al = h.sub(r, /*alloc=*/true);
  REQUIRE(al);
  CHECK(al->kind == TaskKind::Alloc);
  CHECK(al->state == TaskState::Completed);
  CHECK(h.rt->queue_size(Shape::AIV, false) == 0);
  Task* c = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, h.output(al))}));
  REQUIRE(c);
  CHECK(has_edge(h.rec.edges[1], al->id, EdgeSource::Creator));
  CHECK(c->is_ready());  // the producer is already complete: ready at submit
  CHECK(h.rt->ring(0).dep_used() == 0);  // no dep-pool entry for a completed producer
  // Alloc tasks join `completed` when orchestration ends.
  CHECK(h.rt->completed() == 0);
  h.rt->pop_ready(Shape::AIV, false);
  h.finish(c);
  h.rt->end_orchestration();
  CHECK(h.rt->completed() == 2);
  CHECK(h.rt->finished());
}

TEST_CASE("the heap wraps to offset 0 when the end does not fit and the front is free", "[runtime]") {
  RunOptions o;
  o.ring_heap = RingValues{4096, 0, 0, 0};
  Harness h(o);
  Ring& g = h.rt->ring(0);
  HeapBlock b;
  REQUIRE(g.heap_try_alloc(3072, b));
  CHECK(b.begin == 0);
  CHECK_FALSE(g.heap_fits(2048));  // 1024 left at the end, tail 0
  // Nothing retired yet: refresh does not move the tail.
  CHECK_FALSE(g.heap_refresh_tail());
}

TEST_CASE("a submit wraps the heap to offset 0 once the oldest task retires, wasting the end gap", "[runtime]") {
  RunOptions o;
  o.ring_heap = RingValues{8192, 8192, 8192, 8192};
  Harness h(o);
  Ring& g = h.rt->ring(Runtime::ring_of_depth(1));
  // Scope 1: A takes [0, 4096) and retires when the scope ends.
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s1"));
  Task* a = h.sub(submit(h.k.get(), {out(1024)}));
  REQUIRE(a);
  h.finish(a);
  h.rt->scope_end();
  // Scope 2: B takes [4096, 6144) and stays live (its scope is open).
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s2"));
  REQUIRE(h.sub(submit(h.k.get(), {out(512)})));
  CHECK(g.heap_top() == 6144);
  CHECK(g.heap_tail_unwrapped() == 4096);  // refreshed at B's allocation: A retired
  // C needs 3072: 2048 left at the end, but [0, 4096) is free behind A.
  REQUIRE(h.sub(submit(h.k.get(), {out(768)})));
  CHECK(g.heap_tail_unwrapped() == 4096);
  CHECK(g.heap_top() == 3072);             // C at [0, 3072)
  CHECK(g.heap_top_unwrapped() == 8192 + 3072);
  CHECK(g.heap_used() == 8192 + 3072 - 4096);  // B, C and the wasted end gap [6144, 8192)
}

TEST_CASE("scope samples carry ring, depth and head/tail counters", "[runtime]") {
  Harness h;
  Tensor x = h.ext(64);
  REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "site:7"));
  Task* a = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, x), out(256)}));
  REQUIRE(h.sub(submit(h.k.get(), {arg(ArgTag::Input, h.output(a))})));
  h.rt->scope_end();
  REQUIRE(h.rec.samples.size() == 3);  // root begin, s begin, s end
  CHECK(h.rec.sites[0] == "(unknown):0");
  CHECK(h.rec.samples[0].begin);
  CHECK(h.rec.samples[0].depth == 0);
  CHECK(h.rec.samples[1].begin);
  CHECK(h.rec.samples[1].tensormap == 0);
  const ScopeSample& e = h.rec.samples[2];
  CHECK(h.rec.sites[2] == "site:7");
  CHECK_FALSE(e.begin);
  CHECK(e.depth == 1);
  CHECK(e.ring == 1);
  CHECK(e.task_window_start == 0);
  CHECK(e.task_window_end == 2);
  CHECK(e.heap_start == 0);
  CHECK(e.heap_end == 1024);
  CHECK(e.dep_pool_start == 1);
  CHECK(e.dep_pool_end == 2);  // the consumer's one WAIT edge on a pending producer
  CHECK(e.tensormap == 1);     // a's INOUT of x
}

TEST_CASE("a predicate whose element a pending non-dependency writes is reported, other elements are not",
          "[runtime]") {
  // Runtime::check_predicate_producers: the cell the predicate reads, its
  // creator and its tensormap writers; a pending writer that is not a WAIT
  // dependency may write it after the scheduler read it.
  Harness h;
  Tensor gate = h.data.add_external("gate", DType::INT32, {4}, 0, {});
  Task* w = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(gate, 2, 1))}));  // writes element 2
  REQUIRE(w);
  auto gated = [&](std::int64_t element, std::vector<TaskId> deps) {
    SubmitRequest r = submit(h.k.get(), {}, std::move(deps));
    PredicateSpec p;
    p.tensor = gate;
    p.element = element;
    p.cmp = Cmp::GT;
    r.predicate = p;
    r.path = "/program/" + std::to_string(element);
    return h.sub(r);
  };
  REQUIRE(gated(0, {}));  // element 0: nobody writes it
  REQUIRE(gated(3, {}));
  CHECK(h.rec.warnings.empty());
  REQUIRE(gated(2, {w->id}));  // element 2, but w is a dependency
  CHECK(h.rec.warnings.empty());
  Task* g = gated(2, {});
  REQUIRE(g);
  REQUIRE(h.rec.warnings.size() == 1);
  CHECK(h.rec.warnings[0].first == "stale_predicate");
  CHECK(h.rec.warnings[0].second ==
        "the predicate of " + task_display(g->id) + " (/program/2) reads an element written by " +
            task_display(w->id) + " (K), which is not among its dependencies: the scheduler may read it before " +
            task_display(w->id) + " writes it and decide on a stale value (add it to deps)");
  h.finish(w);  // a completed writer is no hazard
  REQUIRE(gated(2, {}));
  CHECK(h.rec.warnings.size() == 1);
}

TEST_CASE("a predicate whose writer is an ancestor through WAIT edges is not reported", "[runtime]") {
  // pto_submit_types.h (PredicateOp): the scheduler evaluates the predicate at
  // the dispatch point, when the task is ready, "so the predicate address'
  // producer has completed". A writer the task waits on through another task
  // (simpler's deepseek_v4_flash_decode: dispatch_meta writes recv_count_out,
  // dispatch_gather depends on it, the predicated expert tiles consume
  // dispatch_gather's output) has completed by then too.
  Harness h;
  Tensor gate = h.data.add_external("gate", DType::INT32, {4}, 0, {});
  Task* w = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(gate, 2, 1))}));  // writes element 2
  REQUIRE(w);
  Task* mid = h.sub(submit(h.k.get(), {}, {w->id}));
  REQUIRE(mid);
  Task* last = h.sub(submit(h.k.get(), {}, {mid->id}));
  REQUIRE(last);
  auto gated = [&](std::vector<TaskId> deps) {
    SubmitRequest r = submit(h.k.get(), {}, std::move(deps));
    PredicateSpec p;
    p.tensor = gate;
    p.element = 2;
    p.cmp = Cmp::GT;
    r.predicate = p;
    return h.sub(r);
  };
  REQUIRE(gated({last->id}));  // w -> mid -> last -> gated
  CHECK(h.rec.warnings.empty());
  Task* other = h.sub(submit(h.k.get(), {}));  // waits on nothing
  REQUIRE(other);
  REQUIRE(gated({other->id}));
  REQUIRE(h.rec.warnings.size() == 1);
  CHECK(h.rec.warnings[0].first == "stale_predicate");
}

TEST_CASE("require_sync_start with more blocks than cores fails at submit with code 7", "[runtime]") {
  Harness h;
  SubmitRequest r = submit(h.k.get(), {});
  r.block_num = 1000;
  r.sync_start = true;
  CHECK(h.sub(r) == nullptr);
  CHECK(h.rt->error().code == ErrorCode::RequireSyncStartInvalid);
  CHECK(h.rt->error().message == "require_sync_start block_num=1000 > limit=4 (deadlock guaranteed)");
}

// The shared-memory header's two latches (pto_shared_memory.h
// orch_error_code, sched_error_code): first writer wins in each, the latch
// is the writer's (a scheduler's, or anyone else's), and the host's
// runtime_status prefers the orchestrator's (pto_runtime_status.h
// runtime_status_from_error_codes).
TEST_CASE("the orchestrator's and the schedulers' error latches are separate, first writer wins in each",
          "[runtime]") {
  Harness h;
  CHECK_FALSE(h.rt->has_error());
  LatchedError watchdog;
  watchdog.code = ErrorCode::SchedulerTimeout;
  watchdog.time = 10;
  watchdog.by_scheduler = true;
  CHECK(h.rt->latch_error(watchdog));
  CHECK(h.rt->has_error());
  CHECK_FALSE(h.rt->has_orch_error());
  CHECK(h.rt->error().code == ErrorCode::SchedulerTimeout);
  watchdog.time = 11;
  CHECK_FALSE(h.rt->latch_error(watchdog));  // the first stays
  CHECK(h.rt->sched_error().time == 10);
  CHECK(h.rt->latch_error(ErrorCode::TensorWaitTimeout, "FATAL(code=8)", 15));
  CHECK(h.rt->has_orch_error());
  CHECK(h.rt->error().code == ErrorCode::TensorWaitTimeout);  // the code the host reports
  CHECK(h.rt->sched_error().code == ErrorCode::SchedulerTimeout);
  CHECK_FALSE(h.rt->latch_error(ErrorCode::ExplicitOrchFatal, "", 16));
  CHECK(h.rt->orch_error().time == 15);
}

// The ready queues are bounded (PTO2_READY_QUEUE_SIZE, pto_runtime2_types.h)
// and a push into a full one fails unchecked (pto_scheduler.h
// PTO2ReadyQueue::push returns false; push_ready_routed ignores it): the
// task is lost. Capacity 2: the third independent task is dropped, the
// queue keeps two, one warning; popping makes room for the next push again.
TEST_CASE("a push into a full ready queue loses the task, as the device's unchecked push does", "[runtime]") {
  Harness h({}, [](Platform& p, RunConfig&) { p.limits.ready_queue_capacity = 2; });
  Task* a = h.sub(submit(h.k.get(), {out(64)}));
  Task* b = h.sub(submit(h.k.get(), {out(64)}));
  CHECK(h.rec.warnings.empty());
  Task* c = h.sub(submit(h.k.get(), {out(64)}));
  REQUIRE((a && b && c));
  CHECK(h.rt->queue_size(Shape::AIV, false) == 2);
  REQUIRE(h.rt->dropped_ready().size() == 1);
  CHECK(h.rt->dropped_ready()[0] == c->id);
  REQUIRE(h.rec.warnings.size() == 1);
  CHECK(h.rec.warnings[0].first == "ready_queue_overflow");
  CHECK(h.rt->pop_ready(Shape::AIV, false) == a);
  Task* d = h.sub(submit(h.k.get(), {out(64)}));
  REQUIRE(d);
  CHECK(h.rt->queue_size(Shape::AIV, false) == 2);
  CHECK(h.rt->dropped_ready().size() == 1);
  CHECK(h.rt->pop_ready(Shape::AIV, false) == b);
  CHECK(h.rt->pop_ready(Shape::AIV, false) == d);
  CHECK(h.rec.warnings.size() == 1);  // reported once per run
}

TEST_CASE("task slots: a released chunk is reused with its tasks' vectors, not allocated again", "[runtime]") {
  // Memory follows the live window (docs/architecture.md): slots live in
  // chunks of SlotStore::kChunk tasks; a chunk wholly below the tail goes to
  // a spare list and the next chunk the head needs is that one, its Task
  // objects keeping the capacity of their vectors, so a steady window
  // allocates nothing (take_slot resets a slot's fields, not its vectors' storage).
  constexpr std::uint64_t n = SlotStore::kChunk;
  SlotStore s;
  for (std::uint64_t i = 0; i < n; ++i) s.emplace(i);
  s.at(0).fanin.reserve(40);
  s.at(0).args.reserve(12);
  s.emplace(n);        // the second chunk
  s.release_below(n);  // the first chunk is wholly retired: spare
  Task& reused = s.emplace(2 * n);  // the third chunk is the first one again
  CHECK(reused.fanin.capacity() >= 40);
  CHECK(reused.args.capacity() >= 12);
  CHECK(s.at(2 * n + 1).fanin.capacity() == 0);  // a slot that never held anything
}

TEST_CASE("an early-dispatch entry names its task by id: once the task retires it resolves to nothing", "[runtime]") {
  // Upstream tags each early-dispatch queue entry with the task id it was
  // pushed for and skips a popped entry whose slot now holds another task
  // (scheduler_dispatch.cpp, early_dispatch_shape: pop_batch_tagged, the
  // task_id_snapshots test). A candidate's entry stays queued after the
  // task is released and runs (it is dropped when popped), so here it may
  // outlive the task's slot: the slot is reused by a newer task, or its
  // chunk freed. 150 producer/consumer pairs (more than two chunks of
  // slots) each leave such an entry; the last consumer stays a candidate.
  Harness h;
  const int pairs = 150;
  std::vector<TaskId> consumers;
  for (int i = 0; i < pairs; ++i) {
    REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s"));
    SubmitRequest pr = submit(h.k.get(), {out(256)});
    pr.early_resolve = true;  // allow_early_resolve: its consumers may be staged before it ends
    Task* p = h.sub(pr);
    REQUIRE(p);
    Task* c = h.sub(submit(h.k.get(), {arg(ArgTag::Input, h.output(p))}));
    REQUIRE(c);
    consumers.push_back(c->id);
    h.rt->task_published(*p, 0);  // every block of p placed: c becomes a candidate
    CHECK(c->early == Task::Early::Staging);
    CHECK(h.rt->early_queue_size(Shape::AIV) == static_cast<std::size_t>(i) + 1);
    h.rt->scope_end();
    if (i == pairs - 1) break;
    REQUIRE(h.rt->pop_ready(Shape::AIV, false) == p);
    h.finish(p);
    REQUIRE(h.rt->pop_ready(Shape::AIV, false) == c);
    h.finish(c);
    CHECK(h.rt->retired(consumers.back()));  // c's slot is released: by id only
  }
  // Every entry but the last names a retired task: popped as it is, it
  // resolves to nothing; the last is the live candidate.
  for (int i = 0; i < pairs; ++i) {
    const TaskId id = h.rt->pop_early(Shape::AIV);
    REQUIRE(id == consumers[static_cast<std::size_t>(i)]);
    Task* t = h.rt->early_entry(id);
    if (i < pairs - 1) {
      CHECK(t == nullptr);
    } else {
      REQUIRE(t);
      CHECK(t->id == id);
    }
  }
  CHECK(h.rt->pop_early(Shape::AIV) == kNoTask);
  CHECK_FALSE(h.rt->has_error());
}
