// Stand-in libnccl.so.2 (tests only; never shipped, found only through SPAN_CUDA_LIBS or
// SPAN_NCCL_LIB): the NCCL entry points span calls (native/cuda/src/nccl-abi.h), with the
// collectives over the stand-in device's memory (host memory: docs/cuda-standins.md).
//
// The ranks meet through the MPI span already runs under (Open MPI's libmpi, loaded RTLD_GLOBAL
// by span_dist): ncclCommInitRank duplicates MPI_COMM_WORLD (so NCCL's traffic never matches
// span's own MPI calls), checks that every rank holds the same unique id, that the ranks are
// 0..n-1 once each and that no two share a device of one host (NCCL's "Duplicate GPU detected").
// A collective is enqueued on its CUDA stream through the stand-in libcuda's cuLaunchHostFunc,
// so it runs in stream order with the kernels, as NCCL's kernels do on a GPU (under
// SPAN_STANDIN_DEFER=1 the queued work before it runs first: see issue()). An all-reduce gathers every rank's
// buffer and reduces it in rank order 0, 1, …, n-1 on every rank, in the element type (float
// sums in float): the result is the same bytes on every rank and from run to run.
// Only a communicator over the whole MPI world is modelled (span makes no other).
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../src/nccl-abi.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

struct SPAN_ncclComm {
  int nranks = 1, rank = 0, device = 0;
  void* mpiComm = nullptr;   // MPI_Comm (Open MPI: a pointer)
  std::vector<int> mpiRank;  // [nccl rank] → rank in mpiComm
  int asyncError = SPAN_ncclSuccess;
};

