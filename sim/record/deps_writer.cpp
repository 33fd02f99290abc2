// deps.json as the runtime's dep_gen replay writes it
// (src/a2a3/runtime/tensormap_and_ringbuffer/host/dep_gen_replay.cpp,
// dep_gen_replay_emit_deps_json and write_deps_json).
//
// The device records every submit_task / submit_dummy_task as the
// orchestration passed it (alloc_tensors is not recorded), and the host
// replays the records against a tensormap of its own that never retires a
// task: an edge to a producer the device had already retired is still in the
// file. Per task the replay emits, in this order: its explicit deps (each
// producer once); then per non-OUTPUT argument the creator edge, unless that
// producer already has an edge in this task, and, for INPUT / INOUT without
// manual_dep, one tensormap edge per matching entry in the tensormap's own
// lookup order (the newest entry of the buffer first), INOUT removing the
// entries it covers; a manual-scope task gets only its explicit edges. Then
// the task's INOUT / OUTPUT_EXISTING views are registered.
//
// Compact JSON, keys in the runtime's order. Tasks, tensors and edges stream
// to three scratch files as tasks are submitted; finish() appends the tensors
// and edges to the tasks and renames the result. Tensors are deduplicated by
// tensor_id, which depends only on (address, version): the set of ids seen is
// bounded by the distinct buffer addresses. The replay tensormap holds one
// entry per registered write that no INOUT covered, as the runtime's replay
// does.
#include <algorithm>
#include <array>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "sim/record/big_array.h"
#include "sim/record/json_out.h"
#include "sim/record/writer.h"

namespace npusim::record {
namespace {

// FNV-1a-64 over the 8 little-endian bytes of the address, then the 4
// little-endian bytes of the version (dep_gen's make_tensor_id).
std::uint64_t dep_gen_tensor_id(std::uint64_t addr, std::uint32_t version) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (int k = 0; k < 8; ++k) h = (h ^ ((addr >> (8 * k)) & 0xff)) * 0x100000001b3ull;
  for (int k = 0; k < 4; ++k) h = (h ^ ((version >> (8 * k)) & 0xff)) * 0x100000001b3ull;
  return h;
}

constexpr const char* kDepsFile = "deps.json";

// The names deps.json prints, with their lengths (no strlen per use): a table
// of `Name(e)` for every enumerator up to `Last`, built once (a value past
// `Last`, which no loader produces, reads as `Last`'s name: ArgTag's
// "UNKNOWN", as arg_tag_name spells it).
// The tables are made when the program starts (a function's static was a
// guard check and a call per name printed).
template <auto Name, auto Last>
const auto kNames = [] {
  std::array<std::string_view, static_cast<std::size_t>(Last) + 1> n;
  for (std::size_t k = 0; k < n.size(); ++k) n[k] = Name(static_cast<decltype(Last)>(k));
  return n;
}();
template <auto Name, auto Last>
[[gnu::always_inline]] inline std::string_view cached_name(decltype(Last) e) {
  const auto& names = kNames<Name, Last>;
  const auto k = static_cast<std::size_t>(e);
  return names[std::min(k, names.size() - 1)];
}
std::string_view dtype_name(DType t) { return cached_name<&dtype_runtime_name, DType::BOOL>(t); }
std::string_view tag_name(ArgTag t) { return cached_name<&arg_tag_name, ArgTag::NoDep>(t); }
std::string_view source_name(EdgeSource s) { return cached_name<&edge_source_name, EdgeSource::Tensormap>(s); }

// `"<prefix>shape":[..],"<prefix>start_offset":"..","<prefix>strides":[..]`.
// The prefix is a literal ("", "consumer_", "producer_"): each copy of it a
// fixed-size store, not a call to memcpy (a third of the run's memcpy calls
// were these). The strides computed once for the offset and the list
// (Tensor::stride(d) multiplies the extents after d on each call).
template <std::size_t N>
void put_view(JsonBuf& out, const char (&prefix)[N], const Tensor& v) {
  std::array<std::int64_t, kMaxDims> s;
  v.strides_into(s);
  // The prefix three times, 37 bytes of text, 2 * ndims + 1 integers with their commas and quotes.
  JsonBuf::Direct b(out, 3 * (N - 1) + 64 + 42 * static_cast<std::size_t>(v.ndims));
  b.ch('"').raw(prefix).raw("shape\":[");
  for (int d = 0; d < v.ndims; ++d) (d ? b.ch(',') : b).i(v.shape[d]);
  b.raw("],\"").raw(prefix).raw("start_offset\":").qi(v.start_offset(s));
  b.raw(",\"").raw(prefix).raw("strides\":[");
  for (int d = 0; d < v.ndims; ++d) (d ? b.ch(',') : b).i(s[d]);
  b.ch(']');
}

// The replay's tensormap: the registered writes of each buffer, never retired.
class ReplayTensorMap {
 public:
  struct Match {
    TaskId producer;
    Overlap overlap;
    const Tensor* view;
  };

