// Loading a trace (trace-format.md) and interpreting its program.
//
// load_trace parses and checks everything that can be checked before running:
// JSON syntax, unknown keys (x_ keys ignored), types, kernel and tensor
// definitions, expressions, names used before any binding, an auto scope
// nested in a manual one. Every error is an InputError naming the file, the
// JSON pointer and what was expected.
//
// make_interpreter returns an OpSource that walks the program lazily: `for`,
// `let`, views and expressions are evaluated one operation at a time, and the
// program's top-level ops are compiled from the trace's text as it reaches
// them (docs/trace-format.md, "How a trace is loaded").
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <utility>
#include <string>
#include <vector>

#include "models/common/dtype.h"
#include "models/common/errors.h"
#include "models/common/kernel.h"
#include "models/common/platform.h"
#include "models/common/run_config.h"
#include "models/runtime/data_store.h"
#include "models/runtime/orch_ops.h"

namespace npusim::trace {

// ---- Limits (docs/trace-format.md, "Limits") ----------------------------------
// Each is checked with an InputError naming the JSON path (at load time for
// constants, when evaluated for expressions). Tensor rank: 1..kMaxDims (5,
// models/runtime/tensor.h); expressions: kExprMaxLength, kExprMaxNesting
// (models/common/expr.h). Scope nesting beyond the runtime's 64 levels is not
// an input error: the run fails as the device does (its assert), and the
// JSON depth bounds the program's nesting (at most 127 nested scope/for bodies).
constexpr int kMaxJsonDepth = 256;            // nesting of JSON objects and lists
constexpr int kMaxTensorArgs = 32;            // MAX_TENSOR_ARGS of the runtime's payload
constexpr std::int64_t kMaxBlockNum = 32767;  // int16 on the device
constexpr std::int64_t kMaxElements = std::int64_t(1) << 40;            // per tensor
constexpr std::uint64_t kMaxLoopIterations = std::uint64_t(1) << 32;    // all `for` loops of one run together
constexpr double kMaxDuration = 3.6e12;       // a kernel duration's ns or cycles (an hour in ns)
constexpr std::int64_t kMaxTransferBytes = std::int64_t(1) << 40;       // constant load/store/push/pop bytes and offsets
constexpr std::int64_t kMaxRepeatCount = 65536;    // `repeat` count of a kernel phase body
constexpr std::int64_t kMaxPeerOffset = 1024;     // a peer phase's peer_offset, either way round the node
constexpr std::int64_t kMaxFlag = 1023;           // a notify / wait_flag signal slot
constexpr int kMaxRepeatNesting = 8;               // `repeat` inside `repeat`
constexpr std::size_t kMaxLanePhases = 65536;      // phases of one lane once repeats are expanded
constexpr std::size_t kMaxTracePhases = std::size_t(1) << 20;  // phases of all kernels together, repeats expanded
constexpr std::uint64_t kMaxTraceBytes = std::uint64_t(1) << 30;  // a trace file (1 GiB)

struct ExternalTensor {
  std::string name;
  DType dtype = DType::FP32;
  std::vector<std::int64_t> shape;
  std::int64_t fill = 0;
  std::vector<std::int64_t> data;  // row-major; empty if not given
  std::string path;                // JSON pointer, for messages
};

struct Program;  // the checked program, opaque outside sim/trace
struct Trace;

// A program that is not a trace's list of operations: a scene's
// orchestration source running in its own process (sim/scene). It hands out
// the op source of one run, and may define kernels while it runs (MIX tasks
// composed of per-lane incores).
class ExternalProgram {
 public:
  virtual ~ExternalProgram() = default;
  virtual std::unique_ptr<OpSource> start(const Trace& trace, DataStore& data, const Platform& platform,
                                          const RunConfig& config) = 0;
  virtual std::vector<const KernelDef*> defined_kernels() const = 0;
};

struct Trace {
  std::string file;   // as given ("-" shown as "<stdin>")
  std::string name;   // `name`, or the file's stem
  RunOptions run;     // the `run` block
  std::vector<std::unique_ptr<KernelDef>> kernels;  // stable addresses
  std::vector<ExternalTensor> tensors;
  std::shared_ptr<const Program> program;
  std::shared_ptr<ExternalProgram> external;  // a scene: no `program`

