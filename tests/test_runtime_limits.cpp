// Every capacity and reclaim rule of the runtime, pinned on both sides of its
// boundary with the exact state on each side: the task window, the heap (fit
// at the end, wrap, strict gap, empty rebase, lazy tail), the dep pool (room
// and reclaim interval), the fanin spill pool, the tensormap pool and its
// cleanup interval, the scope depth and the packed output block.
//
// The rules as models/runtime has them (ring.{h,cpp}, runtime.cpp,
// tensormap.{h,cpp}); upstream, in hw-native-sys/simpler
// src/a2a3/runtime/tensormap_and_ringbuffer/runtime/:
//   pto_ring_buffer.h   PTO2TaskAllocator::alloc (task window), try_bump_heap
//                       (heap), update_heap_tail (tail from the last retired
//                       task), PTO2DepListPool (linear counters from 1),
//                       PTO2FaninPool (spill entries)
//   pto_ring_buffer.cpp PTO2DepListPool::reclaim (interval, mark of
//                       last_task_alive - 1)
//   pto_orchestrator.cpp check_scope_can_accept_task (scope deadlock),
//                       begin_scope (PTO2_MAX_SCOPE_DEPTH),
//                       ensure_tensormap_capacity, the packed output layout
//   shared/pto_tensormap.cpp PTO2TensorMap::sync_tensormap (cleanup interval)
#include "tests/catch.h"

#include "models/runtime/ring.h"
#include "tests/runtime_harness.h"

using namespace npusim;
using namespace testing_support;

namespace {

// One ring driven directly: tasks take a slot and a heap block; `retire`
// marks tasks CONSUMED and walks the watermark, as the runtime's consume does.
struct RingBench {
  Ring g;
  explicit RingBench(std::uint64_t window = 16, std::uint64_t heap = 4096, std::uint64_t dep_pool = 16) {
    g.init(0, window, heap, dep_pool, false);
  }
  Task& task(std::uint64_t heap_bytes = 0) {
    HeapBlock b;
    REQUIRE(g.heap_try_alloc(heap_bytes, b));
    Task& t = g.take_slot();
    t.heap_begin = b.begin;
    t.heap_end = b.end;
    t.heap_end_unwrapped = b.end_unwrapped;
    return t;
  }
  // Retires every task below local id `upto`; returns how many were retired.
  std::uint64_t retire(std::uint64_t upto) {
    for (std::uint64_t l = g.tail(); l < upto; ++l) g.slot(l).state = TaskState::Consumed;
    return g.advance([](Task&) {});
  }
  HeapBlock alloc(std::uint64_t size) {
    HeapBlock b;
    REQUIRE(g.heap_try_alloc(size, b));
    return b;
  }
};

}  // namespace

// ------------------------------------------------------------- task window

TEST_CASE("task window: window-1 tasks live at once, the next waits for the head to retire", "[runtime][limits]") {
  // PTO2TaskAllocator::alloc: local_task_id - last_alive + 1 < window_size.
  RingBench r(4);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(r.g.window_has_room());
    r.task();
  }
  CHECK(r.g.live() == 3);
  CHECK(r.g.head() == 3);
  CHECK_FALSE(r.g.window_has_room());
  // A younger task retiring frees nothing: FIFO.
  r.g.slot(1).state = TaskState::Consumed;
  CHECK(r.g.advance([](Task&) {}) == 0);
  CHECK_FALSE(r.g.window_has_room());
  CHECK(r.retire(1) == 2);  // the head, then the CONSUMED slot 1 behind it
  CHECK(r.g.tail() == 2);
  CHECK(r.g.live() == 1);
  CHECK(r.g.window_has_room());
  r.task();
  r.task();
  CHECK(r.g.live() == 3);
  CHECK_FALSE(r.g.window_has_room());
}