  // Entries of `view`'s buffer overlapping it, newest first (the runtime's
  // bucket chains are kept newest first); with `remove_covered` (INOUT) the
  // entries the view covers are removed after they matched. The views stay
  // valid until the next lookup or insert.
  void lookup(const Tensor& view, bool remove_covered, std::vector<Match>& out) {
    out.clear();
    removed_.clear();
    Group* g = find(view.addr);
    if (!g) return;
    Group& grp = *g;
    std::array<std::int64_t, kMaxDims> s;
    view.strides_into(s);
    const std::int64_t first = view.start_offset(s);
    const std::int64_t last = first + extent(view, s);
    // An entry reaching `first` starts no earlier than first - max_span.
    hits_.clear();
    std::vector<Hit>& hits = hits_;
    for (auto it = grp.by_first.lower_bound(first - grp.max_span); it != grp.by_first.end() && it->first <= last; ++it) {
      Overlap ov = view_overlap(view, it->second.view);
      if (ov != Overlap::None) hits.push_back({it->second.seq, it});
    }
    std::sort(hits.begin(), hits.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [seq, it] : hits) {
      Overlap ov = view_overlap(view, it->second.view);
      if (remove_covered && ov == Overlap::Covered) {
        removed_.push_back(std::move(it->second));
        grp.by_first.erase(it);
        out.push_back({removed_.back().producer, ov, nullptr});
      } else {
        out.push_back({it->second.producer, ov, &it->second.view});
      }
    }
    // Removed entries' views live in removed_ (no reallocation once filled).
    std::size_t k = 0;
    for (Match& m : out)
      if (!m.view) m.view = &removed_[k++].view;
  }

  void insert(const Tensor& view, TaskId producer) {
    Group& g = find_or_add(view.addr);
    std::array<std::int64_t, kMaxDims> s;
    view.strides_into(s);
    g.max_span = std::max(g.max_span, extent(view, s));
    g.by_first.emplace(view.start_offset(s), Entry{view, producer, seq_++});
  }

  // Starts loading the cache line of `addr`'s group slot (a hint).
  void prefetch(std::uint64_t addr) const {
    if (!groups_.empty()) __builtin_prefetch(&groups_[home(addr)]);
  }