  const KernelDef* kernel_by_func_id(int func_id) const;
  // The kernels, with those an external program defined while it ran.
  std::vector<const KernelDef*> all_kernels() const;
};

// `path` "-" reads standard input. The text is read once (a FIFO works) and,
// if `text` is given, handed back there (the program reads its ops from it
// as it runs: it is held, not copied).
Trace load_trace(const std::string& path, std::shared_ptr<const std::string>* text = nullptr, bool check_ops = true);
// Parses trace text; `file` labels messages and `default_name` is used when
// the trace has no `name`. Every op of the program is checked here; the
// trace keeps the text and compiles the ops again as they are interpreted.
Trace parse_trace(const std::string& text, const std::string& file, const std::string& default_name);
// With `check_ops` false, the program's ops are not compiled here but only
// as the interpreter reaches them (npusim check's dry run, one compilation
// per op): the caller must then call finish_checks once it stops, so that
// the first load-time error is still the one reported.
Trace parse_trace(std::shared_ptr<const std::string> text, const std::string& file, const std::string& default_name,
                  bool check_ops = true);
// For a trace loaded without its ops checked: compiles the ops `source` (its
// interpreter, or null if none was made) did not reach, and throws the first
// InputError among them. Nothing for a trace whose ops were checked at load.
void finish_checks(const Trace& trace, OpSource* source);

// The program's operations, evaluated lazily. External tensors are
// registered in `data` (addresses, data/fill) when the interpreter is made.
// `max_loop_iterations` bounds the iterations of all `for` loops together
// (an InputError when a loop would go beyond it); tests and the fuzzers set
// it lower.
std::unique_ptr<OpSource> make_interpreter(const Trace& trace, DataStore& data,
                                           std::uint64_t max_loop_iterations = kMaxLoopIterations);

// The op source of one run: the interpreter, or the external program's.
std::unique_ptr<OpSource> make_source(const Trace& trace, DataStore& data, const Platform& platform,
                                      const RunConfig& config);

// The checks a launch of a kernel gets before the model runs it (the
// interpreter's, and an SDK program's): the phase expressions of each
// (kernel, block_num) evaluated for every block, once; soft-syncall
// workspaces of the right type and size. InputErrors name `file`.
class LaunchChecker {
 public:
  explicit LaunchChecker(std::string file) : file_(std::move(file)) {}
  void check(const KernelDef& k, const SubmitRequest& req, const std::string& submit_path);

 private:
  void check_block_expr(const Expr& e, const std::string& phase_path, const char* key, const char* name,
                        std::int64_t lo, std::int64_t hi, int block_num, const std::string& submit_path) const;
  struct KernelFacts {
    const KernelDef* kernel = nullptr;
    int max_arg = -1;        // the largest argument index a phase uses (arg, workspace_arg)
    bool workspace = false;  // some phase has a syncall workspace argument
  };
  KernelFacts facts(const KernelDef& k);
  std::vector<KernelFacts> kernels_;
  // True the first time the pair is met (it is then recorded).
  bool first_use(const KernelDef* k, int block_num);
  std::string file_;
  std::set<std::pair<const KernelDef*, int>> checked_;
  static constexpr std::size_t kRecent = 16;
  std::vector<std::pair<const KernelDef*, int>> recent_;  // the first kRecent pairs of checked_
};

// For a dry run without a device (npusim check, the fuzz targets): the
// outputs of an accepted task op, each OUTPUT argument a fresh buffer at a
// made-up address spaced as the runtime's heap would space it, so the program
// can go on evaluating.
class DryRunOutputs {
 public:
  explicit DryRunOutputs(DataStore& data) : data_(data) {}
  const std::vector<Tensor>& make(const std::vector<SubmitArg>& args, TaskId owner);

 private:
  DataStore& data_;
  std::uint64_t next_addr_ = 0x2000000000ull;
  std::vector<Tensor> outs_;
};

}  // namespace npusim::trace