TEST_CASE("scope limit: window-1 tasks in one scope, the next is SCOPE_DEADLOCK and takes no slot", "[runtime][limits]") {
  // check_scope_can_accept_task: scope_task_count < window_size - 1.
  RunOptions o;
  o.ring_task_window = RingValues{8, 0, 0, 0};
  Harness h(o);
  // Root scope, ring 0: 7 tasks fit (the scope holds them all); the 8th is
  // refused by the scope check first (tasks in scope >= window - 1).
  for (int i = 0; i < 7; ++i) REQUIRE(h.sub(submit(h.k.get(), {})));
  CHECK(h.rt->ring(0).live() == 7);
  CHECK(h.sub(submit(h.k.get(), {})) == nullptr);
  CHECK(h.last.kind == SubmitStatus::Kind::Fatal);
  CHECK(h.rt->error().code == ErrorCode::ScopeDeadlock);
  CHECK(h.rt->error().message == "FATAL: Scope Deadlock Detected! (ring 0)");
  CHECK(h.rt->ring(0).head() == 7);  // nothing taken by the refused submit
}

// -------------------------------------------------------------------- heap

TEST_CASE("heap: a block fits at the end up to the last byte, one byte more does not", "[runtime][limits]") {
  // try_bump_heap, top >= tail: space_at_end >= alloc_size bumps.
  RingBench r;
  HeapBlock a = r.alloc(1024);
  CHECK(a.begin == 0);
  CHECK(a.end == 1024);
  HeapBlock b = r.alloc(3072);  // exactly the 3072 bytes left
  CHECK(b.begin == 1024);
  CHECK(b.end == 4096);
  CHECK(b.end_unwrapped == 4096);
  CHECK(r.g.heap_top() == 4096);
  CHECK(r.g.heap_used() == 4096);
  CHECK_FALSE(r.g.heap_fits(64));  // full, and the tail is at 0: no wrap

  RingBench s;
  s.alloc(1024);
  HeapBlock x;
  CHECK_FALSE(s.g.heap_try_alloc(3073, x));  // one byte beyond the end, tail 0: no room
  CHECK(s.g.heap_top() == 1024);             // a refused allocation changes nothing
  CHECK(s.g.heap_top_unwrapped() == 1024);
}

TEST_CASE("heap: wraps to offset 0 only when the tail is beyond the block, then keeps a strict gap to the tail",
          "[runtime][limits]") {
  RingBench r;
  r.task(1024);  // [0, 1024)
  r.task(2048);  // [1024, 3072)
  r.task(512);   // [3072, 3584)
  REQUIRE(r.retire(1) == 1);
  REQUIRE(r.g.heap_refresh_tail());
  CHECK(r.g.heap_tail_unwrapped() == 1024);
  CHECK(r.g.heap_used() == 2560);
  // top 3584, tail 1024: 512 bytes left at the end, 1024 free at the front.
  CHECK(r.g.heap_fits(512));         // the end, to the last byte
  CHECK_FALSE(r.g.heap_fits(1024));  // wrap needs tail > size: 1024 is not > 1024
  CHECK(r.g.heap_fits(1023));
  HeapBlock w = r.alloc(960);  // does not fit at the end: wraps
  CHECK(w.begin == 0);
  CHECK(w.end == 960);
  CHECK(w.end_unwrapped == 4096 + 960);
  CHECK(r.g.heap_top() == 960);
  CHECK(r.g.heap_top_unwrapped() == 4096 + 960);
  CHECK(r.g.heap_used() == 4096 + 960 - 1024);  // the wasted end gap [3584, 4096) counts
  // top 960 < tail 1024: a gap of 64 takes at most 63 (top never reaches the tail).
  CHECK_FALSE(r.g.heap_fits(64));
  HeapBlock g = r.alloc(63);
  CHECK(g.begin == 960);
  CHECK(g.end == 1023);
  CHECK_FALSE(r.g.heap_fits(1));
}

TEST_CASE("heap: an empty heap rebases to offset 0 and takes a block of its whole size, not one byte more",
          "[runtime][limits]") {
  RingBench r;
  r.task(512);
  REQUIRE(r.retire(1) == 1);
  REQUIRE(r.g.heap_refresh_tail());
  CHECK(r.g.heap_used() == 0);  // top == tail == 512: empty
  CHECK_FALSE(r.g.heap_fits(4097));
  // 4096 fits neither at the end (3584 left) nor before the tail (512): the
  // empty heap starts over at 0, tail included.
  HeapBlock b = r.alloc(4096);
  CHECK(b.begin == 0);
  CHECK(b.end == 4096);
  CHECK(b.end_unwrapped == 8192);
  CHECK(r.g.heap_tail_unwrapped() == 4096);
  CHECK(r.g.heap_used() == 4096);
}