namespace {

using Comm = SPAN_ncclComm;
using Handle = void*;
constexpr char kMagic[16] = "span-nccl-sid1";

std::string lastError;

int fail(int code, const std::string& why) {
  lastError = why;
  if (!getenv("SPAN_STANDIN_QUIET") || strcmp(getenv("SPAN_STANDIN_QUIET"), "1") != 0) fprintf(stderr, "span nccl stand-in: %s\n", why.c_str());
  return code;
}

struct Mpi {
  int (*initialized)(int*) = nullptr;
  int (*commSize)(Handle, int*) = nullptr;
  int (*commDup)(Handle, Handle*) = nullptr;
  int (*allgather)(const void*, int, Handle, void*, int, Handle, Handle) = nullptr;
  int (*bcast)(void*, int, Handle, int, Handle) = nullptr;
  Handle world = nullptr, byte = nullptr;
} mpi;

/** Open MPI's entry points from the process (span_dist loaded libmpi RTLD_GLOBAL); "" or why not. */
std::string findMpi() {
  if (mpi.allgather) return "";
  auto get = [](const char* n) { return dlsym(RTLD_DEFAULT, n); };
  mpi.initialized = reinterpret_cast<int (*)(int*)>(get("MPI_Initialized"));
  mpi.commSize = reinterpret_cast<int (*)(Handle, int*)>(get("MPI_Comm_size"));
  mpi.commDup = reinterpret_cast<int (*)(Handle, Handle*)>(get("MPI_Comm_dup"));
  mpi.bcast = reinterpret_cast<int (*)(void*, int, Handle, int, Handle)>(get("MPI_Bcast"));
  mpi.world = get("ompi_mpi_comm_world"), mpi.byte = get("ompi_mpi_byte");
  auto ag = reinterpret_cast<int (*)(const void*, int, Handle, void*, int, Handle, Handle)>(get("MPI_Allgather"));
  if (!mpi.initialized || !mpi.commSize || !mpi.commDup || !mpi.bcast || !mpi.world || !mpi.byte || !ag) return "the stand-in's ranks meet through Open MPI, which this process has not loaded";
  int done = 0;
  mpi.initialized(&done);
  if (!done) return "the stand-in's ranks meet through MPI, which is not initialised";
  mpi.allgather = ag;
  return "";
}

struct Cuda {
  int (*hostFunc)(void*, void (*)(void*), void*) = nullptr;
  int (*ctxGetDevice)(int*) = nullptr;
  int (*streamSync)(void*) = nullptr;
} cuda;

/** The stand-in libcuda next to this library (the one the cuda backend opened: same file, same handle). */
std::string findCuda() {
  if (cuda.hostFunc) return "";
  Dl_info info;
  if (!dladdr(reinterpret_cast<void*>(&findCuda), &info) || !info.dli_fname) return "cannot locate libnccl.so.2's folder";
  std::string dir(info.dli_fname);
  dir = dir.substr(0, dir.find_last_of('/') + 1);
  void* lib = dlopen((dir + "libcuda.so.1").c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) return std::string("the stand-in libcuda.so.1 is not next to the stand-in libnccl.so.2: ") + dlerror();
  cuda.hostFunc = reinterpret_cast<int (*)(void*, void (*)(void*), void*)>(dlsym(lib, "cuLaunchHostFunc"));
  cuda.ctxGetDevice = reinterpret_cast<int (*)(int*)>(dlsym(lib, "cuCtxGetDevice"));
  cuda.streamSync = reinterpret_cast<int (*)(void*)>(dlsym(lib, "cuStreamSynchronize"));
  if (!cuda.hostFunc || !cuda.ctxGetDevice || !cuda.streamSync) return "the libcuda.so.1 next to it has no cuLaunchHostFunc (rebuild the stand-ins: npm run standins)";
  return "";
}

size_t widthOf(int dtype) {
  switch (dtype) {
    case SPAN_ncclInt32: case SPAN_ncclFloat32: return 4;
    case SPAN_ncclFloat64: return 8;
    default: return 0;
  }
}

/** One collective, as issued (grouped ones wait for ncclGroupEnd). */
struct Op {
  bool allReduce = true;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;
  int dtype = 0, op = 0, root = 0;
  Comm* comm = nullptr;
  void* stream = nullptr;
};

int groupDepth = 0;
std::vector<Op*> grouped;

template <class T>
T combine(T a, T b, int op) {
  switch (op) {
    case SPAN_ncclProd: return a * b;
    case SPAN_ncclMax: return a > b ? a : b;
    case SPAN_ncclMin: return a < b ? a : b;
    default: return a + b;  // sum, avg
  }
}

/** recv[i] = the slots' elements combined in rank order (slot of nccl rank r: gathered + mpiRank[r] · n). */
template <class T>
void reduceInOrder(const Comm& c, const char* gathered, size_t n, int op, T* recv) {
  std::vector<const T*> slot(c.nranks);
  for (int r = 0; r < c.nranks; r++) slot[r] = reinterpret_cast<const T*>(gathered + static_cast<size_t>(c.mpiRank[r]) * n * sizeof(T));
  for (size_t i = 0; i < n; i++) {
    T acc = slot[0][i];
    for (int r = 1; r < c.nranks; r++) acc = combine<T>(acc, slot[r][i], op);
    recv[i] = op == SPAN_ncclAvg ? static_cast<T>(acc / static_cast<T>(c.nranks)) : acc;
  }
}

/** At most this many bytes per rank per MPI call (MPI counts are ints). */
constexpr size_t kChunk = size_t(1) << 28;

void runAllReduce(const Op& o) {
  const Comm& c = *o.comm;
  size_t w = widthOf(o.dtype);
  std::vector<char> gathered;
  for (size_t at = 0; at < o.count;) {
    size_t n = std::min(o.count - at, kChunk / w);
    const char* src = static_cast<const char*>(o.send) + at * w;
    char* dst = static_cast<char*>(o.recv) + at * w;
    if (c.nranks == 1) {
      gathered.assign(src, src + n * w);
    } else {
      gathered.resize(n * w * c.nranks);
      if (mpi.allgather(src, static_cast<int>(n * w), mpi.byte, gathered.data(), static_cast<int>(n * w), mpi.byte, c.mpiComm) != 0) o.comm->asyncError = SPAN_ncclSystemError;
    }
    if (o.dtype == SPAN_ncclFloat32) reduceInOrder<float>(c, gathered.data(), n, o.op, reinterpret_cast<float*>(dst));
    else if (o.dtype == SPAN_ncclFloat64) reduceInOrder<double>(c, gathered.data(), n, o.op, reinterpret_cast<double*>(dst));
    else reduceInOrder<int32_t>(c, gathered.data(), n, o.op, reinterpret_cast<int32_t*>(dst));
    at += n;
  }
}

void runBroadcast(const Op& o) {
  const Comm& c = *o.comm;
  size_t bytes = o.count * widthOf(o.dtype);
  if (c.rank == o.root && o.send != o.recv) memmove(o.recv, o.send, bytes);
  if (c.nranks == 1) return;
  for (size_t at = 0; at < bytes; at += kChunk) {
    int n = static_cast<int>(std::min(bytes - at, kChunk));
    if (mpi.bcast(static_cast<char*>(o.recv) + at, n, mpi.byte, c.mpiRank[o.root], c.mpiComm) != 0) o.comm->asyncError = SPAN_ncclSystemError;
  }
}

/** The host function: the collective, in stream order. */
void run(void* p) {
  Op* o = static_cast<Op*>(p);
  if (o->allReduce) runAllReduce(*o);
  else runBroadcast(*o);
  delete o;
}

bool deferred() {
  const char* d = getenv("SPAN_STANDIN_DEFER");
  return d && strcmp(d, "1") == 0;
}

/**
 * Enqueues the collective on its stream. Under SPAN_STANDIN_DEFER=1 the stream is then
 * synchronised at once: on GPUs each rank's NCCL kernel progresses without its host thread, but
 * here ranks meet only through their host threads, and a collective left queued until some later,
 * rank-dependent synchronisation (rank 0 alone reading weights for a checkpoint) could wait for a
 * rank blocked in one of span's own MPI calls. Run at the call, every rank meets at the same point.
 */
int issue(Op* o) {
  void* stream = o->stream;
  int r = cuda.hostFunc(stream, run, o);
  if (r != 0) {
    delete o;
    return fail(SPAN_ncclUnhandledCudaError, "cuLaunchHostFunc failed with CUDA error " + std::to_string(r) + " (an invalid stream?)");
  }
  if (deferred() && (r = cuda.streamSync(stream)) != 0) return fail(SPAN_ncclUnhandledCudaError, "cuStreamSynchronize failed with CUDA error " + std::to_string(r));
  return SPAN_ncclSuccess;
}

int enqueue(Op* o) {
  if (groupDepth > 0) return grouped.push_back(o), SPAN_ncclSuccess;
  return issue(o);
}

int checkOp(const char* api, Comm* c, const void* send, void* recv, size_t count, int dtype) {
  if (!c) return fail(SPAN_ncclInvalidArgument, std::string(api) + ": comm is NULL");
  if (widthOf(dtype) == 0) return fail(SPAN_ncclInvalidArgument, std::string(api) + ": the stand-in implements int32, float32 and float64, not datatype " + std::to_string(dtype));
  if (count > 0 && (!recv || (!send && strcmp(api, "ncclBroadcast") != 0))) return fail(SPAN_ncclInvalidArgument, std::string(api) + ": a NULL buffer");
  return SPAN_ncclSuccess;
}

/** What each rank tells the others at ncclCommInitRank. */
struct Hello {
  char id[SPAN_NCCL_UNIQUE_ID_BYTES];
  int rank, nranks, device;
  char host[64];
};

/** The ranks' hellos checked against this rank's; fills c->mpiRank. */
int checkHellos(Comm* c, const Hello& me, const std::vector<Hello>& all) {
  c->mpiRank.assign(c->nranks, -1);
  for (size_t j = 0; j < all.size(); j++) {
    const Hello& h = all[j];
    if (memcmp(h.id, me.id, sizeof me.id) != 0) return fail(SPAN_ncclInvalidUsage, "ncclCommInitRank: MPI rank " + std::to_string(j) + " holds another unique id (broadcast rank 0's to every rank)");
    if (h.nranks != c->nranks) return fail(SPAN_ncclInvalidUsage, "ncclCommInitRank: ranks disagree on nranks");
    if (c->mpiRank[h.rank] >= 0) return fail(SPAN_ncclInvalidUsage, "ncclCommInitRank: rank " + std::to_string(h.rank) + " given twice");
    c->mpiRank[h.rank] = static_cast<int>(j);
  }
  for (size_t j = 0; j < all.size(); j++)
    for (size_t k = 0; k < j; k++)
      if (all[j].device == all[k].device && strncmp(all[j].host, all[k].host, sizeof all[j].host) == 0)
        return fail(SPAN_ncclInvalidUsage, "Duplicate GPU detected : rank " + std::to_string(all[j].rank) + " and rank " + std::to_string(all[k].rank) + " both on CUDA device " + std::to_string(all[j].device));
  return SPAN_ncclSuccess;
}

}  // namespace

