// Scenes (docs/spec/scene-format.md, docs/scenes.md): a real
// orchestration program (a C++ source against npusim's SDK, or a shared
// object built against it), its kernels (incores) and the host's arguments.
//
// load_program reads a trace or a scene (told apart by the version key) into
// a trace::Trace: a scene's kernels and arguments become the trace's kernels
// and tensors, its program is an ExternalProgram that compiles the source
// (cached by content), runs it in npusim-orch-runner and streams its calls
// as the runtime operations they are (scene_source.cpp).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/common/expr.h"
#include "models/common/kernel.h"
#include "sim/trace/trace.h"

namespace npusim::scene {

// A value an incore writes when a task running it completes (the scene's
// counterpart of a trace submit's `writes`): an element of one of its
// arguments, given by index within the view or linear element, and an
// expression over its scalars (s0 .. s15) and block_num.
struct IncoreWrite {
  int arg = 0;
  std::vector<Expr> index;
  Expr element;  // used when `index` is empty
  Expr value;
  std::string path;
};

struct Incore {
  const KernelDef* kernel = nullptr;
  std::vector<IncoreWrite> writes;
  bool declares_writes = false;  // has a `writes` key (even empty): its other elements keep their values
  std::string json;   // its definition as a trace kernel (after calibration), for `record`
};

struct SceneDef {
  std::string file;         // the scene file as given
  std::string dir;          // relative paths resolve against it
  std::string source;       // absolute path of the .cpp, or
  std::string library;      // of a prebuilt shared object
  std::string entry = "aicpu_orchestration_entry";
  std::string config = "aicpu_orchestration_config";
  std::vector<Incore> incores;                 // by func_id order of definition
  std::map<int, std::string> annotated_incores;  // func_id -> an `x_` key (an annotation) defining it
  std::vector<std::uint64_t> scalars;          // the scalar arguments, in order
  std::vector<int> arg_order;                  // per arg: tensor index (>= 0) or -(scalar index) - 1
  std::string args_json;                       // `args` as given (for `record`)
  const Incore* incore(int func_id) const;
};

// Where the SDK's headers and the runner are (environment overrides:
// NPUSIM_SDK_DIR, NPUSIM_ORCH_RUNNER).
std::string sdk_include_dir();
std::string runner_path();

// Reads a trace or a scene file ("-": a trace on standard input), once
// (json_input::read_text: its size limit, a folder or binary input named); the
// text read goes to `text` when given.
// `check_ops`: as trace::parse_trace's (false: the caller calls
// trace::finish_checks).
trace::Trace load_program(const std::string& path, std::shared_ptr<const std::string>* text = nullptr,
                          bool check_ops = true);

// The scene behind a loaded program, or nullptr for a trace.
const SceneDef* scene_of(const trace::Trace& t);

// The shared object for a scene (its library, or its source compiled into
// the cache: $NPUSIM_CACHE_DIR, else $XDG_CACHE_HOME/npusim, else
// ~/.cache/npusim). A compile error is an InputError with the compiler's output.
std::string build_library(const SceneDef& scene);

// Observers of what a scene's program does beyond the runtime operations.
struct SceneHooks {
  std::function<void(const std::string& kind, const std::string& message)> warning;
};
void set_hooks(trace::Trace& t, SceneHooks hooks);

}  // namespace npusim::scene
