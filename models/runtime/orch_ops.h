// The seam between a program and the orchestrator: a stream of resolved
// orchestration operations, each the equivalent of one call of the runtime's
// device-side orchestration API (PTO2_SCOPE, alloc_tensors, submit_task,
// rt_submit_dummy_task, get_tensor_data, rt_report_fatal).
//
// An OpSource (sim/trace's interpreter) evaluates the trace lazily: loops,
// variables and expressions are resolved one operation at a time, so a
// program of a million tasks is never held in memory. Results flow back
// (task ids, output tensors, read values) before the next op is asked for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/common/kernel.h"
#include "models/runtime/tensor.h"

namespace npusim {

enum class ArgTag : std::uint8_t { Input = 0, Output = 1, Inout = 2, OutputExisting = 3, NoDep = 4 };

inline const char* arg_tag_name(ArgTag t) {  // deps.json spelling
  switch (t) {
    case ArgTag::Input: return "INPUT";
    case ArgTag::Output: return "OUTPUT";
    case ArgTag::Inout: return "INOUT";
    case ArgTag::OutputExisting: return "OUTPUT_EXISTING";
    case ArgTag::NoDep: return "UNKNOWN";
  }
  return "UNKNOWN";
}

enum class ScopeMode : std::uint8_t { Auto, Manual };
enum class Cmp : std::uint8_t { EQ, NE, GT, LT, GE, LE };

// A predicate's comparison of the operand `a` with its value `b`.
inline bool compare(Cmp c, std::int64_t a, std::int64_t b) {
  switch (c) {
    case Cmp::EQ: return a == b;
    case Cmp::NE: return a != b;
    case Cmp::GT: return a > b;
    case Cmp::LT: return a < b;
    case Cmp::GE: return a >= b;
    case Cmp::LE: return a <= b;
  }
  return false;
}

struct SubmitArg {
  ArgTag tag = ArgTag::Input;
  // For Output: only dtype, ndims and shape are meaningful (buf_shape = shape,
  // offset 0); the runtime places the buffer on the ring heap and fills in
  // addr, buffer and owner. For the others: the view passed to the kernel.
  Tensor tensor;
  bool manual_dep = false;
  // Output: the buffer's initial element value (TensorCreateInfo::set_initial_value).
  std::int64_t fill = 0;
  // The kernel scope's set_cache_policy makes this argument's loads BYPASS
  // (those that name no `cache` of their own).
  bool cache_bypass = false;
};

struct PredicateSpec {
  Tensor tensor;            // the operand's view
  std::int64_t element = 0; // linear element index into the buffer
  Cmp cmp = Cmp::EQ;
  std::int64_t value = 0;
};

struct WriteSpec {
  int arg = 0;              // which submit arg's buffer
  std::int64_t element = 0; // linear element index into that buffer
  std::int64_t value = 0;
};

struct SubmitRequest {
  const KernelDef* kernel = nullptr;  // nullptr: dummy task
  std::vector<SubmitArg> args;
  int block_num = 1;
  std::vector<TaskId> deps;           // explicit dependencies
  std::vector<std::uint8_t> dep_flags;  // DepFlags of each of `deps` (add_dep_wait: WAIT only); empty: WAIT|RETAIN
  bool early_resolve = false;
  bool sync_start = false;
  std::optional<PredicateSpec> predicate;
  std::vector<WriteSpec> writes;
  std::string site;                   // "" if the trace gave none
  std::string path;                   // JSON pointer of the op (messages), unless path_ref is set
  // The op's path where the source keeps it (the trace interpreter points at
  // the op's path in its program, valid until its next op): one string copy
  // fewer per submit. Readers take path_text().
  const std::string* path_ref = nullptr;
  const std::string& path_text() const { return path_ref ? *path_ref : path; }
};

struct OrchOp {
  // Write: set_tensor_data; Fatal: rt_report_fatal (an SDK program's own report).
  enum class Kind : std::uint8_t { ScopeBegin, ScopeEnd, Alloc, Submit, Dummy, Read, Write, Fatal };
  Kind kind = Kind::Submit;
  // ScopeBegin
  ScopeMode mode = ScopeMode::Auto;
  std::string site;
  // Alloc: output shapes and dtypes (as SubmitArg tensors with tag Output)
  std::vector<SubmitArg> alloc_outputs;
  // Submit / Dummy
  SubmitRequest submit;
  // Read and Write
  Tensor read_tensor;
  std::int64_t read_element = 0;  // linear element index into the buffer
  std::int64_t write_value = 0;   // Write
  // Fatal: the runtime's error code (PTO2_ERROR_*) and the message
  int fatal_code = 0;
  std::string fatal_message;
  // All kinds: the op's JSON pointer, in `path` or where the source keeps it
  // (`path_ref`: the trace interpreter points at its program's string, valid
  // until its next op, so no string is copied per op). Readers take
  // path_text(). A source writes them once the op is complete (the trace
  // interpreter does, so an op that fails part-way leaves the last op's
  // path: the orchestrator reads it as the path of the op taken).
  std::string path;
  const std::string* path_ref = nullptr;
  const std::string& path_text() const { return path_ref ? *path_ref : path; }
};

class OpSource {
 public:
  virtual ~OpSource() = default;
  // Fills `op` with the next operation; false when the program has ended
  // (every ScopeBegin has had its ScopeEnd). Throws InputError for a program
  // error found while evaluating (bad view bounds, division by zero, ...).
  // The caller passes the same op each time and only reads it: a source may
  // leave the fields that did not change since its last op as they are (the
  // trace interpreter does with a submit's arguments); given another op
  // object, it fills every field.
  virtual bool next(OrchOp& op) = 0;
  // Result of the last Alloc/Submit/Dummy: the task id and the tensors its
  // OUTPUT args (in order) became. Must be called before the next `next`.
  virtual void deliver_task(TaskId id, const std::vector<Tensor>& outputs) = 0;
  // The same result as the runtime holds it: the task's argument views and
  // tags (Task::args, Task::arg_tags), whose Output-tagged views are the
  // outputs, in order. Returns false when the source takes only
  // deliver_task (the caller then gathers the outputs and calls it). The
  // trace interpreter reads the views in place: gathering them copied each
  // output's ~200-byte view into a vector per task, to be copied again.
  virtual bool deliver_task_args(TaskId /*id*/, const std::vector<Tensor>& /*args*/,
                                 const std::vector<ArgTag>& /*tags*/) {
    return false;
  }
  // Result of the last Read.
  virtual void deliver_value(std::int64_t value) = 0;
};

}  // namespace npusim
