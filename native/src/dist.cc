// span_dist: the collectives engines of src/core/dist/, loaded at run time with dlopen so
// that neither MPI nor NCCL headers or libraries are needed to build span.
//
// MPI: Open MPI's libmpi.so.40, opened with RTLD_GLOBAL (its MCA plugins resolve symbols of
// libmpi itself). Open MPI's handles (MPI_COMM_WORLD, MPI_FLOAT, MPI_SUM, ...) are addresses
// of exported globals (mpi.h: OMPI_PREDEFINED_GLOBAL(type, ompi_mpi_comm_world)), so we
// dlsym those symbols; tools/check-mpi-abi.mjs holds these names against the installed mpi.h.
// MPI_IN_PLACE is ((void*)1) and MPI_THREAD_FUNNELED 1 in that header (checked there too).
//
// NCCL: libnccl.so.2; only probing (version, or the reason it is absent) and ncclGetUniqueId,
// whose 128-byte id rank 0 broadcasts over MPI (src/core/dist/nccl.ts). Communicators and
// device all-reduces wait for the cuda backend's device memory.
#include <dlfcn.h>
#include <node_api.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "napi-util.h"

namespace {

using span_napi::fail;
using span_napi::jsString;
using span_napi::number;
using span_napi::undef;

using Handle = void*;  // MPI_Comm, MPI_Datatype, MPI_Op: pointers in Open MPI's ABI
constexpr int kThreadFunneled = 1;
void* const kInPlace = reinterpret_cast<void*>(1);

struct Mpi {
  void* lib = nullptr;
  std::string error;
  int (*initialized)(int*) = nullptr;
  int (*init_thread)(int*, char***, int, int*) = nullptr;
  int (*comm_rank)(Handle, int*) = nullptr;
  int (*comm_size)(Handle, int*) = nullptr;
  int (*allreduce)(const void*, void*, int, Handle, Handle, Handle) = nullptr;
  int (*bcast)(void*, int, Handle, int, Handle) = nullptr;
  int (*barrier)(Handle) = nullptr;
  int (*finalize)() = nullptr;
  int (*abort)(Handle, int) = nullptr;
  int (*library_version)(char*, int*) = nullptr;
  Handle world = nullptr, f32 = nullptr, f64 = nullptr, byte = nullptr, sum = nullptr;
} mpi;

struct Nccl {
  void* lib = nullptr;
  std::string error;
  int (*get_version)(int*) = nullptr;
  int (*get_unique_id)(void*) = nullptr;
  const char* (*error_string)(int) = nullptr;
} nccl;

template <class F>
bool sym(void* lib, const char* name, F* out, std::string& error) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  if (!*out && error.empty()) error = std::string("missing symbol ") + name;
  return *out != nullptr;
}

bool loadMpi(const char* path) {
  if (mpi.lib) return true;
  mpi.error.clear();
  void* lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    const char* e = dlerror();
    mpi.error = e ? e : "dlopen failed";
    return false;
  }
  std::string& e = mpi.error;
  sym(lib, "MPI_Initialized", &mpi.initialized, e);
  sym(lib, "MPI_Init_thread", &mpi.init_thread, e);
  sym(lib, "MPI_Comm_rank", &mpi.comm_rank, e);
  sym(lib, "MPI_Comm_size", &mpi.comm_size, e);
  sym(lib, "MPI_Allreduce", &mpi.allreduce, e);
  sym(lib, "MPI_Bcast", &mpi.bcast, e);
  sym(lib, "MPI_Barrier", &mpi.barrier, e);
  sym(lib, "MPI_Finalize", &mpi.finalize, e);
  sym(lib, "MPI_Abort", &mpi.abort, e);
  sym(lib, "MPI_Get_library_version", &mpi.library_version, e);
  sym(lib, "ompi_mpi_comm_world", &mpi.world, e);
  sym(lib, "ompi_mpi_float", &mpi.f32, e);
  sym(lib, "ompi_mpi_double", &mpi.f64, e);
  sym(lib, "ompi_mpi_byte", &mpi.byte, e);
  sym(lib, "ompi_mpi_op_sum", &mpi.sum, e);
  if (!e.empty()) {
    e += " (not Open MPI's ABI: span's MPI engine needs Open MPI 4 or 5, libmpi.so.40)";
    dlclose(lib);
    return false;
  }
  mpi.lib = lib;
  return true;
}

/** The arguments, at most 4. */
size_t argv(napi_env env, napi_callback_info info, napi_value* v) {
  size_t n = 4;
  napi_get_cb_info(env, info, &n, v, nullptr, nullptr);
  return n;
}

std::string stringArg(napi_env env, napi_value v, const char* fallback) {
  char buf[1024];
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, buf, sizeof buf, &len) != napi_ok) return fallback;
  return std::string(buf, len);
}

/** loadMpi(path) → "" when loaded, else the reason (dlerror or the missing symbol). */
napi_value LoadMpi(napi_env env, napi_callback_info info) {
  napi_value v[4];
  size_t n = argv(env, info, v);
  std::string path = n > 0 ? stringArg(env, v[0], "libmpi.so.40") : "libmpi.so.40";
  return jsString(env, loadMpi(path.c_str()) ? "" : mpi.error);
}

