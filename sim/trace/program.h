// The checked, compiled form of a trace's program (private to sim/trace).
//
// The loader flattens the program into a linear code of instructions with
// jumps (a `for` becomes ForInit ... ForNext), resolves every variable name to
// a slot and compiles every expression once. The interpreter walks the code
// with a program counter and a slot table; nothing grows with the number of
// operations run (only a set of the (kernel, block_num) pairs submitted, each
// checked once).
//
// A trace's program is compiled one top-level op at a time (docs/trace-format.md,
// "How a trace is loaded"): at load, every op is compiled to check it and
// dropped; the interpreter compiles them again, in order, as it reaches them
// (ProgramReader), into one Program that holds a single top-level op (with
// its nested bodies) at a time. Only the names (slots), the root's cache
// policy declarations and the scope count carry from one op to the next.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/common/expr.h"
#include "models/common/kernel.h"
#include "models/runtime/orch_ops.h"
#include "sim/trace/trace.h"

namespace npusim::trace {

// Number of elements of a shape of `n` positive extents, or -1 when it is
// above kMaxElements.
inline std::int64_t checked_numel(const std::int64_t* dims, std::size_t n) {
  std::int64_t numel = 1;
  for (std::size_t d = 0; d < n; ++d)
    if (__builtin_mul_overflow(numel, dims[d], &numel) || numel > kMaxElements) return -1;
  return numel;
}
inline std::string too_many_elements() {
  return "tensor too large (more than " + std::to_string(kMaxElements) + " elements)";
}

// An integer field: a constant or an expression, with its JSON pointer and the
// range its values must lie in (checked at load time for constants, at run
// time otherwise).
struct IntField {
  Expr expr;
  std::string path;
  std::string name;  // for messages: "block_num", "shape", ...
  std::int64_t lo = std::numeric_limits<std::int64_t>::min();
  std::int64_t hi = std::numeric_limits<std::int64_t>::max();
  bool nonzero = false;
};

// "" if `v` is an acceptable value of `f`, else what is wrong with it.
inline bool int_field_ok(const IntField& f, std::int64_t v) {
  return v >= f.lo && v <= f.hi && !(f.nonzero && v == 0);
}
inline std::string int_field_error(const IntField& f, std::int64_t v) {
  const std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  const std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  if (f.nonzero && v == 0) return f.name + " must not be 0";
  if (int_field_ok(f, v)) return "";
  std::string range = f.hi == kMax ? ">= " + std::to_string(f.lo)
                    : f.lo == kMin ? "<= " + std::to_string(f.hi)
                                   : "in [" + std::to_string(f.lo) + ", " + std::to_string(f.hi) + "]";
  return f.name + " must be " + range + ", got " + std::to_string(v);
}

// A use of a variable.
struct NameRef {
  int slot = -1;
  std::string path;  // pointer of the JSON string that names it
};

// A view relative to a tensor's current view (`offset`/`shape` lists; an
// empty list takes its default: zeros / the parent's shape minus the offset),
// or in the runtime's own encoding (`start`, `strides` and `shape`, absolute
// in the tensor's buffer, optionally reinterpreted: `dtype`, `byte_offset`,
// `numel`; docs/trace-format.md, "Extensions").
struct ViewSpec {
  std::vector<IntField> offset;
  std::vector<IntField> shape;
  bool strided_form = false;
  IntField start;
  std::vector<IntField> strides;
  std::optional<DType> dtype;
  std::optional<IntField> byte_offset;
  std::optional<IntField> numel;
  std::optional<IntField> version;
  bool no_creator = false;  // "creator": false
  std::string path;  // the object holding offset/shape
  // A box view whose shape is given and constant, every extent > 0 (the
  // loader's finish_view): the interpreter reads the extents here.
  bool fixed_shape = false;
  std::array<std::int64_t, kMaxDims> shape_value{};
};

// Fills the view's fixed_shape and shape_value.
inline void finish_view(ViewSpec& s) {
  s.fixed_shape = !s.strided_form && !s.shape.empty() && s.shape.size() <= kMaxDims;
  for (std::size_t d = 0; s.fixed_shape && d < s.shape.size(); ++d) {
    s.fixed_shape = s.shape[d].expr.is_const() && s.shape[d].expr.const_value() > 0;
    if (s.fixed_shape) s.shape_value[d] = s.shape[d].expr.const_value();
  }
}

struct ArgSpec {
  ArgTag tag = ArgTag::Input;
  NameRef name;                     // the tensor used; for Output the variable bound
  ViewSpec view;                    // not Output
  std::vector<IntField> out_shape;  // Output
  DType dtype = DType::FP32;        // Output
  // Output: the tensor the submit passes, its constant extents filled in at
  // load (the interpreter copies it and evaluates the others).
  Tensor out_tensor;
  std::optional<IntField> fill;     // Output: the buffer's initial value
  bool manual_dep = false;
  std::string path;
  // What the argument's value depends on (classify_arg, at load), so the
  // interpreter refills a submit's argument only when that changed:
  // Parent: a view with constant fields of the variable `name` (the plain
  // `{"in": NAME}` among them), the same while that variable is;
  // Once: an OUTPUT with constant extents and fill, the same every time;
  // Every: evaluated at every submit (an expression, a strided view).
  enum class Reuse : std::uint8_t { Every, Parent, Once };
  Reuse reuse = Reuse::Every;
  bool plain = false;  // Parent with no offset/shape/version/creator: the variable's tensor itself
};

inline bool all_const(const std::vector<IntField>& fs) {
  for (const IntField& f : fs)
    if (!f.expr.is_const()) return false;
  return true;
}
inline void classify_arg(ArgSpec& a) {
  a.reuse = ArgSpec::Reuse::Every;
  a.plain = false;
  if (a.tag == ArgTag::Output) {
    if (all_const(a.out_shape) && (!a.fill || a.fill->expr.is_const())) a.reuse = ArgSpec::Reuse::Once;
    return;
  }
  const ViewSpec& v = a.view;
  if (v.strided_form || !all_const(v.offset) || !all_const(v.shape) || (v.version && !v.version->expr.is_const()))
    return;
  a.reuse = ArgSpec::Reuse::Parent;
  a.plain = v.offset.empty() && v.shape.empty() && !v.version && !v.no_creator;
}

// An element of a tensor: `index` within its view, or `element`, the linear
// element index into its buffer (an extension).
struct PredicateOp {
  NameRef tensor;
  std::vector<IntField> index;
  std::optional<IntField> element;
  Cmp cmp = Cmp::EQ;
  IntField value;
  std::string path;
};

struct WriteOp {
  int arg = 0;
  std::vector<IntField> index;
  std::optional<IntField> element;
  IntField value;
  std::string path;
};

// submit, dummy and alloc (whose outputs are `args`, all Output).
struct TaskOp {
  OrchOp::Kind kind = OrchOp::Kind::Submit;
  const KernelDef* kernel = nullptr;
  std::vector<ArgSpec> args;
  int id_slot = -1;
  IntField block_num;
  std::vector<NameRef> deps;
  std::vector<std::uint8_t> dep_flags;  // per dep: WAIT|RETAIN, or WAIT for {"wait": NAME}
  bool early_resolve = false;
  bool sync_start = false;
  std::optional<PredicateOp> predicate;
  std::vector<WriteOp> writes;
  std::string site;
  std::string path;
  int policy_set = 0;  // the enclosing scope's PolicySet
  bool in_kernel_scope = false;  // some enclosing PolicySet lowers (fixed when the op is compiled)
  std::uint32_t outputs = 0;  // OUTPUT arguments among `args` (counted at load, not per run)
  // The arguments that can differ from this op's last submit (every one but
  // the Once outputs), in order, each with what the interpreter needs to
  // tell (made at load): a submit after the op's first walks only these.
  // Inline arrays, not vectors: a streamed program compiles each op twice
  // (at load and when the interpreter reaches it), and two allocations per
  // op were most of what the lists cost a flat program.
  struct Varying {
    int slot = -1;  // the variable a Parent argument is a view of
    std::uint8_t arg = 0;
    ArgSpec::Reuse reuse = ArgSpec::Reuse::Every;
    bool plain = false;
  };
  std::array<Varying, kMaxTensorArgs> varying{};
  std::uint32_t varying_count = 0;
  std::array<std::uint8_t, kMaxTensorArgs> output_args{};  // the indices of the `outputs` OUTPUT arguments, in order
};

// `set_cache_policy` (an extension, seed 000_*.txt): one declaration of a
// scope's own body.
struct CachePolicyDecl {
  NameRef tensor;
  bool bypass = false;  // BYPASS, else DEFAULT
  std::string path;
};

// The declarations of one scope (or of the program's root). They lower to
// the loads of the scope's kernels only in a kernel scope (level
// "core_group" or "spmd"); elsewhere they are carried without effect.
// Declarations of enclosing scopes apply too, the innermost first.
struct PolicySet {
  int parent = -1;
  bool lowers = false;
  std::vector<CachePolicyDecl> decls;
};

struct ScopeOp {
  ScopeMode mode = ScopeMode::Auto;
  std::string site;
  std::string level;   // "" (a runtime scope), "core_group", "spmd", ...
  int policy_set = -1;
  std::string path;
};

struct LetOp {
  int slot = -1;
  IntField value;
};

struct ViewOp {
  int bind = -1;
  NameRef of;
  ViewSpec view;
};

// `read` (get_tensor_data) and `set` (set_tensor_data, an extension).
struct ReadOp {
  NameRef tensor;
  std::vector<IntField> index;
  std::optional<IntField> element;
  int bind = -1;
  bool set = false;
  IntField value;  // set
  std::string path;
};

// `fatal` (rt_report_fatal, an extension).
struct FatalOp {
  int code = 0;
  std::string message;
  std::string path;
};

struct ForOp {
  std::string path;
  int var = -1;
  IntField from, to, step;
  std::size_t body = 0;  // pc of the first body instruction
  std::size_t exit = 0;  // pc after the loop's ForNext
};

enum class Code : std::uint8_t { ScopeBegin, ScopeEnd, Task, Read, Let, View, ForInit, ForNext, Fatal };

struct Instr {
  Code code;
  std::uint32_t index;  // into the table of that code (ScopeEnd: scopes, ForNext: fors)
};

struct Program {
  std::vector<Instr> code;
  std::vector<ScopeOp> scopes;
  std::vector<TaskOp> tasks;
  std::vector<ReadOp> reads;  // reads and sets
  std::vector<FatalOp> fatals;
  std::vector<LetOp> lets;
  std::vector<ViewOp> views;
  std::vector<ForOp> fors;
  std::vector<PolicySet> policy_sets;  // [0]: the program's root
  bool policies_lower = false;         // some kernel scope declares a policy
  std::vector<std::string> slot_names;  // variable name of each slot
  std::vector<int> tensor_slots;        // slot of each of Trace::tensors

  // A program read from the trace's text one top-level op at a time: the
  // text and the offset of its `program` list (its tables above are empty
  // but for the tensors' slots). Without text, the tables hold it all.
  std::shared_ptr<const std::string> text;
  std::size_t list_at = 0;
  bool ops_checked = true;  // false: load left the ops to the interpreter and finish_checks
};

// Compiles a streamed program's top-level ops one at a time, in order, into
// the Program it was made with.
class ProgramReader {
 public:
  virtual ~ProgramReader() = default;
  // Replaces the program's code and tables with the next top-level op's (its
  // names, root declarations and flags carry over); false after the last.
  virtual bool next() = 0;
};
// The reader of `trace`'s program (which must have text); `into` is set to
// the program as it stands before the first op (the tensors' slots).
std::unique_ptr<ProgramReader> read_program(const Trace& trace, Program& into);

}  // namespace npusim::trace
