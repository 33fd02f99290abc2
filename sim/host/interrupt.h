// Interrupted runs leave nothing behind (docs/outputs.md, "Interruption").
//
// SIGINT, SIGTERM and SIGHUP (and SIGALRM, SIGUSR1, SIGUSR2: every signal
// that would end the process without a core dump) are caught: the handler
// kills the process groups registered (a scene's runner and the program's
// children, the scene compiler), forwards the signal to
// the child npusim it is waiting for (a sizing re-run, a barrier-cost point)
// and waits for it, removes every path registered here (staging folders,
// lock files, parent folders npusim created), says so on standard error, and
// then dies of the same signal (a shell sees 128 + N). SIGXFSZ is ignored, so
// a write beyond `ulimit -f` is an I/O error naming the file (exit 2), and so
// is SIGPIPE (a write to a closed pipe fails instead of killing the run).
//
// Everything the handler does is async-signal-safe: paths are copied into
// fixed buffers when they are registered, and folders are removed with
// openat/getdents64/unlinkat, without allocating.
#pragma once

#include <string>

#include <sys/types.h>

namespace npusim::host::interrupt {

// Installs the handlers (idempotent).
void install();

enum class Kind { Tree, File, EmptyDir };

// Removes `path` if the process is interrupted: a Tree with everything in
// it, a File unlinked, an EmptyDir only if it is empty. Removal runs in the
// reverse order of registration. Returns a handle for `forget`.
int remember(Kind kind, const std::string& path);
// The path is no longer the handler's (it was committed or removed).
void forget(int handle);

// The child being waited for (0: none): it gets the same signal.
void set_child(pid_t pid);

// Children run side by side (a sweep's points): each gets the signal and is
// waited for. At most kMaxChildren at once; add_child returns false when full.
constexpr int kMaxChildren = 64;
bool add_child(pid_t pid);
void remove_child(pid_t pid);

// A process group led by `leader` (a scene's orchestration runner, the scene
// compiler's guard): killed whole (SIGKILL) and its leader waited for.
// At most kMaxGroups at once; add_group returns false when full.
constexpr int kMaxGroups = 16;
bool add_group(pid_t leader);
void remove_group(pid_t leader);

}  // namespace npusim::host::interrupt