TEST_CASE("heap: a zero-byte block sits at the top and takes nothing, even when the heap is full",
          "[runtime][limits]") {
  RingBench r;
  r.alloc(4096);
  HeapBlock z = r.alloc(0);
  CHECK(z.begin == 4096);
  CHECK(z.end == 4096);
  CHECK(z.end_unwrapped == 4096);
  CHECK(r.g.heap_used() == 4096);
}

TEST_CASE("heap tail: refreshed from the last retired task only, and only forwards", "[runtime][limits]") {
  // update_heap_tail: the tail is the packed-buffer end of task last_alive - 1.
  RingBench r;
  r.task(1024);
  r.task(2048);
  CHECK_FALSE(r.g.heap_refresh_tail());  // nothing retired
  CHECK(r.g.heap_tail_unwrapped() == 0);
  r.retire(1);
  CHECK(r.g.heap_tail_unwrapped() == 0);  // lazy: the watermark moved, the view did not
  CHECK(r.g.heap_refresh_tail());
  CHECK(r.g.heap_tail_unwrapped() == 1024);
  CHECK_FALSE(r.g.heap_refresh_tail());  // no further retirement: no move
  r.retire(2);
  CHECK(r.g.heap_refresh_tail());
  CHECK(r.g.heap_tail_unwrapped() == 3072);
  CHECK(r.g.heap_used() == 0);
}

TEST_CASE("heap at the runtime: the tail is refreshed at every submit once the watermark moved", "[runtime][limits]") {
  // PTO2TaskAllocator::alloc calls update_heap_tail(last_alive) before it checks.
  RunOptions o;
  o.ring_heap = RingValues{0, 4096, 0, 0};
  Harness h(o);
  Ring& g = h.rt->ring(1);
  auto scoped = [&](std::int64_t floats) {
    REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s"));
    Task* t = h.sub(submit(h.k.get(), {out(floats)}));
    h.rt->scope_end();
    return t;
  };
  Task* a = scoped(512);  // [0, 2048)
  REQUIRE(a);
  h.finish(a);
  CHECK(g.tail() == 1);
  REQUIRE(scoped(256));  // [2048, 3072): fits at the end; the tail follows a's retirement anyway
  CHECK(g.heap_tail_unwrapped() == 2048);
  REQUIRE(scoped(256));  // [3072, 4096): fits to the last byte
  CHECK(g.heap_tail_unwrapped() == 2048);
  CHECK(g.heap_top() == 4096);
  REQUIRE(scoped(256));  // no room at the end, tail 2048 beyond the block: wrap
  CHECK(g.heap_tail_unwrapped() == 2048);
  CHECK(g.heap_top() == 1024);
  CHECK(g.heap_top_unwrapped() == 4096 + 1024);
}

// ---------------------------------------------------------------- dep pool

TEST_CASE("dep pool: capacity entries, the linear counters start at 1", "[runtime][limits]") {
  // PTO2DepListPool::init: top = tail = 1; alloc fails only at used >= capacity
  // and ensure_space wants available() = capacity - used >= needed.
  RingBench r(16, 4096, 8);
  CHECK(r.g.dep_top() == 1);
  CHECK(r.g.dep_tail() == 1);
  CHECK(r.g.dep_has_room(8));
  CHECK_FALSE(r.g.dep_has_room(9));
  r.g.dep_take(5);
  CHECK(r.g.dep_top() == 6);
  CHECK(r.g.dep_used() == 5);
  CHECK(r.g.dep_has_room(3));
  CHECK_FALSE(r.g.dep_has_room(4));
}