/** MPI_Init_thread(FUNNELED) once; returns [rank, size, library version]. */
napi_value Init(napi_env env, napi_callback_info) {
  if (!mpi.lib) return fail(env, "MPI is not loaded: " + mpi.error);
  int done = 0, provided = 0, rank = 0, size = 0;
  mpi.initialized(&done);
  if (!done && mpi.init_thread(nullptr, nullptr, kThreadFunneled, &provided) != 0) return fail(env, "MPI_Init_thread failed");
  mpi.comm_rank(mpi.world, &rank);
  mpi.comm_size(mpi.world, &size);
  char version[256 + 1] = {0};
  int len = 0;
  mpi.library_version(version, &len);
  std::string ver(version, len > 0 ? static_cast<size_t>(len) : 0);
  size_t nl = ver.find('\n');
  if (nl != std::string::npos) ver.resize(nl);
  napi_value out;
  napi_create_array_with_length(env, 3, &out);
  napi_set_element(env, out, 0, number(env, rank));
  napi_set_element(env, out, 1, number(env, size));
  napi_set_element(env, out, 2, jsString(env, ver));
  return out;
}

bool typed(napi_env env, napi_value v, napi_typedarray_type* type, void** data, size_t* len) {
  napi_value ab;
  size_t off;
  return napi_get_typedarray_info(env, v, type, len, data, &ab, &off) == napi_ok;
}

/** allReduceSum(Float32Array | Float64Array): summed over ranks, in place. */
napi_value AllReduceSum(napi_env env, napi_callback_info info) {
  napi_value v[4];
  napi_typedarray_type type;
  void* data;
  size_t len;
  if (argv(env, info, v) < 1 || !typed(env, v[0], &type, &data, &len)) return fail(env, "allReduceSum: expected a typed array");
  Handle dt = type == napi_float32_array ? mpi.f32 : type == napi_float64_array ? mpi.f64 : nullptr;
  if (!dt) return fail(env, "allReduceSum: expected a Float32Array or Float64Array");
  if (len > INT32_MAX) return fail(env, "allReduceSum: buffer too large for one call");
  if (mpi.allreduce(kInPlace, data, static_cast<int>(len), dt, mpi.sum, mpi.world) != 0) return fail(env, "MPI_Allreduce failed");
  return undef(env);
}

/** broadcast(typedArray, root): its bytes from root to every rank, in place. */
napi_value Broadcast(napi_env env, napi_callback_info info) {
  napi_value v[4];
  napi_typedarray_type type;
  void* data;
  size_t len;
  int32_t root = 0;
  if (argv(env, info, v) < 2 || !typed(env, v[0], &type, &data, &len) || napi_get_value_int32(env, v[1], &root) != napi_ok) {
    return fail(env, "broadcast: expected (typedArray, root)");
  }
  static const size_t width[] = {1, 1, 1, 2, 2, 4, 4, 4, 8, 8, 8};  // napi_typedarray_type order
  size_t bytes = len * (type <= napi_bigint64_array ? width[type] : 8);
  if (bytes > INT32_MAX) return fail(env, "broadcast: buffer too large for one call");
  if (mpi.bcast(data, static_cast<int>(bytes), mpi.byte, root, mpi.world) != 0) return fail(env, "MPI_Bcast failed");
  return undef(env);
}

napi_value Barrier(napi_env env, napi_callback_info) {
  if (mpi.barrier(mpi.world) != 0) return fail(env, "MPI_Barrier failed");
  return undef(env);
}

napi_value Finalize(napi_env env, napi_callback_info) {
  int done = 0;
  if (mpi.lib && mpi.initialized(&done) == 0 && done) mpi.finalize();
  return undef(env);
}

/** abort(code): MPI_Abort on the world (the launcher ends every rank). */
napi_value Abort(napi_env env, napi_callback_info info) {
  napi_value v[4];
  int32_t code = 1;
  if (argv(env, info, v) > 0) napi_get_value_int32(env, v[0], &code);
  if (mpi.lib) mpi.abort(mpi.world, code);
  return undef(env);
}

/** loadNccl(path) → "" and the version (e.g. 22105), or the reason it cannot be used. */
napi_value LoadNccl(napi_env env, napi_callback_info info) {
  napi_value v[4];
  size_t n = argv(env, info, v);
  std::string path = n > 0 ? stringArg(env, v[0], "libnccl.so.2") : "libnccl.so.2";
  if (!nccl.lib) {
    nccl.error.clear();
    void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      return jsString(env, e ? e : "dlopen failed");
    }
    sym(lib, "ncclGetVersion", &nccl.get_version, nccl.error);
    sym(lib, "ncclGetUniqueId", &nccl.get_unique_id, nccl.error);
    sym(lib, "ncclGetErrorString", &nccl.error_string, nccl.error);
    if (!nccl.error.empty()) {
      dlclose(lib);
      return jsString(env, nccl.error);
    }
    nccl.lib = lib;
  }
  int version = 0;
  nccl.get_version(&version);
  return jsString(env, "version " + std::to_string(version));
}

/** ncclUniqueId() → Uint8Array(128): rank 0's id (or one derived from NCCL_COMM_ID). */
napi_value NcclUniqueId(napi_env env, napi_callback_info) {
  if (!nccl.lib) return fail(env, "NCCL is not loaded");
  napi_value ab, out;
  void* data;
  napi_create_arraybuffer(env, 128, &data, &ab);
  int rc = nccl.get_unique_id(data);
  if (rc != 0) return fail(env, std::string("ncclGetUniqueId: ") + nccl.error_string(rc));
  napi_create_typedarray(env, napi_uint8_array, 128, ab, 0, &out);
  return out;
}

napi_value Register(napi_env env, napi_value exports) {
  const span_napi::Method methods[] = {
      {"loadMpi", LoadMpi},
      {"init", Init},
      {"allReduceSum", AllReduceSum},
      {"broadcast", Broadcast},
      {"barrier", Barrier},
      {"finalize", Finalize},
      {"abort", Abort},
      {"loadNccl", LoadNccl},
      {"ncclUniqueId", NcclUniqueId},
  };
  span_napi::defineMethods(env, exports, methods);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Register)
