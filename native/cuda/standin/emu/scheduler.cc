// The CUDA-C emulator's scheduler: each CUDA thread of a block is a fiber on its own small
// stack, switched by the hand-written x86-64 routine below (six callee-saved registers and the
// stack pointer; glibc's swapcontext, which also saves the signal mask with a system call, was
// measured 60x slower). A block barrier counts exited threads as arrived; a warp intrinsic
// completes when every non-exited lane of its mask has called it; when no thread can run and
// some have not exited the launch ends with a deadlock message instead of hanging.
#include "scheduler.h"

#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <vector>

#if !defined(__x86_64__)
#error "the span CUDA-C emulator's context switch is written for x86-64"
#endif

extern "C" void span_emu_switch(void** save, void* to);
extern "C" void span_emu_trampoline();

// span_emu_switch(save, to): pushes the callee-saved registers, stores the stack pointer in
// *save, loads `to` and pops the registers saved there. A new fiber's frame returns into
// span_emu_trampoline, which calls r12(r13) (its entry and argument) and never returns.
asm(R"(
  .text
  .p2align 4
  .globl span_emu_switch
  .hidden span_emu_switch
  .type span_emu_switch, @function
span_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size span_emu_switch, .-span_emu_switch
  .p2align 4
  .globl span_emu_trampoline
  .hidden span_emu_trampoline
  .type span_emu_trampoline, @function
span_emu_trampoline:
  movq %r13, %rdi
  callq *%r12
  ud2
  .size span_emu_trampoline, .-span_emu_trampoline
)");