TEST_CASE("dep pool reclaim: only once the watermark moved by the interval, up to the mark of the last retired task",
          "[runtime][limits]") {
  // PTO2DepListPool::reclaim: last_alive >= last_reclaimed + interval, then
  // tail = dep_pool_mark of task last_alive - 1; last_reclaimed moves even
  // when the mark does not.
  RingBench r(256, 4096, 256);
  for (int i = 0; i < 80; ++i) {
    Task& t = r.task();
    if (i < 70 || i >= 76) r.g.dep_take(1);  // tasks 0..69: mark i + 2; 70..75: 71; 76..: 72..
    r.g.set_dep_mark(t, r.g.dep_top());
  }
  r.retire(63);
  CHECK_FALSE(r.g.dep_reclaim(64));  // moved 63
  CHECK(r.g.dep_tail() == 1);
  r.retire(64);
  CHECK(r.g.dep_reclaim(64));  // moved 64
  CHECK(r.g.dep_tail() == 65);  // mark of task 63
  r.retire(70);
  CHECK_FALSE(r.g.dep_reclaim(64));  // 6 since the last reclaim
  CHECK(r.g.dep_tail() == 65);
  CHECK(r.g.dep_reclaim(6));
  CHECK(r.g.dep_tail() == 71);  // mark of task 69
  r.retire(76);                 // tasks 70..75 took no entry: mark 71
  CHECK_FALSE(r.g.dep_reclaim(6));  // interval reached, mark not beyond the tail...
  CHECK(r.g.dep_tail() == 71);
  r.retire(77);
  CHECK_FALSE(r.g.dep_reclaim(2));  // ...but it counted: 77 < 76 + 2
  CHECK(r.g.dep_tail() == 71);
  CHECK(r.g.dep_reclaim(1));
  CHECK(r.g.dep_tail() == 72);  // mark of task 76
}

TEST_CASE("dep pool at the runtime: WAIT edges on pending producers take entries, up to capacity",
          "[runtime][limits]") {
  RunOptions o;
  o.ring_dep_pool = RingValues{4, 0, 0, 0};
  Harness h(o);
  Tensor x = h.ext(64);
  std::vector<Task*> p;
  for (int i = 0; i < 3; ++i) p.push_back(h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, i * 16, 16))})));
  REQUIRE(p[2]);
  CHECK(h.rt->ring(0).dep_used() == 0);  // independent views: no edges yet
  Task* c = h.sub(submit(h.k.get(), {arg(ArgTag::Input, view(x, 0, 48))}));  // 3 WAIT edges: 3 of 3
  REQUIRE(c);
  CHECK(c->wait_edges == 3);
  CHECK(h.rt->ring(0).dep_used() == 3);
  CHECK(c->dep_pool_mark == 4);
  REQUIRE(h.sub(submit(h.k.get(), {arg(ArgTag::Input, view(x, 0, 16))})));  // the 4th entry
  CHECK(h.rt->ring(0).dep_used() == 4);
  CHECK(h.sub(submit(h.k.get(), {arg(ArgTag::Input, view(x, 16, 16))})) == nullptr);  // one more
  CHECK(h.last.kind == SubmitStatus::Kind::Blocked);
  CHECK(h.last.blocked == Resource::DepPool);
  CHECK(h.last.ring == 0);
}

