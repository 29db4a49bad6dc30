// tools/bench/trace/threads.c: a thread-heavy program. Starts and joins N threads (default 5000), 8 at a
// time: each is a clone event, an attach stop and an exit the tracer answers.
#include <pthread.h>
#include <stdlib.h>
static void *work(void *arg) { return arg; }
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 5000;
    for (long i = 0; i < n; i += 8) {
        pthread_t t[8];
        for (int j = 0; j < 8; j++) pthread_create(&t[j], 0, work, 0);
        for (int j = 0; j < 8; j++) pthread_join(t[j], 0);
    }
    return 0;
}