namespace span_emu {
namespace {

enum State : uint8_t { kReady, kAtBarrier, kAtWarp, kExited };

struct Fiber {
  SpanEmuThread t;
  void* sp = nullptr;
  State state = kReady;
  int pred = 0;  // barrier predicate in, its result out
  int op = 0;
  unsigned mask = 0;
  uint64_t value = 0, result = 0;
  int arg = 0, width = 32;
};

/** The one launch in progress (launches are serialised by the caller). */
struct Run {
  const Launch* launch = nullptr;
  std::vector<Fiber> fibers;
  std::vector<uint8_t> warpWaiting, warpExited;  // per warp: lanes at a warp intrinsic, lanes exited
  unsigned n = 0, atBarrier = 0, exited = 0;
  void* schedSp = nullptr;
  std::string error;
  bool abort = false;
  int last = 0, curWarp = 0;
  Fiber* running = nullptr;
  std::vector<int> queue;  // ready threads, a ring (inorder, reverse, random): each at most once
  size_t qHead = 0, qCount = 0;
  uint64_t rng = 1;
  SpanEmuBlock block{};
};

Run R;
SpanEmuThread* gThread = nullptr;
SpanEmuBlock* gBlock = nullptr;
Fiber* gCur = nullptr;

// ---- stacks: one mapping, a guard page below each fiber's stack ----

char* gStacks = nullptr;
size_t gStackCount = 0, gStride = 0;

size_t stackBytes() {
  const char* kb = getenv("SPAN_EMU_STACK_KB");
  size_t v = kb ? strtoul(kb, nullptr, 10) : 0;
  return (v >= 16 ? v : 64) * 1024;
}

bool ensureStacks(unsigned n) {
  if (n <= gStackCount) return true;
  if (gStacks) munmap(gStacks, gStackCount * gStride);
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  gStride = stackBytes() + page;
  void* m = mmap(nullptr, n * gStride, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (m == MAP_FAILED) {
    gStacks = nullptr;
    gStackCount = 0;
    return false;
  }
  gStacks = static_cast<char*>(m);
  gStackCount = n;
  for (unsigned i = 0; i < n; i++) mprotect(gStacks + i * gStride, page, PROT_NONE);
  return true;
}

[[noreturn]] void toScheduler(Fiber* f) {
  span_emu_switch(&f->sp, R.schedSp);
  abort();  // an exited or failed fiber is never resumed
}

int pick();

/**
 * f waits (or has exited): switch straight to the next thread the schedule picks, or back to the
 * block's loop when none can run (the block is done, deadlocked or failed). Returns when f is resumed.
 */
void block(Fiber* f) {
  int i = R.abort ? -1 : pick();
  if (i < 0) return span_emu_switch(&f->sp, R.schedSp);
  Fiber* g = &R.fibers[i];
  gCur = R.running = g;
  gThread = &g->t;
  if (g != f) span_emu_switch(&f->sp, g->sp);
}

[[noreturn]] void fail(const std::string& msg) {
  if (!R.abort) R.error = msg;
  R.abort = true;
  gCur->state = kExited;
  toScheduler(gCur);
}

/** f can run again: into the run queue (the running thread is never queued). */
void makeReady(Fiber& f) {
  f.state = kReady;
  if (&f == R.running || R.launch->schedule.kind == Schedule::Warp) return;  // warp scans the lanes instead
  R.queue[(R.qHead + R.qCount++) % R.n] = static_cast<int>(&f - R.fibers.data());
}

// ---- the barrier ----

void releaseBarrier() {
  int count = 0, all = 1, any = 0;
  for (auto& f : R.fibers)
    if (f.state == kAtBarrier) {
      count += f.pred != 0;
      all &= f.pred != 0;
      any |= f.pred != 0;
    }
  bool down = R.launch->schedule.kind == Schedule::Reverse;
  for (unsigned k = 0; k < R.n; k++) {
    Fiber& f = R.fibers[down ? R.n - 1 - k : k];
    if (f.state != kAtBarrier) continue;
    int op = f.op;
    f.pred = op == SPAN_EMU_SYNC_COUNT ? count : op == SPAN_EMU_SYNC_AND ? all : op == SPAN_EMU_SYNC_OR ? any : 0;
    makeReady(f);
  }
  R.atBarrier = 0;
}

int rtBarrier(int op, int pred) {
  Fiber* f = gCur;
  f->state = kAtBarrier;
  f->op = op;
  f->pred = pred;
  R.atBarrier++;
  if (R.atBarrier + R.exited == R.n) releaseBarrier();
  else block(f);
  return f->pred;
}

// ---- warp intrinsics ----

const char* warpOpName(int op) {
  static const char* names[] = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync", "__any_sync",
                                "__all_sync", "__syncwarp", "__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
                                "wmma::load_matrix_sync", "wmma::store_matrix_sync", "wmma::mma_sync"};
  return op >= 0 && op < SPAN_EMU_WARP_OPS ? names[op] : "a warp intrinsic";
}

/** The lanes of warp w that exist in this block (a partial last warp has fewer). */
unsigned existing(unsigned w) {
  unsigned left = R.n - w * 32;
  return left >= 32 ? 0xffffffffu : (1u << left) - 1;
}

/** Source lane of a shuffle, as PTX shfl.sync defines it (c = ((32 - width) << 8) | clamp). */
unsigned shflSource(const Fiber& f, unsigned lane) {
  unsigned segmask = (32 - f.width) & 31, b = static_cast<unsigned>(f.arg) & 31;
  unsigned clamp = f.op == SPAN_EMU_SHFL_UP ? 0 : 31;
  unsigned maxLane = (lane & segmask) | (clamp & ~segmask), minLane = lane & segmask;
  int j = 0;
  bool ok = false;
  switch (f.op) {
    case SPAN_EMU_SHFL_UP: j = static_cast<int>(lane) - static_cast<int>(b), ok = j >= static_cast<int>(maxLane); break;
    case SPAN_EMU_SHFL_DOWN: j = static_cast<int>(lane + b), ok = j <= static_cast<int>(maxLane); break;
    case SPAN_EMU_SHFL_XOR: j = static_cast<int>(lane ^ b), ok = j <= static_cast<int>(maxLane); break;
    default: j = static_cast<int>(minLane | (b & ~segmask)), ok = j <= static_cast<int>(maxLane); break;
  }
  return ok ? static_cast<unsigned>(j) : lane;
}

uint64_t reduce(int op, bool isSigned, uint64_t acc, uint64_t v) {
  if (op == SPAN_EMU_REDUCE_ADD) return static_cast<uint32_t>(acc + v);
  bool less = isSigned ? static_cast<int32_t>(v) < static_cast<int32_t>(acc) : static_cast<uint32_t>(v) < static_cast<uint32_t>(acc);
  return (op == SPAN_EMU_REDUCE_MIN) == less ? v : acc;
}

/** The results of a complete group: `group` holds the lanes (of warp w) that called and have not exited. */
void computeWarp(unsigned w, unsigned group) {
  Fiber* lanes = &R.fibers[w * 32];
  Fiber& first = lanes[__builtin_ctz(group)];
  uint64_t ballot = 0, red = first.value;
  for (unsigned l = 0; l < 32; l++)
    if (group >> l & 1) {
      ballot |= static_cast<uint64_t>(lanes[l].value != 0) << l;
      red = reduce(first.op, first.arg != 0, red, lanes[l].value);
    }
  bool down = R.launch->schedule.kind == Schedule::Reverse;
  for (unsigned k = 0; k < 32; k++) {
    unsigned l = down ? 31 - k : k;
    if (!(group >> l & 1)) continue;
    Fiber& f = lanes[l];
    switch (f.op) {
      case SPAN_EMU_BALLOT: f.result = ballot; break;
      case SPAN_EMU_ANY: f.result = ballot != 0; break;
      case SPAN_EMU_ALL: f.result = ballot == group; break;
      case SPAN_EMU_SYNCWARP:
      case SPAN_EMU_WMMA_LOAD:
      case SPAN_EMU_WMMA_STORE:
      case SPAN_EMU_WMMA_MMA: f.result = 0; break;
      case SPAN_EMU_REDUCE_ADD:
      case SPAN_EMU_REDUCE_MIN:
      case SPAN_EMU_REDUCE_MAX: f.result = red; break;
      default: {
        unsigned j = shflSource(f, l);
        f.result = (group >> j & 1) ? lanes[j].value : f.value;  // an absent or exited source: undefined on a GPU, own value here
      }
    }
    makeReady(f);
    R.warpWaiting[w]--;
  }
}

/** A wmma operation: the whole warp (32 lanes, none exited), each with the same pointer and ldm (value). */
void checkWmma(unsigned w, unsigned group, const Fiber& f) {
  char msg[240];
  Fiber* lanes = &R.fibers[w * 32];
  if (group != 0xffffffffu) {
    snprintf(msg, sizeof msg, "warp %u: %s needs all 32 lanes of the warp converged; only lanes 0x%08x called it (the others exited or are absent)", w,
             warpOpName(f.op), group);
    fail(msg);
  }
  for (unsigned l = 1; l < 32; l++)
    if (lanes[l].value != lanes[0].value) {
      snprintf(msg, sizeof msg, "warp %u: %s: lanes 0 and %u pass different pointers, ldm or layouts (each must be the same on every lane)", w,
               warpOpName(f.op), l);
      fail(msg);
    }
}

/** Completes the group of f (same warp, same mask) when every non-exited lane of the mask has joined it. */
bool tryComplete(Fiber* f) {
  unsigned w = f->t.warp;
  unsigned members = f->mask & existing(w), group = 0;
  if (R.warpWaiting[w] + R.warpExited[w] < static_cast<unsigned>(__builtin_popcount(members))) return false;  // someone is still running
  Fiber* lanes = &R.fibers[w * 32];
  for (unsigned l = 0; l < 32; l++) {
    if (!(members >> l & 1) || lanes[l].state == kExited) continue;
    if (lanes[l].state != kAtWarp || lanes[l].mask != f->mask) return false;
    group |= 1u << l;
  }
  for (unsigned l = 0; l < 32; l++)
    if ((group >> l & 1) && lanes[l].op != f->op) {
      char msg[200];
      snprintf(msg, sizeof msg, "warp %u: lane %u calls %s and lane %u calls %s with the same mask 0x%08x", w, f->t.lane, warpOpName(f->op), l,
               warpOpName(lanes[l].op), f->mask);
      fail(msg);
    }
  if (f->op >= SPAN_EMU_WMMA_LOAD && f->op <= SPAN_EMU_WMMA_MMA) checkWmma(w, group, *f);
  computeWarp(w, group);
  return true;
}

uint64_t rtWarp(int op, unsigned mask, uint64_t value, int arg, int width) {
  Fiber* f = gCur;
  char msg[200];
  if (!(mask >> f->t.lane & 1)) {
    snprintf(msg, sizeof msg, "thread %u (lane %u) calls %s with mask 0x%08x, which leaves its own lane out", f->t.linear, f->t.lane,
             warpOpName(op), mask);
    fail(msg);
  }
  if (op <= SPAN_EMU_SHFL_XOR && (width < 1 || width > 32 || (width & (width - 1)))) {
    snprintf(msg, sizeof msg, "%s: width %d is not a power of two from 1 to 32", warpOpName(op), width);
    fail(msg);
  }
  f->state = kAtWarp;
  R.warpWaiting[f->t.warp]++;
  f->op = op;
  f->mask = mask;
  f->value = value;
  f->arg = arg;
  f->width = width;
  if (!tryComplete(f)) block(f);
  return f->result;
}

unsigned rtActive() {
  unsigned w = gCur->t.warp, m = 0;
  for (unsigned l = 0; l < 32; l++)
    if ((existing(w) >> l & 1) && R.fibers[w * 32 + l].state != kExited) m |= 1u << l;
  return m;
}

[[noreturn]] void rtTrap(const char* message) { fail(std::string(message ? message : "__trap()") + " in thread " + std::to_string(gCur->t.linear)); }

/** A thread that returned: it counts as arrived at the barrier, and leaves every warp group that waited for it. */
[[noreturn]] void onExit(Fiber* f) {
  f->state = kExited;
  R.exited++;
  R.warpExited[f->t.warp]++;
  if (R.atBarrier > 0 && R.atBarrier + R.exited == R.n) releaseBarrier();
  Fiber* lanes = &R.fibers[f->t.warp * 32];
  for (unsigned l = 0; l < 32; l++) {
    Fiber& g = lanes[l];
    if (&g - R.fibers.data() >= static_cast<long>(R.n)) break;
    if (g.state == kAtWarp && (g.mask >> f->t.lane & 1)) {
      gCur = &g;  // tryComplete reports a mismatch as the waiting lane's
      tryComplete(&g);
      gCur = f;
    }
  }
  block(f);
  abort();  // an exited fiber is never resumed
}

void fiberMain(void* arg) {
  auto* f = static_cast<Fiber*>(arg);
  R.launch->kernel->call(R.launch->params);
  onExit(f);
}

const SpanEmuRt kRuntime = {SPAN_EMU_ABI, &gThread, &gBlock, rtBarrier, rtWarp, rtActive, rtTrap};

// ---- faults: a kernel touching a guard page ends its launch ----

std::string (*gDescribe)(uintptr_t) = nullptr;
struct sigaction gOldSegv;
sigjmp_buf gFaultJump;
bool gInRun = false;
pthread_t gRunThread;  // the thread running the launch: a fault on another thread is not the kernel's

void onSegv(int sig, siginfo_t* info, void* context) {
  if (gInRun && gDescribe && gCur && pthread_equal(pthread_self(), gRunThread)) {
    std::string why = gDescribe(reinterpret_cast<uintptr_t>(info->si_addr));
    if (!why.empty()) {
      const SpanEmuBlock& b = R.block;
      char where[160];
      snprintf(where, sizeof where, "illegal address: kernel %s, block (%u,%u,%u), thread %u: ", R.launch->kernel->name, b.blockIdx.x, b.blockIdx.y,
               b.blockIdx.z, gCur->t.linear);
      R.error = where + why;
      R.abort = true;
      siglongjmp(gFaultJump, 1);
    }
  }
  if ((gOldSegv.sa_flags & SA_SIGINFO) && gOldSegv.sa_sigaction) return gOldSegv.sa_sigaction(sig, info, context);
  if (gOldSegv.sa_handler == SIG_IGN) return;
  if (gOldSegv.sa_handler == SIG_DFL || !gOldSegv.sa_handler) {
    signal(SIGSEGV, SIG_DFL);  // the fault happens again, with the default action
    return;
  }
  gOldSegv.sa_handler(sig);
}

// ---- schedules ----

uint64_t nextRandom() {
  R.rng ^= R.rng << 13;
  R.rng ^= R.rng >> 7;
  R.rng ^= R.rng << 17;
  return R.rng;
}

int pickWarp() {
  unsigned warps = (R.n + 31) / 32;
  for (unsigned k = 0; k < warps; k++) {
    unsigned w = (R.curWarp + k) % warps, lanes = w == warps - 1 ? R.n - w * 32 : 32;
    for (unsigned d = 1; d <= lanes; d++) {
      unsigned l = k == 0 ? (R.last - w * 32 + d) % lanes : d - 1;
      if (R.fibers[w * 32 + l].state == kReady) {
        R.curWarp = static_cast<int>(w);
        return R.last = static_cast<int>(w * 32 + l);
      }
    }
  }
  return -1;
}

/**
 * The next thread to run, or -1 when none can. Inorder and reverse take the run queue in order
 * (threads queued up or down by index as they are released, so warps advance in step), random
 * takes a random queued thread, warp scans the current warp's lanes first.
 */
int pick() {
  if (R.launch->schedule.kind == Schedule::Warp) return pickWarp();
  if (!R.qCount) return -1;
  if (R.launch->schedule.kind == Schedule::Random) std::swap(R.queue[R.qHead], R.queue[(R.qHead + nextRandom() % R.qCount) % R.n]);
  int i = R.queue[R.qHead];
  R.qHead = (R.qHead + 1) % R.n;
  R.qCount--;
  return i;
}

// ---- blocks ----

std::string range(unsigned a, unsigned b) { return a == b ? std::to_string(a) : std::to_string(a) + "-" + std::to_string(b); }

std::string waitOf(const Fiber& f) {
  if (f.state == kAtBarrier) return "wait at __syncthreads";
  char buf[120];
  snprintf(buf, sizeof buf, "wait at %s (mask 0x%08x)", warpOpName(f.op), f.mask);
  return buf;
}

std::string deadlock() {
  const SpanEmuBlock& b = R.block;
  std::string msg = "deadlock in block (" + std::to_string(b.blockIdx.x) + "," + std::to_string(b.blockIdx.y) + "," + std::to_string(b.blockIdx.z) +
                    ") of kernel " + R.launch->kernel->name + " under schedule " + scheduleName(R.launch->schedule.kind) + ":";
  unsigned i = 0;
  while (i < R.n) {
    std::string w = R.fibers[i].state == kExited ? "exited" : waitOf(R.fibers[i]);
    unsigned j = i;
    while (j + 1 < R.n && (R.fibers[j + 1].state == kExited ? "exited" : waitOf(R.fibers[j + 1])) == w) j++;
    msg += (i ? "; threads " : " threads ") + range(i, j) + " " + w;
    i = j + 1;
  }
  return msg;
}

void resetFiber(unsigned i, const SpanEmuDim3& d) {
  Fiber& f = R.fibers[i];
  f = Fiber();
  f.t.threadIdx = {i % d.x, (i / d.x) % d.y, i / (d.x * d.y)};
  f.t.linear = i;
  f.t.lane = i % 32;
  f.t.warp = i / 32;
  auto** frame = reinterpret_cast<void**>(gStacks + (i + 1) * gStride - 72);  // top 16-aligned; rsp 16-aligned at the call
  frame[0] = frame[1] = frame[4] = frame[5] = nullptr;                          // r15 r14 rbx rbp
  frame[2] = &f;                                                                // r13: the argument
  frame[3] = reinterpret_cast<void*>(&fiberMain);                               // r12: the entry
  frame[6] = reinterpret_cast<void*>(&span_emu_trampoline);                     // the return address
  f.sp = frame;
}

bool runBlock(unsigned linearBlock) {
  const Launch& L = *R.launch;
  R.block.blockIdx = {linearBlock % L.grid.x, (linearBlock / L.grid.x) % L.grid.y, linearBlock / (L.grid.x * L.grid.y)};
  if (R.block.dynSmem) memset(R.block.dynSmem, 0xff, L.dynSmem);  // uninitialised shared memory reads as NaN / -1
  if (L.staticSmem) memset(L.staticSmem, 0xff, L.staticSmemBytes);
  for (unsigned i = 0; i < R.n; i++) resetFiber(i, L.block);
  R.atBarrier = R.exited = 0;
  std::fill(R.warpWaiting.begin(), R.warpWaiting.end(), 0);
  std::fill(R.warpExited.begin(), R.warpExited.end(), 0);
  R.curWarp = 0;
  R.last = static_cast<int>(R.n) - 1;
  R.qHead = 0;
  R.qCount = R.n;
  for (unsigned i = 0; i < R.n; i++) R.queue[i] = static_cast<int>(L.schedule.kind == Schedule::Reverse ? R.n - 1 - i : i);
  for (int i; !R.abort && (i = pick()) >= 0;) {
    gCur = R.running = &R.fibers[i];
    gThread = &gCur->t;
    span_emu_switch(&R.schedSp, gCur->sp);
  }
  if (!R.abort && R.exited != R.n) {
    R.error = deadlock();
    R.abort = true;
  }
  return !R.abort;
}

std::vector<unsigned> blockOrder(unsigned count, const ScheduleSpec& s) {
  std::vector<unsigned> order(count);
  for (unsigned i = 0; i < count; i++) order[i] = s.kind == Schedule::Reverse ? count - 1 - i : i;
  if (s.kind == Schedule::Random)
    for (unsigned i = count; i > 1; i--) std::swap(order[i - 1], order[nextRandom() % i]);
  return order;
}

}  // namespace

const char* scheduleName(Schedule s) {
  switch (s) {
    case Schedule::Reverse: return "reverse";
    case Schedule::Random: return "random";
    case Schedule::Warp: return "warp";
    default: return "inorder";
  }
}

bool parseSchedule(const char* text, ScheduleSpec& out, std::string& error) {
  std::string t = text ? text : "";
  out = ScheduleSpec();
  if (t.empty() || t == "inorder") return true;
  if (t == "reverse") return out.kind = Schedule::Reverse, true;
  if (t == "warp") return out.kind = Schedule::Warp, true;
  if (t == "random" || t.rfind("random:", 0) == 0) {
    out.kind = Schedule::Random;
    char* end = nullptr;
    if (t.size() > 7) out.seed = strtoull(t.c_str() + 7, &end, 10);
    if (t.size() > 7 && (*end || out.seed == 0)) return error = "SPAN_EMU_SCHEDULE: the seed of '" + t + "' is not a positive integer", false;
    return true;
  }
  error = "SPAN_EMU_SCHEDULE: unknown schedule '" + t + "' (inorder, reverse, random[:seed] or warp)";
  return false;
}

const SpanEmuRt* runtime() { return &kRuntime; }

void catchFaults(std::string (*describe)(uintptr_t)) {
  if (gDescribe) return;
  gDescribe = describe;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = onSegv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &gOldSegv);
}