 private:
  struct Entry {
    Tensor view;
    TaskId producer;
    std::uint64_t seq;
  };
  // A buffer's entries; a slot of the open-addressing table of groups, one
  // cache line with its address and span (max_span -1: an empty slot).
  struct Group {
    std::uint64_t addr = 0;
    std::int64_t max_span = -1;
    std::multimap<std::int64_t, Entry> by_first;
  };
  // Linear extent of a view beyond its first element, in elements, from its
  // strides (Tensor::strides_into).
  static std::int64_t extent(const Tensor& v, const std::array<std::int64_t, kMaxDims>& s) {
    std::int64_t e = 0;
    for (int d = 0; d < v.ndims; ++d) e += (v.shape[d] - 1) * s[d];
    return e;
  }
  // The groups by buffer address, with open addressing (an unordered_map
  // chased a bucket pointer and a node per lookup, both cache misses with
  // 96,000 buffers in bench_pa_100k; one slot here, prefetched by put_task).
  // Half full at most; on huge pages (big_array.h).
  std::size_t home(std::uint64_t addr) const { return (addr * 0x9e3779b97f4a7c15ull) >> 20 & (groups_.size() - 1); }
  Group* find(std::uint64_t addr) {
    if (groups_.empty()) return nullptr;
    const std::size_t mask = groups_.size() - 1;
    for (std::size_t i = home(addr);; i = (i + 1) & mask) {
      Group& g = groups_[i];
      if (g.max_span < 0) return nullptr;
      if (g.addr == addr) return &g;
    }
  }
  Group& find_or_add(std::uint64_t addr) {
    if (Group* g = find(addr)) return *g;
    if (2 * (used_ + 1) > groups_.size()) {
      BigVector<Group> old(groups_.empty() ? 1024 : 2 * groups_.size());
      old.swap(groups_);
      for (Group& g : old)
        if (g.max_span >= 0) std::swap(groups_[empty_slot(g.addr)], g);
    }
    Group& g = groups_[empty_slot(addr)];
    g.addr = addr;
    g.max_span = 0;
    ++used_;
    return g;
  }
  std::size_t empty_slot(std::uint64_t addr) const {
    const std::size_t mask = groups_.size() - 1;
    std::size_t i = home(addr);
    while (groups_[i].max_span >= 0) i = (i + 1) & mask;
    return i;
  }
  BigVector<Group> groups_;
  std::size_t used_ = 0;
  using Hit = std::pair<std::uint64_t, std::multimap<std::int64_t, Entry>::iterator>;  // (seq, entry)
  std::vector<Hit> hits_;  // lookup's scratch, kept for its capacity
  std::vector<Entry> removed_;
  std::uint64_t seq_ = 0;
};

class DepsWriter : public OutputWriter {
 public:
  DepsWriter(const std::string& dir, int gzip_level)
      : OutputWriter(dir, gzip_level), tasks_(dir, "deps_tasks", gzip_level), tensors_(dir, "deps_tensors"), edges_(dir, "deps_edges") {
    tasks_.raw("{\"tasks\":[");
    tensors_.hold_in_memory();
    edges_.hold_in_memory();
  }

  void on_submitted(const Task& t, const SubmitRequest& req, const std::vector<EdgeInfo>&) override {
    if (t.kind == TaskKind::Alloc) return;  // alloc_tensors is not recorded; its tasks appear only as pred
    task_text_.set_quoted(t.id);
    put_task(t);
    replay(t, req);
    tasks_.commit();
    tensors_.commit();
    edges_.commit();
  }

  // The tasks stream becomes the file; tensors and edges are appended to it.
  void finish(const RunInfo&) override {
    tasks_.raw("],\"tensors\":[");
    tasks_.append(tensors_);
    tasks_.raw("],\"edges\":[");
    tasks_.append(edges_);
    tasks_.raw("]}\n");
    tasks_.close_as(dir() + "/" + output_name(kDepsFile));
  }

  std::vector<std::string> files() const override { return {output_name(kDepsFile)}; }

