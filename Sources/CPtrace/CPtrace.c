#include "CPtrace.h"

#include <unistd.h>

long faultline_ptrace(int request, pid_t pid, void *addr, void *data) {
    return ptrace((enum __ptrace_request)request, pid, addr, data);
}

pid_t faultline_spawn_stopped(const char *path, char *const argv[], char *const envp[], int stderr_fd,
                              const sigset_t *defaults) {
    pid_t pid = fork();
    if (pid != 0) return pid;
    // The child: async-signal-safe calls only (the launcher has other threads).
    if (dup2(stderr_fd, 2) < 0) _exit(127);
    struct sigaction action;
    for (int signal = 1; signal < NSIG; signal++) {
        if (sigismember(defaults, signal) != 1) continue;
        action = (struct sigaction){0};
        action.sa_handler = SIG_DFL;
        sigemptyset(&action.sa_mask);
        sigaction(signal, &action, NULL);
    }
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, NULL);
    raise(SIGSTOP);
    execve(path, argv, envp);
    _exit(127);
}
