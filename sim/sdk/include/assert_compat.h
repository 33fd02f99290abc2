// npusim orchestration SDK: the runtime's assertion macros. A failed
// assertion throws AssertionError; escaping the orchestration entry it is
// reported as the program's crash (ORCHESTRATION_CRASH, docs/scenes.md).
#pragma once

#include <stdexcept>
#include <string>

std::string get_stacktrace(int skip_frames = 1);

class AssertionError : public std::runtime_error {
public:
    AssertionError(const char *condition, const char *file, int line);
    const char *condition() const { return condition_; }
    const char *file() const { return file_; }
    int line() const { return line_; }

private:
    const char *condition_;
    const char *file_;
    int line_;
};

[[noreturn]] void assert_impl(const char *condition, const char *file, int line);

#ifdef NDEBUG
#define debug_assert(cond) ((void)0)
#else
#define debug_assert(cond)                                 \
    do {                                                   \
        if (!(cond)) assert_impl(#cond, __FILE__, __LINE__); \
    } while (0)
#endif

#define always_assert(cond)                                \
    do {                                                   \
        if (!(cond)) assert_impl(#cond, __FILE__, __LINE__); \
    } while (0)

#define PTO_PRAGMA(x) _Pragma(#x)
#if defined(__clang__)
#define MAYBE_UNINITIALIZED_BEGIN \
    PTO_PRAGMA(clang diagnostic push) PTO_PRAGMA(clang diagnostic ignored "-Wuninitialized")
#define MAYBE_UNINITIALIZED_END PTO_PRAGMA(clang diagnostic pop)
#elif defined(__GNUC__)
#define MAYBE_UNINITIALIZED_BEGIN                                                   \
    PTO_PRAGMA(GCC diagnostic push) PTO_PRAGMA(GCC diagnostic ignored "-Wuninitialized") \
        PTO_PRAGMA(GCC diagnostic ignored "-Wmaybe-uninitialized")
#define MAYBE_UNINITIALIZED_END PTO_PRAGMA(GCC diagnostic pop)
#else
#define MAYBE_UNINITIALIZED_BEGIN
#define MAYBE_UNINITIALIZED_END
#endif
