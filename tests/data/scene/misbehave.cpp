// One task, then the program misbehaves the way its scalar argument picks:
// it blocks, forks, calls the runtime from a forked process or a second
// thread, writes to npusim's pipe, gives texts of megabytes, or passes
// 200,000 explicit deps (tests/test_scene_runner.cpp). A process it starts
// says its pid on standard error ("misbehave: pid N"), for the test to
// check that it is gone.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pto_orchestration_api.h"

namespace {

void say_pid(const char *who) {
    std::fprintf(stderr, "misbehave: %s %d\n", who, static_cast<int>(getpid()));
    std::fflush(stderr);
}

void submit_one(const ChipTensor &t) {
    CoreTaskArgs p;
    p.add_inout(t);
    rt_submit_aiv_task(0, p);
}

// A child that lives on, holding every descriptor the program had (it has
// said its pid when this returns).
pid_t fork_sleeper() {
    int ready[2];
    if (pipe(ready) != 0) std::abort();
    const pid_t c = fork();
    if (c == 0) {
        say_pid("child");
        (void)!write(ready[1], "", 1);
        for (;;) pause();
    }
    char b;
    (void)!read(ready[0], &b, 1);
    return c;
}

}  // namespace

extern "C" PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs &args) {
    if (args.scalar(0) == 13) sleep(100000);  // blocks before its first call
    PTO2OrchestrationConfig c{};
    c.expected_arg_count = 2;
    return c;
}

void sleep_at_exit() { sleep(100000); }

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs &args) {
    const ChipTensor &t = args.tensor(0).ref();
    submit_one(t);
    switch (args.scalar(0)) {
    case 0:  // sleeps
        say_pid("runner");
        sleep(100000);
        break;
    case 1: {  // waits on a condition variable nobody signals
        std::mutex m;
        std::condition_variable cv;
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [] { return false; });
        break;
    }
    case 2:  // a forked child holds the pipe; the program returns
        fork_sleeper();
        break;
    case 3:  // a forked child holds the pipe; the program crashes
        fork_sleeper();
        sleep(1);
        std::abort();
    case 4: {  // the runtime called in a forked process
        const pid_t c = fork();
        if (c == 0) {
            submit_one(t);
            _exit(0);
        }
        int st = 0;
        waitpid(c, &st, 0);
        submit_one(t);
        break;
    }
    case 5: {  // the runtime called from a second thread
        std::thread th([&] { submit_one(t); });
        th.join();
        break;
    }
    case 6: {  // a write to fd 3 (where npusim's pipe was)
        const char junk[] = "\xff\xff\xff\xff junk";
        (void)!write(3, junk, sizeof junk);
        submit_one(t);
        break;
    }
    case 7: {  // junk written to every descriptor but the standard ones
        const char junk[] = "\xff\xff\xff\xff junk";
        for (int fd = 3; fd < 1024; ++fd) (void)!write(fd, junk, sizeof junk);
        submit_one(t);
        break;
    }
    case 8:  // an exception of 2 MiB
        throw std::runtime_error(std::string(2u << 20, 'x'));
    case 9: {  // a fatal message of 2 MiB
        const std::string m(2u << 20, 'y');
        rt_report_fatal(PTO2_ERROR_EXPLICIT_ORCH_FATAL, "%s", m.c_str());
        break;
    }
    case 10: {  // 200,000 explicit deps on one submit (every one the first task)
        const PTO2TaskId first = PTO2TaskId::make(0, 0);
        std::vector<PTO2TaskId> deps(200000, first);
        CoreTaskArgs p;
        p.add_inout(t);
        p.set_dependencies(deps.data(), static_cast<uint32_t>(deps.size()));
        rt_submit_aiv_task(0, p);
        break;
    }
    case 11:  // a forked child and the program both sleep
        fork_sleeper();
        say_pid("runner");
        sleep(100000);
        break;
    case 14:  // exits, and blocks in its exit handler
        std::atexit(sleep_at_exit);
        std::exit(0);
    case 15:  // closes every descriptor but the standard ones, then sleeps
        for (int fd = 3; fd < 1024; ++fd) close(fd);
        sleep(100000);
        break;
    default: break;
    }
}