EXPORT int ncclGetVersion(int* v) { return v ? (*v = 22703, SPAN_ncclSuccess) : SPAN_ncclInvalidArgument; }

EXPORT int ncclGetUniqueId(SPAN_ncclUniqueId* id) {
  if (!id) return fail(SPAN_ncclInvalidArgument, "ncclGetUniqueId: NULL");
  static unsigned counter = 0;
  memset(id->internal, 0, sizeof id->internal);
  memcpy(id->internal, kMagic, sizeof kMagic);
  const char* root = getenv("NCCL_COMM_ID");  // host:port of a fixed bootstrap root: every rank derives the same id, as NCCL's do
  if (root && *root) return strncpy(id->internal + sizeof kMagic, root, sizeof id->internal - sizeof kMagic - 1), SPAN_ncclSuccess;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  long long fields[4] = {static_cast<long long>(getpid()), static_cast<long long>(++counter), static_cast<long long>(ts.tv_sec), static_cast<long long>(ts.tv_nsec)};
  memcpy(id->internal + sizeof kMagic, fields, sizeof fields);
  return SPAN_ncclSuccess;
}

EXPORT const char* ncclGetErrorString(int rc) {
  switch (rc) {
    case SPAN_ncclSuccess: return "no error";
    case SPAN_ncclUnhandledCudaError: return "unhandled cuda error";
    case SPAN_ncclSystemError: return "unhandled system error";
    case SPAN_ncclInternalError: return "internal error";
    case SPAN_ncclInvalidArgument: return "invalid argument";
    case SPAN_ncclInvalidUsage: return "invalid usage";
    case SPAN_ncclRemoteError: return "remote process exited or there was a network error";
    case SPAN_ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

EXPORT const char* ncclGetLastError(SPAN_ncclComm_t) { return lastError.c_str(); }

EXPORT int ncclCommInitRank(SPAN_ncclComm_t* out, int nranks, SPAN_ncclUniqueId id, int rank) {
  if (!out || nranks < 1 || rank < 0 || rank >= nranks) return fail(SPAN_ncclInvalidArgument, "ncclCommInitRank: rank " + std::to_string(rank) + " of " + std::to_string(nranks));
  if (memcmp(id.internal, kMagic, sizeof kMagic) != 0) return fail(SPAN_ncclInvalidArgument, "ncclCommInitRank: not a unique id of this library (from ncclGetUniqueId)");
  std::string e = findCuda();
  if (!e.empty()) return fail(SPAN_ncclSystemError, "ncclCommInitRank: " + e);
  auto* c = new Comm();
  c->nranks = nranks, c->rank = rank, c->mpiRank = {0};
  if (cuda.ctxGetDevice(&c->device) != 0) return delete c, fail(SPAN_ncclUnhandledCudaError, "ncclCommInitRank: no current CUDA context (set the device first)");
  if (nranks > 1) {
    if (!(e = findMpi()).empty()) return delete c, fail(SPAN_ncclSystemError, "ncclCommInitRank: " + e);
    int world = 0;
    mpi.commSize(mpi.world, &world);
    if (world != nranks) return delete c, fail(SPAN_ncclInvalidUsage, "ncclCommInitRank: the stand-in models a communicator over the whole MPI world (" + std::to_string(world) + " ranks), not " + std::to_string(nranks));
    mpi.commDup(mpi.world, &c->mpiComm);
    Hello me{};
    memcpy(me.id, id.internal, sizeof me.id);
    me.rank = rank, me.nranks = nranks, me.device = c->device;
    gethostname(me.host, sizeof me.host - 1);
    std::vector<Hello> all(world);
    mpi.allgather(&me, sizeof me, mpi.byte, all.data(), sizeof me, mpi.byte, c->mpiComm);
    int r = checkHellos(c, me, all);
    if (r != SPAN_ncclSuccess) return delete c, r;
  }
  *out = c;
  return SPAN_ncclSuccess;
}

/** Local, as NCCL's is after the last collective completed (the duplicated MPI communicator ends with MPI_Finalize). */
EXPORT int ncclCommDestroy(SPAN_ncclComm_t c) {
  if (!c) return fail(SPAN_ncclInvalidArgument, "ncclCommDestroy: NULL");
  delete c;
  return SPAN_ncclSuccess;
}
EXPORT int ncclCommAbort(SPAN_ncclComm_t c) { return ncclCommDestroy(c); }
EXPORT int ncclCommGetAsyncError(SPAN_ncclComm_t c, int* e) { return c && e ? (*e = c->asyncError, SPAN_ncclSuccess) : SPAN_ncclInvalidArgument; }
EXPORT int ncclCommCount(SPAN_ncclComm_t c, int* n) { return c && n ? (*n = c->nranks, SPAN_ncclSuccess) : SPAN_ncclInvalidArgument; }
EXPORT int ncclCommUserRank(SPAN_ncclComm_t c, int* r) { return c && r ? (*r = c->rank, SPAN_ncclSuccess) : SPAN_ncclInvalidArgument; }
EXPORT int ncclCommCuDevice(SPAN_ncclComm_t c, int* d) { return c && d ? (*d = c->device, SPAN_ncclSuccess) : SPAN_ncclInvalidArgument; }

EXPORT int ncclAllReduce(const void* send, void* recv, size_t count, int dtype, int op, SPAN_ncclComm_t c, void* stream) {
  int r = checkOp("ncclAllReduce", c, send, recv, count, dtype);
  if (r) return r;
  if (op < SPAN_ncclSum || op > SPAN_ncclAvg) return fail(SPAN_ncclInvalidArgument, "ncclAllReduce: op " + std::to_string(op));
  if (op == SPAN_ncclAvg && dtype == SPAN_ncclInt32) return fail(SPAN_ncclInvalidArgument, "ncclAllReduce: the stand-in averages floats only");
  return enqueue(new Op{true, send, recv, count, dtype, op, 0, c, stream});
}

EXPORT int ncclBroadcast(const void* send, void* recv, size_t count, int dtype, int root, SPAN_ncclComm_t c, void* stream) {
  int r = checkOp("ncclBroadcast", c, send, recv, count, dtype);
  if (r) return r;
  if (root < 0 || root >= c->nranks) return fail(SPAN_ncclInvalidArgument, "ncclBroadcast: root " + std::to_string(root));
  if (c->rank == root && !send && count > 0) return fail(SPAN_ncclInvalidArgument, "ncclBroadcast: the root's send buffer is NULL");
  return enqueue(new Op{false, send, recv, count, dtype, 0, root, c, stream});
}

EXPORT int ncclGroupStart() { return ++groupDepth, SPAN_ncclSuccess; }

EXPORT int ncclGroupEnd() {
  if (groupDepth == 0) return fail(SPAN_ncclInvalidUsage, "ncclGroupEnd: no matching ncclGroupStart");
  if (--groupDepth > 0) return SPAN_ncclSuccess;
  std::vector<Op*> ops;
  ops.swap(grouped);
  int first = SPAN_ncclSuccess;
  for (Op* o : ops) {
    int r = first == SPAN_ncclSuccess ? issue(o) : (delete o, first);
    if (first == SPAN_ncclSuccess) first = r;
  }
  return first;
}
