/* On SIGABRT (glibc's heap checks abort), prints the stack to stderr
   with backtrace_symbols_fd (module+offset per frame), then exits 134.
   Preloaded into a program run under compute-sanitizer, it says which
   library freed corrupted memory (tests/README.md, the profile example):

     gcc -O1 -shared -fPIC -o libabort_backtrace.so abort_backtrace.c
     CUDA_GRAPH_SANITIZE=1 MALLOC_CHECK_=3 LD_PRELOAD=$PWD/libabort_backtrace.so \
       compute-sanitizer --tool racecheck .gpu/examples/profile

   Frames in the program itself print as program(+offset): resolve them
   with addr2line against the unstripped binary (target/release/...). */
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>
static void on_abort(int sig) {
    void *frames[96];
    int n = backtrace(frames, 96);
    static const char head[] = "=== SIGABRT backtrace ===\n";
    if (write(2, head, sizeof head - 1) < 0) _exit(134);
    backtrace_symbols_fd(frames, n, 2);
    _exit(134);
}
__attribute__((constructor)) static void install(void) {
    void *warm[1];
    backtrace(warm, 1); /* loads libgcc_s now: no malloc in the handler */
    signal(SIGABRT, on_abort);
}
