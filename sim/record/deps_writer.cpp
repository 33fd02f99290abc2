// deps.json, the runtime's dep_gen schema (runtime-semantics.md §8.4).
//
// Compact JSON, keys in the runtime's order. Tasks, tensors and edges stream
// to three scratch files as tasks are submitted; finish() appends the tensors
// and edges to the tasks and renames the result. Tensors
// are deduplicated by tensor_id, which depends only on (address, version):
// the set of ids seen is bounded by the distinct buffer addresses, not by the
// number of tasks.
#include "sim/record/json_out.h"
#include "sim/record/writer.h"

namespace npusim::record {
namespace {

// FNV-1a-64 over the 8 little-endian bytes of the address, then the 4
// little-endian bytes of the version (dep_gen's tensor_id).
std::uint64_t dep_gen_tensor_id(std::uint64_t addr, std::uint32_t version) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (int k = 0; k < 8; ++k) h = (h ^ ((addr >> (8 * k)) & 0xff)) * 0x100000001b3ull;
  for (int k = 0; k < 4; ++k) h = (h ^ ((version >> (8 * k)) & 0xff)) * 0x100000001b3ull;
  return h;
}

constexpr const char* kFile = "deps.json";

// `"<prefix>shape":[..],"<prefix>start_offset":"..","<prefix>strides":[..]`
void put_view(JsonBuf& b, const char* prefix, const Tensor& v) {
  b.ch('"').raw(prefix).raw("shape\":[");
  for (int d = 0; d < v.ndims; ++d) (d ? b.ch(',') : b).i(v.shape[d]);
  b.raw("],\"").raw(prefix).raw("start_offset\":").qi(v.start_offset());
  b.raw(",\"").raw(prefix).raw("strides\":[");
  for (int d = 0; d < v.ndims; ++d) (d ? b.ch(',') : b).i(v.stride(d));
  b.ch(']');
}

class DepsWriter : public OutputWriter {
 public:
  explicit DepsWriter(const std::string& dir)
      : OutputWriter(dir), tasks_(dir, "deps_tasks"), tensors_(dir, "deps_tensors"), edges_(dir, "deps_edges") {
    tasks_.raw("{\"tasks\":[");
  }

  void on_submitted(const Task& t, const std::vector<EdgeInfo>& edges) override {
    if (t.kind == TaskKind::Alloc) return;  // alloc_tensors producers appear only as pred
    put_task(t);
    for (const EdgeInfo& e : edges) put_edge(t, e);
    tasks_.commit();
    tensors_.commit();
    edges_.commit();
  }

  // The tasks stream becomes the file; tensors and edges are appended to it.
  void finish(const RunInfo&) override {
    tasks_.raw("],\n \"tensors\":[");
    tasks_.append(tensors_);
    tasks_.raw("],\n \"edges\":[");
    tasks_.append(edges_);
    tasks_.raw("]}\n");
    tasks_.close_as(dir() + "/" + kFile);
  }

  std::vector<std::string> files() const override { return {kFile}; }

 private:
  void put_task(const Task& t) {
    if (n_tasks_++) tasks_.ch(',');
    tasks_.raw("{\"task_id\":").qu(t.id);
    tasks_.raw(t.manual_scope ? ",\"scope\":\"manual\"" : ",\"scope\":\"auto\"");
    tasks_.raw(",\"early_dispatch\":").boolean(t.early_resolve);
    tasks_.raw(",\"kernel_ids\":[");
    for (int lane = 0; lane < kNumLanes; ++lane) {
      bool active = t.kernel && (t.active_mask & (1u << lane));
      (lane ? tasks_.ch(',') : tasks_).i(active ? t.kernel->lane_func_id(lane) : -1);
    }
    tasks_.raw("],\"block_num\":").i(t.block_num).raw(",\"args\":[");
    for (std::size_t k = 0; k < t.args.size() && k < t.arg_tags.size(); ++k) {
      if (k) tasks_.ch(',');
      tasks_.raw("{\"idx\":").u(k).raw(",\"type\":\"").raw(arg_tag_name(t.arg_tags[k])).ch('"');
      if (t.arg_tags[k] != ArgTag::Output) {
        const Tensor& v = t.args[k];
        std::uint64_t id = put_tensor(v);
        tasks_.raw(",\"tensor_id\":").qu(id).raw(",\"dtype\":\"").raw(dtype_runtime_name(v.dtype)).raw("\",");
        put_view(tasks_, "", v);
      }
      tasks_.ch('}');
    }
    tasks_.raw("]}");
  }

  // Lists the tensor on first sight; returns its id.
  std::uint64_t put_tensor(const Tensor& v) {
    std::uint64_t id = dep_gen_tensor_id(v.addr, v.version);
    if (!seen_.insert(id)) return id;
    if (n_tensors_++) tensors_.ch(',');
    tensors_.raw("{\"tensor_id\":").qu(id).raw(",\"buffer_addr\":").qu(v.addr);
    tensors_.raw(",\"version\":").u(v.version).raw(",\"dtype\":\"").raw(dtype_runtime_name(v.dtype));
    tensors_.raw("\",\"buffer_numel\":").qi(v.buffer_numel()).ch('}');
    return id;
  }

  void put_edge(const Task& t, const EdgeInfo& e) {
    if (n_edges_++) edges_.ch(',');
    edges_.raw("{\"pred\":").qu(e.pred).raw(",\"succ\":").qu(t.id).raw(",\"arg\":").i(e.arg);
    edges_.raw(",\"source\":\"").raw(edge_source_name(e.source)).ch('"');
    // Explicit deps are recorded as WAIT|RETAIN whatever their kind: the
    // capture does not carry it (dep_gen_replay.cpp, STEP 1).
    edges_.raw((e.flags & kDepRetain) || e.source == EdgeSource::Explicit ? ",\"flags\":[\"wait\",\"retain\"]"
                                                                          : ",\"flags\":[\"wait\"]");
    if (e.source != EdgeSource::Explicit) {
      const Tensor& c = e.consumer_view;
      edges_.raw(",\"tensor_id\":").qu(dep_gen_tensor_id(c.addr, c.version));
      edges_.raw(",\"consumer_dtype\":\"").raw(dtype_runtime_name(c.dtype)).raw("\",");
      put_view(edges_, "consumer_", c);
      if (e.source == EdgeSource::Tensormap) {
        edges_.raw(e.overlap == Overlap::Covered ? ",\"overlap\":\"covered\"," : ",\"overlap\":\"other\",");
        put_view(edges_, "producer_", e.producer_view);
      }
    }
    edges_.ch('}');
  }

  ScratchFile tasks_, tensors_, edges_;
  std::uint64_t n_tasks_ = 0, n_tensors_ = 0, n_edges_ = 0;
  FlatSet64 seen_;  // tensor ids already listed
};

}  // namespace

std::unique_ptr<OutputWriter> make_deps_writer(const std::string& staging_dir) {
  return std::make_unique<DepsWriter>(staging_dir);
}

}  // namespace npusim::record