std::string run(const Launch& L) {
  R = Run();
  R.launch = &L;
  R.n = L.block.x * L.block.y * L.block.z;
  R.rng = L.schedule.seed * 0x9E3779B97F4A7C15ull | 1;
  if (R.n == 0 || !ensureStacks(R.n)) return R.n == 0 ? "a block of 0 threads" : "cannot map the fibers' stacks";
  R.fibers.resize(R.n);
  R.queue.resize(R.n);
  R.warpWaiting.resize((R.n + 31) / 32);
  R.warpExited.resize((R.n + 31) / 32);
  std::vector<char> smem(L.dynSmem + 128);
  R.block.blockDim = L.block;
  R.block.gridDim = L.grid;
  R.block.dynSmemBytes = L.dynSmem;
  R.block.dynSmem = L.dynSmem ? reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(smem.data()) + 127) & ~uintptr_t(127)) : nullptr;
  gBlock = &R.block;
  std::vector<unsigned> order = blockOrder(L.grid.x * L.grid.y * L.grid.z, L.schedule);
  gRunThread = pthread_self();
  gInRun = true;
  if (sigsetjmp(gFaultJump, 1) == 0)
    for (unsigned b : order)
      if (!runBlock(b)) break;
  gInRun = false;
  gCur = nullptr;
  gThread = nullptr;
  gBlock = nullptr;
  return R.error;
}

}  // namespace span_emu
