// The libdw / libelf boundary. Only the Symbolication module imports CLibdw; nothing re-exports it.
#include <elfutils/libdw.h>
// libdwfl: the stack walker (Symbolication/StackWalk) unwinds a process snapshot with dwfl_attach_state;
// libdwelf: a file's build-id (dwelf_elf_gnu_build_id).
#include <elfutils/libdwfl.h>
#include <elfutils/libdwelf.h>
#include <dwarf.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <stdint.h>

// The two demanglers, declared here with their C calling convention.
// Itanium C++ ABI (libstdc++): returns a malloc'd string, status 0 on success.
char *__cxa_demangle(const char *mangled_name, char *output_buffer, size_t *length, int *status);
// The Swift runtime's (libswiftCore, always loaded in a Swift program): returns a malloc'd string or NULL.
char *swift_demangle(const char *mangled_name, size_t mangled_name_length, char *output_buffer,
                     size_t *output_buffer_size, uint32_t flags);
