// cuBLASLt matmuls of the cuda backend (device.h Gemm): column-major operands as gemm-layout.ts
// computes them from tfjs' row-major tensors, strided batches (stride 0 broadcasts), fp32 data
// with CUBLAS_COMPUTE_32F, or CUBLAS_COMPUTE_32F_FAST_TF32 for --precision tf32; under --precision
// bf16 (fp16), A and B are bf16 (fp16) copies (CUDA_R_16BF, CUDA_R_16F; cast by the backend: cast_bf16.cu, cast_f16.cu) while C/D stay
// fp32 and the compute type CUBLAS_COMPUTE_32F (fp32 accumulation). The handle and
// a workspace are made once; descriptors per call (cheap next to a GEMM).
#include <dlfcn.h>

#include "device.h"
#include "graph.h"
#include "state.h"

namespace span_cuda {

namespace {

std::string ltError(const char* api, SPAN_cublasStatus_t r) {
  return r == SPAN_CUBLAS_STATUS_SUCCESS ? "" : std::string(api) + ": cublasStatus " + std::to_string(r);
}

constexpr size_t kWorkspace = 32u << 20;  // cuBLASLt's recommendation for Hopper

/** Layout of one operand: rows × cols, ld, batch count and stride. */
std::string layout(SPAN_cublasLtMatrixLayout_t* l, uint32_t type, uint64_t rows, uint64_t cols, int64_t ld, int batch, int64_t stride) {
  State& s = state();
  std::string e = ltError("cublasLtMatrixLayoutCreate", s.ltLayoutCreate(l, type, rows, cols, ld));
  if (e.empty() && batch > 1) {
    int32_t b = batch;
    e = ltError("cublasLtMatrixLayoutSetAttribute", s.ltLayoutSet(*l, SPAN_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof(b)));
    if (e.empty()) e = ltError("cublasLtMatrixLayoutSetAttribute", s.ltLayoutSet(*l, SPAN_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return e;
}

/**
 * The epilogue's attributes: CUBLASLT_MATMUL_DESC_EPILOGUE, the bias pointer (a vector of D's type,
 * fp32, one value a row of the column-major D, so one a column of tfjs' row-major C) and, where
 * given, the aux pointer and its ld (GELU_AUX* writes, DGELU* reads the pre-activation).
 */
std::string epilogue(const Gemm& g, SPAN_cublasLtMatmulDesc_t d) {
  State& s = state();
  const char* api = "cublasLtMatmulDescSetAttribute";
  uint32_t ep = g.epilogue;
  std::string e = ltError(api, s.ltDescSet(d, SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof(ep)));
  const void* bias = reinterpret_cast<const void*>(g.bias);
  void* aux = reinterpret_cast<void*>(g.aux);
  int64_t ld = g.auxLd;
  if (e.empty() && g.bias) e = ltError(api, s.ltDescSet(d, SPAN_CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  if (e.empty() && g.aux) e = ltError(api, s.ltDescSet(d, SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux)));
  if (e.empty() && g.aux) e = ltError(api, s.ltDescSet(d, SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof(ld)));
  return e;
}

std::string describe(const Gemm& g, SPAN_cublasLtMatmulDesc_t* d) {
  State& s = state();
  std::string e = ltError("cublasLtMatmulDescCreate", s.ltDescCreate(d, g.tf32 ? SPAN_CUBLAS_COMPUTE_32F_FAST_TF32 : SPAN_CUBLAS_COMPUTE_32F, SPAN_CUDA_R_32F));
  int32_t ta = g.transA ? SPAN_CUBLAS_OP_T : SPAN_CUBLAS_OP_N, tb = g.transB ? SPAN_CUBLAS_OP_T : SPAN_CUBLAS_OP_N;
  if (e.empty()) e = ltError("cublasLtMatmulDescSetAttribute", s.ltDescSet(*d, SPAN_CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  if (e.empty()) e = ltError("cublasLtMatmulDescSetAttribute", s.ltDescSet(*d, SPAN_CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  if (e.empty() && g.epilogue != SPAN_CUBLASLT_EPILOGUE_DEFAULT) e = epilogue(g, *d);
  return e;
}

/** The heuristic's first algorithm for this problem within the workspace. */
std::string pick(SPAN_cublasLtMatmulDesc_t d, SPAN_cublasLtMatrixLayout_t la, SPAN_cublasLtMatrixLayout_t lb, SPAN_cublasLtMatrixLayout_t lc,
                 SPAN_cublasLtMatmulHeuristicResult_t* h) {
  State& s = state();
  SPAN_cublasLtMatmulPreference_t pref = nullptr;
  std::string e = ltError("cublasLtMatmulPreferenceCreate", s.ltPrefCreate(&pref));
  uint64_t ws = s.workspaceBytes;
  if (e.empty()) e = ltError("cublasLtMatmulPreferenceSetAttribute", s.ltPrefSet(pref, SPAN_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  int found = 0;
  if (e.empty()) e = ltError("cublasLtMatmulAlgoGetHeuristic", s.ltHeuristic(s.lt, d, la, lb, lc, lc, pref, 1, h, &found));
  if (e.empty() && found == 0) e = "cublasLtMatmulAlgoGetHeuristic: no algorithm for this matmul";
  if (pref) s.ltPrefDestroy(pref);
  return e;
}

}  // namespace

std::string bindLt(void* lib, State& s) {
  if (!lib) return "(not loaded)";
  SPAN_BIND(ltCreate, "cublasLtCreate") SPAN_BIND(ltDescCreate, "cublasLtMatmulDescCreate") SPAN_BIND(ltDescDestroy, "cublasLtMatmulDescDestroy")
  SPAN_BIND(ltDescSet, "cublasLtMatmulDescSetAttribute") SPAN_BIND(ltLayoutCreate, "cublasLtMatrixLayoutCreate")
  SPAN_BIND(ltLayoutDestroy, "cublasLtMatrixLayoutDestroy") SPAN_BIND(ltLayoutSet, "cublasLtMatrixLayoutSetAttribute")
  SPAN_BIND(ltPrefCreate, "cublasLtMatmulPreferenceCreate") SPAN_BIND(ltPrefDestroy, "cublasLtMatmulPreferenceDestroy")
  SPAN_BIND(ltPrefSet, "cublasLtMatmulPreferenceSetAttribute") SPAN_BIND(ltHeuristic, "cublasLtMatmulAlgoGetHeuristic")
  SPAN_BIND(ltMatmul, "cublasLtMatmul")
  return "";
}

std::string ltOpen(State& s) {
  std::string e = ltError("cublasLtCreate", s.ltCreate(&s.lt));
  if (!e.empty()) return e;
  if ((e = cuError("cuMemAlloc", s.cuMemAlloc(&s.workspace, kWorkspace))) != "") return e + " (cuBLASLt workspace)";
  s.workspaceBytes = kWorkspace;
  return "";
}

std::string deviceGemm(const Gemm& g) {
  State& s = state();
  if (g.C.rows == 0 || g.C.cols == 0 || g.batch == 0) return "";
  if (graphRecording()) return graphRecordGemm(g);
  SPAN_cublasLtMatmulDesc_t d = nullptr;
  SPAN_cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  std::string e = describe(g, &d);
  const uint32_t in = g.bf16 ? SPAN_CUDA_R_16BF : g.fp16 ? SPAN_CUDA_R_16F : SPAN_CUDA_R_32F;
  if (e.empty()) e = layout(&la, in, g.A.rows, g.A.cols, g.A.ld, g.batch, g.A.stride);
  if (e.empty()) e = layout(&lb, in, g.B.rows, g.B.cols, g.B.ld, g.batch, g.B.stride);
  if (e.empty()) e = layout(&lc, SPAN_CUDA_R_32F, g.C.rows, g.C.cols, g.C.ld, g.batch, g.C.stride);
  SPAN_cublasLtMatmulHeuristicResult_t h;
  if (e.empty()) e = pick(d, la, lb, lc, &h);
  if (e.empty()) {
    void* A = reinterpret_cast<void*>(g.A.ptr);
    void* B = reinterpret_cast<void*>(g.B.ptr);
    void* C = reinterpret_cast<void*>(g.C.ptr);
    e = ltError("cublasLtMatmul", s.ltMatmul(s.lt, d, &g.alpha, A, la, B, lb, &g.beta, C, lc, C, lc, &h.algo, reinterpret_cast<void*>(s.workspace),
                                             s.workspaceBytes, reinterpret_cast<SPAN_cudaStream_t>(s.stream)));
  }
  for (auto l : {la, lb, lc})
    if (l) s.ltLayoutDestroy(l);
  if (d) s.ltDescDestroy(d);
  return e;
}

}  // namespace span_cuda
