// The interface between a kernel module the NVRTC stand-in compiled (its prelude,
// include/span_emu_prelude.h) and the emulator runtime linked into the libcuda stand-in
// (scheduler.cc). Plain C types only: the module is built by a separate g++ run, so this
// header is its whole ABI, versioned by SPAN_EMU_ABI. Test-only code: never shipped.
#ifndef SPAN_EMU_H
#define SPAN_EMU_H

#include <stddef.h>
#include <stdint.h>

#define SPAN_EMU_ABI 2

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  unsigned int x, y, z;
} SpanEmuDim3;

/** One CUDA thread as the prelude sees it (threadIdx; lane and warp of its linear index). */
typedef struct {
  SpanEmuDim3 threadIdx;
  unsigned int linear, lane, warp;
} SpanEmuThread;

/** The block being run (blockIdx …) and its dynamic shared memory (extern __shared__). */
typedef struct {
  SpanEmuDim3 blockIdx, blockDim, gridDim;
  char* dynSmem;
  size_t dynSmemBytes;
} SpanEmuBlock;

/** The warp intrinsics, one code each (SpanEmuRt.warp). */
enum SpanEmuWarpOp {
  SPAN_EMU_SHFL_IDX,
  SPAN_EMU_SHFL_UP,
  SPAN_EMU_SHFL_DOWN,
  SPAN_EMU_SHFL_XOR,
  SPAN_EMU_BALLOT,
  SPAN_EMU_ANY,
  SPAN_EMU_ALL,
  SPAN_EMU_SYNCWARP,
  SPAN_EMU_REDUCE_ADD,
  SPAN_EMU_REDUCE_MIN,
  SPAN_EMU_REDUCE_MAX,
  /* nvcuda::wmma (mma.h of the prelude): warp-collective, every lane of the warp with mask
     0xffffffff; value is the call's pointer/ldm digest, which must be the same on every lane */
  SPAN_EMU_WMMA_LOAD,
  SPAN_EMU_WMMA_STORE,
  SPAN_EMU_WMMA_MMA,
  SPAN_EMU_WARP_OPS
};

/** __syncthreads and its _count/_and/_or forms (SpanEmuRt.barrier). */
enum SpanEmuBarrierOp { SPAN_EMU_SYNC, SPAN_EMU_SYNC_COUNT, SPAN_EMU_SYNC_AND, SPAN_EMU_SYNC_OR };

/** What the runtime gives a module when it is loaded (span_emu_module_init). */
typedef struct {
  int abi;
  /** the running CUDA thread and its block: read through these slots on every use */
  SpanEmuThread* const* thread;
  SpanEmuBlock* const* block;
  /** a block barrier; returns the _count/_and/_or result over the threads that reached it */
  int (*barrier)(int op, int predicate);
  /** a warp intrinsic: every non-exited lane of `mask` must call it; value holds up to 8 bytes */
  uint64_t (*warp)(int op, unsigned int mask, uint64_t value, int arg, int width);
  /** the lanes of the caller's warp that exist and have not exited (__activemask) */
  unsigned int (*activemask)(void);
  /** __trap, a failed assert: ends the launch with this message */
  void (*trap)(const char* message);
} SpanEmuRt;

/** A kernel parameter: its size and whether it is a pointer (checked against live allocations). */
typedef struct {
  unsigned int size;
  unsigned int isPointer;
} SpanEmuParam;

/** A kernel of a module: its extern "C" name and the thunk that calls it with cuLaunchKernel's void** params. */
typedef struct {
  const char* name;
  void (*call)(void** params);
  unsigned int paramCount;
  const SpanEmuParam* params;
} SpanEmuKernel;

/** Exported by every module: `int span_emu_module_init(const SpanEmuRt*)` (0 when the ABI matches) and the kernel table. */
typedef int (*SpanEmuModuleInit)(const SpanEmuRt* rt);
#define SPAN_EMU_MODULE_INIT "span_emu_module_init"
#define SPAN_EMU_MODULE_KERNELS "span_emu_kernels"
/** `void span_emu_shared_range(char** begin, char** end)`: where the module's __shared__ variables are. */
#define SPAN_EMU_MODULE_SHARED "span_emu_shared_range"

/** The magic of what the NVRTC stand-in hands out as CUBIN: 8 bytes, a uint64 length, the module's shared object. */
#define SPAN_EMU_IMAGE_MAGIC "\x7fSPANEMU"
/** The PTX form: this prefix, then the same bytes in hex, NUL-terminated. */
#define SPAN_EMU_PTX_PREFIX "// span-emu module\n"

#ifdef __cplusplus
}
#endif

#endif
