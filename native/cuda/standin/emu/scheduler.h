// The CUDA-C emulator's runtime: runs a kernel of a module the NVRTC stand-in built, one
// fiber per CUDA thread, one block at a time, under a chosen schedule. Used by the libcuda
// stand-in (cuLaunchKernel); test-only code.
#ifndef SPAN_EMU_SCHEDULER_H
#define SPAN_EMU_SCHEDULER_H

#include <stdint.h>

#include <string>

#include "include/emu.h"

namespace span_emu {

/**
 * The order runnable CUDA threads run in. Every thread runs until it waits (a barrier, a warp
 * intrinsic not yet joined by every lane) or exits; the last to arrive releases the others and
 * runs on. InOrder/Reverse pick the next runnable thread round robin up/down (warps advance in
 * step), Random a random one, Warp keeps one warp running until none of its lanes can run (a warp
 * races ahead to the next block barrier, as on a GPU where warps are not in step). Blocks run
 * one after another: in order, reversed, or shuffled for Random.
 */
enum class Schedule { InOrder, Reverse, Random, Warp };

struct ScheduleSpec {
  Schedule kind = Schedule::InOrder;
  uint64_t seed = 1;
};

/** Parses SPAN_EMU_SCHEDULE's value (inorder|reverse|random[:seed]|warp); false with `error` set when unknown. */
bool parseSchedule(const char* text, ScheduleSpec& out, std::string& error);

/** The table handed to every module at load (span_emu_module_init). */
const SpanEmuRt* runtime();

struct Launch {
  const SpanEmuKernel* kernel = nullptr;
  void** params = nullptr;
  SpanEmuDim3 grid{1, 1, 1};
  SpanEmuDim3 block{1, 1, 1};
  size_t dynSmem = 0;
  char* staticSmem = nullptr;  // the module's __shared__ variables, poisoned before every block
  size_t staticSmemBytes = 0;
  ScheduleSpec schedule;
};

/** Runs every block of the launch; "" on success, else why it failed (a deadlock, a trap). One launch at a time. */
std::string run(const Launch& launch);

/**
 * Turns a segmentation fault inside a launch into a launch failure ("illegal address: …")
 * when `describe` names the address (a guard page of an allocation, freed memory); other
 * faults go to the handler that was installed before. Installed once.
 */
void catchFaults(std::string (*describe)(uintptr_t address));

/** The name of a schedule, for messages. */
const char* scheduleName(Schedule s);

}  // namespace span_emu

#endif