 private:
  void put_task(const Task& t) {
    {
      // 67 bytes of text at most, the id and kNumLanes integers with their commas.
      JsonBuf::Direct d(tasks_, 128 + 21 * kNumLanes);
      if (n_tasks_++) d.ch(',');
      d.raw("{\"task_id\":").raw(task_text_);
      if (t.manual_scope) d.raw(",\"scope\":\"manual\"");
      else d.raw(",\"scope\":\"auto\"");
      d.raw(",\"early_dispatch\":");
      if (t.early_resolve) d.raw("true");
      else d.raw("false");
      d.raw(",\"kernel_ids\":[");
      for (int lane = 0; lane < kNumLanes; ++lane) {
        bool active = t.kernel && (t.active_mask & (1u << lane));
        (lane ? d.ch(',') : d).i(active ? t.kernel->lane_func_id(lane) : -1);
      }
    }
    // Start the loads of the arguments' slots in the set of listed tensor
    // ids (hashed, so nearly every probe misses the cache) before they are needed.
    // The replay's lookups (INPUT, INOUT) likewise start the loads of their buffers' group slots.
    // Each listed argument's tensor id hashed once, here, for its prefetch and its entry.
    const std::size_t n = std::min(t.args.size(), t.arg_tags.size());
    if (arg_ids_.size() < n) {
      arg_ids_.resize(n);
      arg_hashes_.resize(n);
    }
    for (std::size_t k = 0; k < n; ++k) {
      const ArgTag tag = t.arg_tags[k];
      if (tag != ArgTag::Output) {
        arg_hashes_[k] = dep_gen_tensor_id(t.args[k].addr, t.args[k].version);
        seen_.prefetch(arg_hashes_[k]);
      }
      if (!t.manual_scope && (tag == ArgTag::Input || tag == ArgTag::Inout)) tensormap_.prefetch(t.args[k].addr);
    }
    tasks_.raw("],\"block_num\":").i(std::max(t.block_num, 1)).raw(",\"args\":[");
    for (std::size_t k = 0; k < n; ++k) {
      const bool listed = t.arg_tags[k] != ArgTag::Output;
      const Tensor& v = t.args[k];
      if (listed) put_tensor(v, arg_hashes_[k], arg_ids_[k]);
      {
        const std::string_view tag = tag_name(t.arg_tags[k]), dtype = dtype_name(v.dtype);
        // Both names, 43 bytes of text, an integer and the quoted id (32 bytes, Text32).
        JsonBuf::Direct d(tasks_, tag.size() + dtype.size() + 128);
        if (k) d.ch(',');
        d.raw("{\"idx\":").u(k).raw(",\"type\":\"").raw(tag).ch('"');
        if (listed) d.raw(",\"tensor_id\":").raw(arg_ids_[k]).raw(",\"dtype\":\"").raw(dtype).raw("\",");
      }
      if (listed) put_view(tasks_, "", v);
      tasks_.ch('}');
    }
    tasks_.raw("]}");
  }

  // Lists the tensor (its id `id`) on first sight; `id_text` becomes the id's quoted text (the
  // task's argument and a creator edge of the task print it again).
  void put_tensor(const Tensor& v, std::uint64_t id, Text32& id_text) {
    id_text.set_quoted(id);
    if (!seen_.insert(id)) return;
    const std::string_view dtype = dtype_name(v.dtype);
    // The name, 67 bytes of text, the quoted id (32 bytes), three integers with their quotes.
    JsonBuf::Direct d(tensors_, dtype.size() + 192);
    if (n_tensors_++) d.ch(',');
    d.raw("{\"tensor_id\":").raw(id_text).raw(",\"buffer_addr\":").qu(v.addr);
    d.raw(",\"version\":").u(v.version).raw(",\"dtype\":\"").raw(dtype);
    d.raw("\",\"buffer_numel\":").qi(v.buffer_numel()).ch('}');
  }

  // dep_gen_replay_emit_deps_json's per-record steps (STEP 1, the annot
  // pass's STEP A / STEP B, STEP 4).
  void replay(const Task& t, const SubmitRequest& req) {
    preds_.clear();
    pred_set_.clear();
    for (TaskId d : req.deps)
      if (first_edge(d)) put_edge(d, -1, EdgeSource::Explicit, kDepWait | kDepRetain);
    const std::size_t n = std::min(t.args.size(), t.arg_tags.size());
    if (!t.manual_scope) {
      for (std::size_t i = 0; i < n; ++i) {
        const ArgTag tag = t.arg_tags[i];
        if (tag == ArgTag::Output) continue;
        const Tensor& v = t.args[i];
        const int arg = static_cast<int>(i);
        if (v.owner != kNoTask && first_edge(v.owner))
          put_edge(v.owner, arg, EdgeSource::Creator, kDepWait | kDepRetain, &v, nullptr, &arg_ids_[i]);
        if ((tag != ArgTag::Input && tag != ArgTag::Inout) || manual_dep(req, i)) continue;
        tensormap_.lookup(v, tag == ArgTag::Inout, matches_);
        for (const ReplayTensorMap::Match& m : matches_) {
          first_edge(m.producer);
          put_edge(m.producer, arg, EdgeSource::Tensormap, kDepWait, &v, &m);
        }
      }
      for (std::size_t i = 0; i < n; ++i)
        if ((t.arg_tags[i] == ArgTag::Inout || t.arg_tags[i] == ArgTag::OutputExisting) && !manual_dep(req, i))
          tensormap_.insert(t.args[i], t.id);
    }
  }

