// tools/bench/trace/signals.c: a signal-heavy program. Raises SIGUSR1 N times (default 100000), each taken by
// a handler of its own: every one is a signal-delivery stop the tracer answers.
#include <signal.h>
#include <stdlib.h>
static volatile sig_atomic_t taken;
static void on_usr1(int s) { (void)s; taken++; }
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    signal(SIGUSR1, on_usr1);
    for (long i = 0; i < n; i++) raise(SIGUSR1);
    return taken == (sig_atomic_t)n ? 0 : 1;
}
