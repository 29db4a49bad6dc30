// The C boundary of faultline-run's tracer: glibc's `ptrace` is variadic, which Swift cannot call, so it is
// wrapped here with a fixed signature. The headers bring `user_regs_struct` (x86-64) / `user_pt_regs`
// (arm64), `NT_PRSTATUS` and the `PTRACE_*` constants to Swift. Nothing else belongs here.
#ifndef FAULTLINE_CPTRACE_H
#define FAULTLINE_CPTRACE_H

#include <sys/types.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/uio.h>
#include <elf.h>
#include <signal.h>
#include <sys/wait.h>
#if defined(__aarch64__)
#include <asm/ptrace.h>
#endif

/// `ptrace(request, pid, addr, data)`; answers its result, -1 with `errno` set on failure.
long faultline_ptrace(int request, pid_t pid, void *addr, void *data);

/// The values of glibc's `enum __ptrace_request` and options the tracer uses, as plain ints.
enum {
    FAULTLINE_PTRACE_CONT = PTRACE_CONT,
    FAULTLINE_PTRACE_GETREGSET = PTRACE_GETREGSET,
    FAULTLINE_PTRACE_GETSIGINFO = PTRACE_GETSIGINFO,
    FAULTLINE_PTRACE_SEIZE = PTRACE_SEIZE,
    FAULTLINE_PTRACE_INTERRUPT = PTRACE_INTERRUPT,
    FAULTLINE_PTRACE_LISTEN = PTRACE_LISTEN,
    FAULTLINE_PTRACE_O_TRACECLONE = PTRACE_O_TRACECLONE,
    FAULTLINE_PTRACE_EVENT_STOP = PTRACE_EVENT_STOP,
    /// `waitpid`'s flag for every tracee, threads included.
    FAULTLINE_WALL = __WALL,
};

/// Starts `path` (already resolved: no PATH search) with `argv` and `envp`, its standard error on `stderr_fd`,
/// the signals in `defaults` at their default action and an empty signal mask, stopped (`SIGSTOP`) before
/// the exec, so that the launcher can seize it before the program runs one instruction. Answers the pid, or
/// -1 with `errno` set when `fork` failed; an exec that fails ends the child with status 127.
pid_t faultline_spawn_stopped(const char *path, char *const argv[], char *const envp[], int stderr_fd,
                              const sigset_t *defaults);

/// `si_addr` of a fault signal's `siginfo_t` (a union member Swift does not reach).
static inline unsigned long faultline_siginfo_addr(const siginfo_t *info) { return (unsigned long)info->si_addr; }

#endif