  static bool manual_dep(const SubmitRequest& req, std::size_t i) { return i < req.args.size() && req.args[i].manual_dep; }

  // True the first time `producer` takes an edge in the current task (a
  // short list searched in place, a set once it grows).
  bool first_edge(TaskId producer) {
    if (preds_.size() < 16) {
      if (std::find(preds_.begin(), preds_.end(), producer) != preds_.end()) return false;
      preds_.push_back(producer);
      return true;
    }
    if (pred_set_.empty()) pred_set_.insert(preds_.begin(), preds_.end());
    return pred_set_.insert(producer).second;
  }

  // An edge into the current task (task_text_). `consumer_id`: the quoted
  // tensor id of `consumer` when the caller has it (the argument's).
  void put_edge(TaskId pred, int arg, EdgeSource source, std::uint8_t flags, const Tensor* consumer = nullptr,
                const ReplayTensorMap::Match* m = nullptr, const Text32* consumer_id = nullptr) {
    {
      const std::string_view source_text = source_name(source);
      const std::string_view dtype_text = consumer ? dtype_name(consumer->dtype) : std::string_view();
      // Both names, 134 bytes of text at most, two integers with their
      // quotes and two quoted ids of 32 bytes (Text32) at most.
      JsonBuf::Direct e(edges_, source_text.size() + dtype_text.size() + 256);
      if (n_edges_++) e.ch(',');
      e.raw("{\"pred\":").qu(pred).raw(",\"succ\":").raw(task_text_).raw(",\"arg\":").i(arg);
      e.raw(",\"source\":\"").raw(source_text).ch('"');
      if (flags & kDepRetain) e.raw(",\"flags\":[\"wait\",\"retain\"]");
      else e.raw(",\"flags\":[\"wait\"]");
      if (m) {
        if (m->overlap == Overlap::Covered) e.raw(",\"overlap\":\"covered\"");
        else e.raw(",\"overlap\":\"other\"");
      }
      if (consumer) {
        // A tensormap edge names the producer's entry (its address and version).
        e.raw(",\"tensor_id\":");
        if (!m && consumer_id) e.raw(*consumer_id);
        else {
          const Tensor& id_of = m ? *m->view : *consumer;
          e.qu(dep_gen_tensor_id(id_of.addr, id_of.version));
        }
        e.raw(",\"consumer_dtype\":\"").raw(dtype_text).raw("\",");
      }
    }
    if (consumer) {
      put_view(edges_, "consumer_", *consumer);
      if (m) {
        edges_.ch(',');
        put_view(edges_, "producer_", *m->view);
      }
    }
    edges_.ch('}');
  }

  ScratchFile tasks_, tensors_, edges_;
  std::uint64_t n_tasks_ = 0, n_tensors_ = 0, n_edges_ = 0;
  // The current task's id and its listed arguments' tensor ids, quoted, as
  // formatted once for the task's record (every edge into the task and each
  // creator edge print them again; 20-digit ids are the slowest integers).
  Text32 task_text_;
  std::vector<Text32> arg_ids_;
  std::vector<std::uint64_t> arg_hashes_;  // their ids (dep_gen_tensor_id)
  FlatSet64 seen_;  // tensor ids already listed
  ReplayTensorMap tensormap_;
  std::vector<ReplayTensorMap::Match> matches_;
  std::vector<TaskId> preds_;  // producers with an edge in the current task
  std::unordered_set<TaskId> pred_set_;
};

}  // namespace

std::unique_ptr<OutputWriter> make_deps_writer(const std::string& staging_dir, int gzip_level) {
  return std::make_unique<DepsWriter>(staging_dir, gzip_level);
}

}  // namespace npusim::record
