/* The program tools/bench/walk/run crashes under the real crashpad_handler: a dump with a realistic shape (nine
   threads, the crashing one 40 calls deep, the others 20 deep, waiting), in C built with clang -g -O1.
   Arguments: HANDLER DATABASE. The SIGSEGV handler starts the handler as Crashpad's StartHandlerAtCrash does
   (--trace-parent-with-exception=ADDR of a crashpad::ExceptionInformation), waits, then dies of the signal.
   Without arguments no handler is installed: tools/bench/minidump/run crashes it under faultline-run, which writes
   the dump. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

struct exception_information { uint64_t siginfo; uint64_t context; int32_t thread_id; };
static struct exception_information info;
static char *handler_argv[8];
static pthread_barrier_t ready;

static void on_crash(int sig, siginfo_t *siginfo, void *context) {
    info.siginfo = (uint64_t)(uintptr_t)siginfo;
    info.context = (uint64_t)(uintptr_t)context;
    info.thread_id = (int32_t)syscall(SYS_gettid);
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    pid_t pid = fork();
    if (pid == 0) { execv(handler_argv[0], handler_argv); _exit(127); }
    if (pid > 0) { int status; waitpid(pid, &status, 0); }
    signal(sig, SIG_DFL);
    raise(sig);
}

static volatile int *nowhere;

/* Called through a volatile pointer: the compiler can neither inline the recursion nor turn it into a loop. */
static int descend(int depth, int crash);
static int (*volatile next)(int, int) = descend;

__attribute__((noinline)) static int descend(int depth, int crash) {
    if (depth == 0) {
        if (crash) return nowhere[depth];
        pthread_barrier_wait(&ready);
        for (;;) pause();
    }
    return next(depth - 1, crash) + depth;
}

static void *worker(void *arg) { return (void *)(intptr_t)descend(20, 0); }

/* Installs the SIGSEGV handler that starts crashpad_handler HANDLER on DATABASE. */
static void install_handler(char **argv) {
    static char database[4096], address[64];
    snprintf(database, sizeof database, "--database=%s", argv[2]);
    snprintf(address, sizeof address, "--trace-parent-with-exception=%llu", (unsigned long long)(uintptr_t)&info);
    char *args[] = {argv[1], database, address, "--no-periodic-tasks", NULL};
    memcpy(handler_argv, args, sizeof args);
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_crash;
    action.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &action, NULL);
}

int main(int argc, char **argv) {
    if (argc > 2) install_handler(argv);
    pthread_barrier_init(&ready, NULL, 9);
    pthread_t threads[8];
    for (int i = 0; i < 8; i++) pthread_create(&threads[i], NULL, worker, NULL);
    pthread_barrier_wait(&ready);
    return descend(40, 1);
}
