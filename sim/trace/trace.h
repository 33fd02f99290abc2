// Loading a trace (trace-format.md) and interpreting its program.
//
// load_trace parses and checks everything that can be checked before running:
// JSON syntax, unknown keys (x_ keys ignored), types, kernel and tensor
// definitions, expressions, names used before any binding, an auto scope
// nested in a manual one. Every error is an InputError naming the file, the
// JSON pointer and what was expected.
//
// make_interpreter returns an OpSource that walks the program lazily: `for`,
// `let`, views and expressions are evaluated one operation at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/common/dtype.h"
#include "models/common/errors.h"
#include "models/common/kernel.h"
#include "models/common/run_config.h"
#include "models/runtime/data_store.h"
#include "models/runtime/orch_ops.h"

namespace npusim::trace {

struct ExternalTensor {
  std::string name;
  DType dtype = DType::FP32;
  std::vector<std::int64_t> shape;
  std::int64_t fill = 0;
  std::vector<std::int64_t> data;  // row-major; empty if not given
  std::string path;                // JSON pointer, for messages
};

struct Program;  // the checked program, opaque outside sim/trace

struct Trace {
  std::string file;   // as given ("-" shown as "<stdin>")
  std::string name;   // `name`, or the file's stem
  RunOptions run;     // the `run` block
  std::vector<std::unique_ptr<KernelDef>> kernels;  // stable addresses
  std::vector<ExternalTensor> tensors;
  std::shared_ptr<const Program> program;

  const KernelDef* kernel_by_func_id(int func_id) const;
};

// `path` "-" reads standard input.
Trace load_trace(const std::string& path);
// Parses trace text; `file` labels messages and `default_name` is used when
// the trace has no `name`.
Trace parse_trace(const std::string& text, const std::string& file, const std::string& default_name);

// The program's operations, evaluated lazily. External tensors are
// registered in `data` (addresses, data/fill) when the interpreter is made.
std::unique_ptr<OpSource> make_interpreter(const Trace& trace, DataStore& data);

}  // namespace npusim::trace