TEST_CASE("dep pool at the runtime: a chain reclaims exactly when the watermark has moved by the interval",
          "[runtime][limits]") {
  // Ring 1 (one scope per task), 4 entries, all usable (PTO2DepListPool::alloc
  // fails only at used >= capacity), reclaim interval 2
  // (PTO2DepListPool::reclaim: last_task_alive >= last_reclaimed + interval,
  // tail -> the dep_pool_mark of task last_task_alive - 1; pto_ring_buffer.cpp).
  // Each task reads and writes x: one edge on its pending predecessor, T0
  // none. The scheduler of this test finishes the oldest unfinished task only
  // when a submit is blocked.
  //   T1..T4 take entries 1..4 (top 5; T1's mark 2, T3's 4, T5's 6...).
  //   T5: full; reclaim needs last_task_alive 2: finish T0 (1, no), T1 (2:
  //   tail = mark of T1 = 2, 3 used): 2 finishes. T6: full, alive must reach
  //   4: 2 finishes (tail 4, 2 used). T7: 3 used, fits. T8: full, alive 6: 2.
  //   From there every second task waits for 2 finishes.
  RunOptions o;
  o.ring_dep_pool = RingValues{0, 4, 0, 0};
  Harness h(o, [](Platform& p, RunConfig&) { p.limits.dep_pool_cleanup_interval = 2; });
  Tensor x = h.ext(64);
  std::vector<Task*> tasks;
  std::size_t oldest = 0;
  std::vector<int> finishes;
  for (int i = 0; i < 12; ++i) {
    REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "chain"));
    const SubmitRequest r = submit(h.k.get(), {arg(ArgTag::Inout, x)});
    int n = 0;
    Task* t = h.sub(r);
    while (!t) {
      REQUIRE(h.last.kind == SubmitStatus::Kind::Blocked);
      REQUIRE(h.last.blocked == Resource::DepPool);
      REQUIRE(oldest < tasks.size());  // else a false DEP_POOL deadlock
      h.finish(tasks[oldest++]);
      ++n;
      t = h.resume(r);
    }
    h.rt->scope_end();
    tasks.push_back(t);
    finishes.push_back(n);
  }
  CHECK(finishes == std::vector<int>{0, 0, 0, 0, 0, 2, 2, 0, 2, 0, 2, 0});
  const Ring& g = h.rt->ring(1);
  CHECK(g.tail() == 8);      // T0..T7 finished and retired
  CHECK(g.dep_tail() == 8);  // the mark of T7, reclaimed for T10
  CHECK(g.dep_top() == 12);  // T1..T11 took one entry each
}

// ------------------------------------------------------------- fanin spill

TEST_CASE("fanin spill: edges beyond the inline cap, in a pool of dep_pool entries returned at retirement",
          "[runtime][limits]") {
  // PTO2_FANIN_INLINE_CAP inline edges, the rest in the spill pool.
  RingBench r(16, 4096, 8);
  r.g.set_spill_inline_cap(64);
  CHECK(r.g.spill_of(0) == 0);
  CHECK(r.g.spill_of(64) == 0);
  CHECK(r.g.spill_of(65) == 1);
  CHECK(r.g.spill_of(70) == 6);
  CHECK(r.g.spill_has_room(8));  // PTO2FaninPool: every entry usable
  CHECK_FALSE(r.g.spill_has_room(9));
  Task& t = r.task();
  t.fanin.resize(66);
  r.g.spill_take(r.g.spill_of(66));
  r.g.spill_take(3);
  CHECK(r.g.spill_has_room(3));  // 5 used of 8
  CHECK_FALSE(r.g.spill_has_room(4));
  r.retire(1);  // the task's 2 spill entries come back
  CHECK(r.g.spill_has_room(5));
  CHECK_FALSE(r.g.spill_has_room(6));
}

TEST_CASE("fanin spill at the runtime: completed live producers spill too, and a full pool blocks the submit",
          "[runtime][limits]") {
  // Inline cap 1, dep pool 8 on ring 0: 8 spill entries. Two producers,
  // completed but pinned by the root scope (no dep-pool entry), and consumers
  // of both: one spill entry each.
  RunOptions o;
  o.ring_dep_pool = RingValues{8, 0, 0, 0};
  Harness h(o, [](Platform& p, RunConfig&) { p.limits.fanin_inline_cap = 1; });
  Task* p0 = h.sub(submit(h.k.get(), {}));
  Task* p1 = h.sub(submit(h.k.get(), {}));
  REQUIRE((p0 && p1));
  h.finish(p0);
  h.finish(p1);
  CHECK(p0->state == TaskState::Completed);  // not CONSUMED: the root scope is open
  for (int i = 0; i < 8; ++i) {
    INFO("consumer " << i);
    Task* c = h.sub(submit(h.k.get(), {}, {p0->id, p1->id}));
    REQUIRE(c);
    CHECK(c->fanin.size() == 2);
  }
  CHECK(h.rt->ring(0).dep_used() == 0);  // completed producers take no entry
  CHECK(h.sub(submit(h.k.get(), {}, {p0->id, p1->id})) == nullptr);
  CHECK(h.last.kind == SubmitStatus::Kind::Blocked);
  CHECK(h.last.blocked == Resource::FaninSpill);
  // A consumer of one producer spills nothing and still fits.
  CHECK(h.sub(submit(h.k.get(), {}, {p0->id})) != nullptr);
}

