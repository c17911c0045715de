// A stand-in for NVIDIA's libcublasLt, for tests only (never shipped, never on the normal library
// search: tests point SPAN_CUDA_LIBS at the folder build.mjs writes). It exports the cuBLASLt
// entry points native/cuda/src/abi.h declares, with the library's documented semantics
// (cublasLt.h; docs/cuda-cublaslt-standin.md says which, and what this cannot show):
//   D = epilogue(alpha · op(A) · op(B) + beta · C), column-major, per batch.
// "Device" pointers are host pointers: the libcuda stand-in's device memory is host memory.
// GEMM through CBLAS (OpenBLAS) when built with it, else a naive loop; fp32 accumulation.
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

#include "../../src/abi.h"
#include "problem.h"

#ifdef SPAN_BLAS_OPENBLAS
#include <cblas.h>
#endif

using namespace span_lt;

struct SPAN_cublasLtContext {
  uint32_t magic = 0x4c74;
};
struct SPAN_cublasLtMatmulDescOpaque {
  Desc d;
};
struct SPAN_cublasLtMatrixLayoutOpaque {
  Layout l;
};
struct SPAN_cublasLtMatmulPreferenceOpaque {
  uint32_t searchMode = 0;
  uint64_t maxWorkspace = 0;
};

namespace {

/** Copies buf into the attribute field when the sizes match (cublasLt.h: INVALID_VALUE otherwise). */
template <class T>
int setField(T& field, const void* buf, size_t size) {
  if (!buf || size != sizeof(T)) return SPAN_CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(&field, buf, sizeof(T));
  return SPAN_CUBLAS_STATUS_SUCCESS;
}

/** The attribute getter's contract: size 0 asks for the size; otherwise the sizes must match. */
template <class T>
int getField(const T& field, void* buf, size_t size, size_t* written) {
  if (size == 0) {
    if (!written) return SPAN_CUBLAS_STATUS_INVALID_VALUE;
    *written = sizeof(T);
    return SPAN_CUBLAS_STATUS_SUCCESS;
  }
  if (!buf || size != sizeof(T)) return SPAN_CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(buf, &field, sizeof(T));
  if (written) *written = sizeof(T);
  return SPAN_CUBLAS_STATUS_SUCCESS;
}

/** Runs fn on the Desc field `attr` names (fn(field) → status); attributes span does not model are NOT_SUPPORTED. */
template <class Fn>
int onDescField(Desc& d, int attr, Fn fn) {
  switch (attr) {
    case SPAN_CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return fn(d.compute);
    case SPAN_CUBLASLT_MATMUL_DESC_SCALE_TYPE: return fn(d.scale);
    case SPAN_CUBLASLT_MATMUL_DESC_POINTER_MODE: return fn(d.pointerMode);
    case SPAN_CUBLASLT_MATMUL_DESC_TRANSA: return fn(d.transa);
    case SPAN_CUBLASLT_MATMUL_DESC_TRANSB: return fn(d.transb);
    case SPAN_CUBLASLT_MATMUL_DESC_TRANSC: return fn(d.transc);
    case SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE: return fn(d.epilogue);
    case SPAN_CUBLASLT_MATMUL_DESC_BIAS_POINTER: return fn(d.bias);
    case SPAN_CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE: return fn(d.biasBatchStride);
    case SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER: return fn(d.aux);
    case SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD: return fn(d.auxLd);
    case SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE: return fn(d.auxBatchStride);
    case SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE: return fn(d.auxType);
    case SPAN_CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return fn(d.biasType);
    default: return SPAN_CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

template <class Fn>
int onLayoutField(Layout& l, int attr, Fn fn) {
  switch (attr) {
    case SPAN_CUBLASLT_MATRIX_LAYOUT_TYPE: return fn(l.type);
    case SPAN_CUBLASLT_MATRIX_LAYOUT_ORDER: return fn(l.order);
    case SPAN_CUBLASLT_MATRIX_LAYOUT_ROWS: return fn(l.rows);
    case SPAN_CUBLASLT_MATRIX_LAYOUT_COLS: return fn(l.cols);
    case SPAN_CUBLASLT_MATRIX_LAYOUT_LD: return fn(l.ld);
    case SPAN_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return fn(l.batch);
    case SPAN_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return fn(l.stride);
    default: return SPAN_CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

/** C = op(A)·op(B) for one batch, fp32 accumulation: [m, n] column-major with ld m. */
void gemm(const Problem& p, const float* a, int64_t lda, const float* b, int64_t ldb, float* c) {
#ifdef SPAN_BLAS_OPENBLAS
  if (p.k > 0) {
    cblas_sgemm(CblasColMajor, p.transa ? CblasTrans : CblasNoTrans, p.transb ? CblasTrans : CblasNoTrans, (int)p.m, (int)p.n, (int)p.k, 1.0f, a,
                (int)lda, b, (int)ldb, 0.0f, c, (int)p.m);
    return;
  }
#endif
  for (int64_t j = 0; j < p.n; j++)
    for (int64_t i = 0; i < p.m; i++) {
      float acc = 0;
      for (int64_t q = 0; q < p.k; q++) acc += (p.transa ? a[q + i * lda] : a[i + q * lda]) * (p.transb ? b[j + q * ldb] : b[q + j * ldb]);
      c[i + j * p.m] = acc;
    }
}

/** One batch's operand as fp32 in its own layout (ld kept), rounded as the compute type asks. */
std::vector<float> operand(const Layout& l, const void* base, int64_t batch, int compute) {
  std::vector<float> out(l.ld * (l.cols == 0 ? 0 : l.cols - 1) + l.rows);
  for (uint64_t j = 0; j < l.cols; j++)
    for (uint64_t i = 0; i < l.rows; i++) {
      const int64_t at = (int64_t)i + (int64_t)j * l.ld;
      float v = load(l.type, base, batch * l.stride + at);
      if (compute == SPAN_CUBLAS_COMPUTE_32F_FAST_TF32) v = roundTf32(v);
      if (compute == SPAN_CUBLAS_COMPUTE_32F_FAST_16BF) v = bf16ToFloat(floatToBf16(v));
      out[at] = v;
    }
  return out;
}

/** Runs every batch: GEMM, alpha/beta, then the epilogue (epilogue.cc). */
void run(const Problem& p) {
  std::vector<float> acc(p.m * p.n);
  for (int64_t b = 0; b < p.batch; b++) {
    std::vector<float> a = operand(p.A, p.a, b, p.compute), bb = operand(p.B, p.b, b, p.compute);
    gemm(p, a.data(), p.A.ld, bb.data(), p.B.ld, acc.data());
    epilogue(p, b, acc.data(), a.data(), bb.data());
  }
}

}  // namespace

extern "C" {

size_t cublasLtGetVersion(void) { return 130000; }
size_t cublasLtGetCudartVersion(void) { return 13000; }

SPAN_cublasStatus_t cublasLtCreate(SPAN_cublasLtHandle_t* handle) {
  if (!handle) return SPAN_CUBLAS_STATUS_INVALID_VALUE;
  *handle = new (std::nothrow) SPAN_cublasLtContext();
  return *handle ? SPAN_CUBLAS_STATUS_SUCCESS : SPAN_CUBLAS_STATUS_ALLOC_FAILED;
}

SPAN_cublasStatus_t cublasLtDestroy(SPAN_cublasLtHandle_t handle) {
  if (!handle) return SPAN_CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return SPAN_CUBLAS_STATUS_SUCCESS;
}

SPAN_cublasStatus_t cublasLtMatmulDescCreate(SPAN_cublasLtMatmulDesc_t* desc, SPAN_cublasComputeType_t compute, SPAN_cudaDataType_t scale) {
  if (!desc) return SPAN_CUBLAS_STATUS_INVALID_VALUE;
  *desc = new (std::nothrow) SPAN_cublasLtMatmulDescOpaque();
  if (!*desc) return SPAN_CUBLAS_STATUS_ALLOC_FAILED;
  (*desc)->d.compute = compute;
  (*desc)->d.scale = scale;
  return SPAN_CUBLAS_STATUS_SUCCESS;
}

SPAN_cublasStatus_t cublasLtMatmulDescDestroy(SPAN_cublasLtMatmulDesc_t desc) {
  delete desc;
  return SPAN_CUBLAS_STATUS_SUCCESS;
}

SPAN_cublasStatus_t cublasLtMatmulDescSetAttribute(SPAN_cublasLtMatmulDesc_t desc, SPAN_cublasLtMatmulDescAttributes_t attr, const void* buf,
                                                   size_t size) {
  if (!desc) return SPAN_CUBLAS_STATUS_INVALID_VALUE;
  return onDescField(desc->d, attr, [&](auto& f) { return setField(f, buf, size); });
}

SPAN_cublasStatus_t cublasLtMatmulDescGetAttribute(SPAN_cublasLtMatmulDesc_t desc, SPAN_cublasLtMatmulDescAttributes_t attr, void* buf, size_t size,
                                                   size_t* written) {
  if (!desc) return SPAN_CUBLAS_STATUS_INVALID_VALUE;
  return onDescField(desc->d, attr, [&](auto& f) { return getField(f, buf, size, written); });
}

SPAN_cublasStatus_t cublasLtMatrixLayoutCreate(SPAN_cublasLtMatrixLayout_t* layout, SPAN_cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld) {
  if (!layout) return SPAN_CUBLAS_STATUS_INVALID_VALUE;
  *layout = new (std::nothrow) SPAN_cublasLtMatrixLayoutOpaque();
  if (!*layout) return SPAN_CUBLAS_STATUS_ALLOC_FAILED;
  (*layout)->l.type = (uint32_t)type;
  (*layout)->l.rows = rows;
  (*layout)->l.cols = cols;
  (*layout)->l.ld = ld;
  return SPAN_CUBLAS_STATUS_SUCCESS;
}

SPAN_cublasStatus_t cublasLtMatrixLayoutDestroy(SPAN_cublasLtMatrixLayout_t layout) {
  delete layout;
  return SPAN_CUBLAS_STATUS_SUCCESS;
}

SPAN_cublasStatus_t cublasLtMatrixLayoutSetAttribute(SPAN_cublasLtMatrixLayout_t layout, SPAN_cublasLtMatrixLayoutAttribute_t attr, const void* buf,
                                                     size_t size) {
  if (!layout) return SPAN_CUBLAS_STATUS_INVALID_VALUE;
  return onLayoutField(layout->l, attr, [&](auto& f) { return setField(f, buf, size); });
}

SPAN_cublasStatus_t cublasLtMatrixLayoutGetAttribute(SPAN_cublasLtMatrixLayout_t layout, SPAN_cublasLtMatrixLayoutAttribute_t attr, void* buf,
                                                     size_t size, size_t* written) {
  if (!layout) return SPAN_CUBLAS_STATUS_INVALID_VALUE;
  return onLayoutField(layout->l, attr, [&](auto& f) { return getField(f, buf, size, written); });
}

SPAN_cublasStatus_t cublasLtMatmulPreferenceCreate(SPAN_cublasLtMatmulPreference_t* pref) {
  if (!pref) return SPAN_CUBLAS_STATUS_INVALID_VALUE;
  *pref = new (std::nothrow) SPAN_cublasLtMatmulPreferenceOpaque();
  return *pref ? SPAN_CUBLAS_STATUS_SUCCESS : SPAN_CUBLAS_STATUS_ALLOC_FAILED;
}

SPAN_cublasStatus_t cublasLtMatmulPreferenceDestroy(SPAN_cublasLtMatmulPreference_t pref) {
  delete pref;
  return SPAN_CUBLAS_STATUS_SUCCESS;
}

SPAN_cublasStatus_t cublasLtMatmulPreferenceSetAttribute(SPAN_cublasLtMatmulPreference_t pref, SPAN_cublasLtMatmulPreferenceAttributes_t attr,
                                                         const void* buf, size_t size) {
  if (!pref) return SPAN_CUBLAS_STATUS_INVALID_VALUE;
  if (attr == SPAN_CUBLASLT_MATMUL_PREF_SEARCH_MODE) return setField(pref->searchMode, buf, size);
  if (attr == SPAN_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) return setField(pref->maxWorkspace, buf, size);
  return SPAN_CUBLAS_STATUS_NOT_SUPPORTED;
}

/** One algorithm for whatever cublasLtMatmul would run (no workspace), NOT_SUPPORTED for what it would refuse. */
SPAN_cublasStatus_t cublasLtMatmulAlgoGetHeuristic(SPAN_cublasLtHandle_t handle, SPAN_cublasLtMatmulDesc_t desc, SPAN_cublasLtMatrixLayout_t A,
                                                   SPAN_cublasLtMatrixLayout_t B, SPAN_cublasLtMatrixLayout_t C, SPAN_cublasLtMatrixLayout_t D,
                                                   SPAN_cublasLtMatmulPreference_t pref, int requested, SPAN_cublasLtMatmulHeuristicResult_t results[],
                                                   int* returned) {
  if (!handle) return SPAN_CUBLAS_STATUS_NOT_INITIALIZED;
  if (requested <= 0 || !results || !returned || !pref) return SPAN_CUBLAS_STATUS_INVALID_VALUE;
  *returned = 0;
  Problem p;
  int s = describe(desc ? &desc->d : nullptr, A ? &A->l : nullptr, B ? &B->l : nullptr, C ? &C->l : nullptr, D ? &D->l : nullptr, p);
  if (s != SPAN_CUBLAS_STATUS_SUCCESS) return SPAN_CUBLAS_STATUS_NOT_SUPPORTED;
  std::memset(&results[0], 0, sizeof(results[0]));
  results[0].algo.data[0] = 0x5350414e;  // "SPAN": the one algorithm
  results[0].state = SPAN_CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return SPAN_CUBLAS_STATUS_SUCCESS;
}

SPAN_cublasStatus_t cublasLtMatmul(SPAN_cublasLtHandle_t handle, SPAN_cublasLtMatmulDesc_t desc, const void* alpha, const void* A,
                                   SPAN_cublasLtMatrixLayout_t Adesc, const void* B, SPAN_cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
                                   SPAN_cublasLtMatrixLayout_t Cdesc, void* D, SPAN_cublasLtMatrixLayout_t Ddesc, const SPAN_cublasLtMatmulAlgo_t* algo,
                                   void* workspace, size_t workspaceSize, SPAN_cudaStream_t stream) {
  (void)algo, (void)workspace, (void)workspaceSize;
  if (!handle) return SPAN_CUBLAS_STATUS_NOT_INITIALIZED;
  Problem p;
  int s = describe(desc ? &desc->d : nullptr, Adesc ? &Adesc->l : nullptr, Bdesc ? &Bdesc->l : nullptr, Cdesc ? &Cdesc->l : nullptr,
                   Ddesc ? &Ddesc->l : nullptr, p);
  if (s == SPAN_CUBLAS_STATUS_SUCCESS) s = bind(p, alpha, A, B, beta, C, D);
  if (s != SPAN_CUBLAS_STATUS_SUCCESS) return s;
  if (p.m <= 0 || p.n <= 0) return SPAN_CUBLAS_STATUS_SUCCESS;
  // The product is stream work: with the libcuda stand-in in the process, it goes on the stream
  // through spanStandinEnqueueHost (run in stream order, queued under SPAN_STANDIN_DEFER=1, or
  // recorded into the stream's capture with the problem as it is now, as the real library's kernels
  // are). Without it (lt-run alone), it runs now.
  using Enqueue = int (*)(void*, int (*)(void*), void*, void (*)(void*));
  static const auto enqueue = reinterpret_cast<Enqueue>(dlsym(RTLD_DEFAULT, "spanStandinEnqueueHost"));
  if (!enqueue) return run(p), SPAN_CUBLAS_STATUS_SUCCESS;
  auto* held = new Problem(p);
  int r = enqueue(
      stream, [](void* q) -> int { return run(*static_cast<Problem*>(q)), 0; }, held, [](void* q) { delete static_cast<Problem*>(q); });
  return r == 0 ? SPAN_CUBLAS_STATUS_SUCCESS : SPAN_CUBLAS_STATUS_EXECUTION_FAILED;
}

}  // extern "C"

// Each export has abi.h's prototype exactly (a compile error otherwise).
static_assert(std::is_same_v<decltype(&cublasLtGetVersion), span_cublasLtGetVersion_t>);
static_assert(std::is_same_v<decltype(&cublasLtGetCudartVersion), span_cublasLtGetCudartVersion_t>);
static_assert(std::is_same_v<decltype(&cublasLtCreate), span_cublasLtCreate_t>);
static_assert(std::is_same_v<decltype(&cublasLtDestroy), span_cublasLtDestroy_t>);
static_assert(std::is_same_v<decltype(&cublasLtMatmulDescCreate), span_cublasLtMatmulDescCreate_t>);
static_assert(std::is_same_v<decltype(&cublasLtMatmulDescDestroy), span_cublasLtMatmulDescDestroy_t>);
static_assert(std::is_same_v<decltype(&cublasLtMatmulDescSetAttribute), span_cublasLtMatmulDescSetAttribute_t>);
static_assert(std::is_same_v<decltype(&cublasLtMatmulDescGetAttribute), span_cublasLtMatmulDescGetAttribute_t>);
static_assert(std::is_same_v<decltype(&cublasLtMatrixLayoutCreate), span_cublasLtMatrixLayoutCreate_t>);
static_assert(std::is_same_v<decltype(&cublasLtMatrixLayoutDestroy), span_cublasLtMatrixLayoutDestroy_t>);
static_assert(std::is_same_v<decltype(&cublasLtMatrixLayoutSetAttribute), span_cublasLtMatrixLayoutSetAttribute_t>);
static_assert(std::is_same_v<decltype(&cublasLtMatrixLayoutGetAttribute), span_cublasLtMatrixLayoutGetAttribute_t>);
static_assert(std::is_same_v<decltype(&cublasLtMatmulPreferenceCreate), span_cublasLtMatmulPreferenceCreate_t>);
static_assert(std::is_same_v<decltype(&cublasLtMatmulPreferenceDestroy), span_cublasLtMatmulPreferenceDestroy_t>);
static_assert(std::is_same_v<decltype(&cublasLtMatmulPreferenceSetAttribute), span_cublasLtMatmulPreferenceSetAttribute_t>);
static_assert(std::is_same_v<decltype(&cublasLtMatmulAlgoGetHeuristic), span_cublasLtMatmulAlgoGetHeuristic_t>);
static_assert(std::is_same_v<decltype(&cublasLtMatmul), span_cublasLtMatmul_t>);
