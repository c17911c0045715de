// The libcuda stand-in's device memory: host memory with an allocation table, so that copies,
// memsets and kernel pointer arguments are checked against live allocations (and a pointer into
// freed memory is named as such). Test-only code.
#ifndef SPAN_STANDIN_MEMORY_H
#define SPAN_STANDIN_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include <string>

namespace span_standin {

/** Allocates `bytes` (256-byte aligned, like cuMemAlloc); 0 when the fake device's memory is used up. */
uintptr_t allocate(size_t bytes, bool hostPinned);

/** Frees an allocation by its base address; false if `p` is not the base of a live one. */
bool release(uintptr_t p, bool hostPinned);

/** "" when [p, p + bytes) lies inside one live allocation, else what is wrong with it (freed, not device memory, past the end). */
std::string checkRange(uintptr_t p, size_t bytes);

/** "" when p points into (or one past the end of) a live allocation, as a kernel's pointer argument must. */
std::string checkPointer(uintptr_t p);

/**
 * Unless SPAN_STANDIN_GUARD=0, every device allocation ends at an inaccessible page and freed ones
 * stay inaccessible: what a fault at `address` touched ("" if none of them), for the emulator's
 * fault handler.
 */
std::string describeFault(uintptr_t address);
bool guarded();

size_t liveBytes();
size_t liveCount();
size_t totalBytes();

}  // namespace span_standin

#endif