// --------------------------------------------------------------- tensormap

TEST_CASE("tensormap pool: every entry usable, and a full pool reclaims stale entries, else blocks", "[runtime][limits]") {
  // ensure_tensormap_capacity: free_entries() >= needed, else reclaim.
  Harness h({}, [](Platform&, RunConfig& c) { c.tensormap_pool = 4; });
  Tensor x = h.ext(128);
  std::vector<Task*> w;
  auto writer = [&](int i) {  // INOUT of its own view, in its own scope (ring 1)
    REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "w"));
    Task* t = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, i * 16, 16))}));
    if (t) h.rt->scope_end();
    return t;
  };
  for (int i = 0; i < 4; ++i) {
    Task* t = writer(i);
    REQUIRE(t);
    w.push_back(t);
  }
  CHECK(h.rt->tensormap().in_use() == 4);
  const SubmitRequest fifth = submit(h.k.get(), {arg(ArgTag::Inout, view(x, 64, 16))});
  CHECK(writer(4) == nullptr);
  CHECK(h.last.blocked == Resource::TensorMap);
  CHECK(h.rt->tensormap().in_use() == 4);  // nothing stale to reclaim
  h.finish(w[1]);  // retires nothing: the head w[0] is live
  CHECK(h.resume(fifth) == nullptr);
  CHECK(h.rt->tensormap().freed_total() == 0);
  h.finish(w[0]);  // w[0] and w[1] retire: their entries are stale
  REQUIRE(h.resume(fifth));
  CHECK(h.rt->tensormap().freed_total() == 2);
  CHECK(h.rt->tensormap().in_use() == 3);
}

namespace {

// Writers of successive 16-element views of one buffer, each in its own
// scope (ring 1), finished at once: each leaves one stale tensormap entry.
struct ScopedWriters {
  Harness& h;
  Tensor x;
  int i = 0;
  explicit ScopedWriters(Harness& harness) : h(harness), x(harness.ext(16 * 200)) {}
  void next() {
    REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "w"));
    Task* t = h.sub(submit(h.k.get(), {arg(ArgTag::Inout, view(x, 16 * i++, 16))}));
    REQUIRE(t);
    h.rt->scope_end();
    h.finish(t);
  }
};

}  // namespace

TEST_CASE("tensormap cleanup: a submit frees a ring's stale entries once 64 of its tasks retired since the last",
          "[runtime][limits]") {
  // PTO2TensorMap::sync_tensormap: last_alive - last_cleanup >= 64.
  Harness h;
  ScopedWriters w(h);
  auto writer = [&] { w.next(); };
  for (int n = 0; n < 64; ++n) writer();
  // At the 64th submit 63 tasks had retired: no cleanup; 64 stale entries now.
  CHECK(h.rt->ring(1).tail() == 64);
  CHECK(h.rt->tensormap().in_use() == 64);
  CHECK(h.rt->tensormap().freed_total() == 0);
  writer();  // 64 retired: the 64 stale entries go before its insert
  CHECK(h.rt->tensormap().freed_total() == 64);
  CHECK(h.rt->tensormap().in_use() == 1);
  for (int n = 0; n < 63; ++n) writer();  // tail 128 at the last: 64 since 64
  CHECK(h.rt->tensormap().freed_total() == 64);
  writer();
  CHECK(h.rt->tensormap().freed_total() == 128);
  CHECK(h.rt->tensormap().in_use() == 1);
}

TEST_CASE("tensormap cleanup: the interval alone triggers it, at exactly 64 retired, on a window where no slot repeats",
          "[runtime][limits]") {
  // PTO2TensorMap::sync_tensormap cleans a ring when last_alive -
  // last_cleanup >= 64 or when the submit's slot is the last cleanup's slot
  // again (local % window). On tiny's ring window the two coincide; with a
  // window of 256 on ring 1 only the interval can fire at 64.
  RunOptions o;
  o.ring_task_window = RingValues{0, 256, 0, 0};
  Harness h(o);
  ScopedWriters w(h);
  auto writer = [&] { w.next(); };
  REQUIRE(h.rt->ring(1).window() == 256);
  for (int n = 0; n < 64; ++n) writer();
  CHECK(h.rt->ring(1).tail() == 64);
  CHECK(h.rt->tensormap().freed_total() == 0);  // 63 retired at the 64th submit
  writer();                                      // 64 retired: cleaned before its insert
  CHECK(h.rt->tensormap().freed_total() == 64);
  CHECK(h.rt->tensormap().in_use() == 1);
}

// ------------------------------------------------------------- scope depth

TEST_CASE("scope depth: 63 scopes nest under the root, the 64th is begin_scope's assert", "[runtime][limits]") {
  Harness h;
  for (int d = 1; d <= 63; ++d) REQUIRE(h.rt->scope_begin(ScopeMode::Auto, "s"));
  CHECK(h.rt->scope_depth() == 63);
  CHECK_FALSE(h.rt->has_error());
  CHECK_FALSE(h.rt->scope_begin(ScopeMode::Auto, "deep:64"));
  CHECK(h.rt->scope_depth() == 63);
  CHECK(h.rt->error().code == ErrorCode::AicpuAssert);
  CHECK(h.rt->error().message.find("\"Scope stack overflow\"' failed.") != std::string::npos);
}

// ----------------------------------------------------------- packed block

TEST_CASE("packed outputs: each output rounded up to packed_output_align, the block to heap_block_align",
          "[runtime][limits]") {
  Harness h({}, [](Platform& p, RunConfig&) { p.limits.packed_output_align = 48; });
  auto bytes = [](std::int64_t n) {  // an INT8 output of n bytes
    SubmitArg a = out(n);
    a.tensor.dtype = DType::INT8;
    return a;
  };
  CHECK(h.rt->packed_output_bytes({bytes(48)}) == 64);       // 48, block to 64
  CHECK(h.rt->packed_output_bytes({bytes(49)}) == 128);      // 96, block to 128
  CHECK(h.rt->packed_output_bytes({bytes(48), bytes(48)}) == 128);  // 96 -> 128
  CHECK(h.rt->packed_output_bytes({bytes(64), bytes(1)}) == 192);   // 96 + 48 = 144 -> 192
  CHECK(h.rt->packed_output_bytes({bytes(128)}) == 192);     // 144 -> 192
  CHECK(h.rt->packed_output_bytes({arg(ArgTag::Input, h.ext(1000))}) == 0);  // only outputs
  Task* t = h.sub(submit(h.k.get(), {bytes(1), bytes(49)}));
  REQUIRE(t);
  CHECK(t->heap_end - t->heap_begin == 192);  // 48 + 96 = 144 -> 192
  CHECK(h.output(t, 1).addr - h.output(t, 0).addr == 48);
}

// ------------------------------------------------------- cache bypass bits

// A task's scope_bypass has bit i for argument i passed with cache_bypass
// (the GM model reads arguments 0 to 31: gm.cpp). A platform may allow up to
// 1024 arguments (platform_loader: max_tensor_args in [1, 1024]); arguments
// from 32 on set no bit, where a shift by the argument's index past the word
// was undefined and on x86 set bit i mod 32 (argument 33 read as argument 1).
TEST_CASE("cache bypass: bit i for argument i below 32 and none for the arguments after", "[runtime][limits]") {
  Harness h({}, [](Platform& p, RunConfig&) { p.limits.max_tensor_args = 40; });
  const Tensor x = h.ext(64);
  std::vector<SubmitArg> args;
  for (int i = 0; i < 36; ++i) {
    SubmitArg a = arg(ArgTag::Input, x);
    a.cache_bypass = i == 0 || i == 5 || i == 31 || i == 33;
    args.push_back(a);
  }
  Task* t = h.sub(submit(h.k.get(), args));
  REQUIRE(t);
  CHECK(t->scope_bypass == ((std::uint32_t{1} << 0) | (std::uint32_t{1} << 5) | (std::uint32_t{1} << 31)));
}
