// Validation and epilogues of the cuBLASLt stand-in (problem.h). What the real library refuses is
// refused with its status: INVALID_VALUE for arguments in conflict (sizes that do not fit, a
// leading dimension below the rows, unequal batch counts, a missing pointer), NOT_SUPPORTED for
// configurations it has no kernel for (type combinations outside cuBLASLt's table, non-column
// orders, TRANSC, epilogues this stand-in does not model). docs/cuda-cublaslt-standin.md lists them.
#include "problem.h"

#include <cmath>

#include "../../src/abi.h"

namespace span_lt {

namespace {

constexpr int kOk = SPAN_CUBLAS_STATUS_SUCCESS;
constexpr int kInvalid = SPAN_CUBLAS_STATUS_INVALID_VALUE;
constexpr int kUnsupported = SPAN_CUBLAS_STATUS_NOT_SUPPORTED;

enum Use : unsigned { kPlain = 256, kBiasIn = 1, kBiasGradRows = 2, kBiasGradCols = 4, kAuxOut = 8, kAuxIn = 16, kRelu = 32, kGelu = 64, kDGelu = 128 };

/** What each epilogue span's stand-in models reads and writes; 0 for one it does not model. */
unsigned uses(uint32_t e) {
  switch (e) {
    case SPAN_CUBLASLT_EPILOGUE_DEFAULT: return kPlain;
    case SPAN_CUBLASLT_EPILOGUE_RELU: return kRelu;
    case SPAN_CUBLASLT_EPILOGUE_BIAS: return kBiasIn;
    case SPAN_CUBLASLT_EPILOGUE_RELU_BIAS: return kBiasIn | kRelu;
    case SPAN_CUBLASLT_EPILOGUE_GELU: return kGelu;
    case SPAN_CUBLASLT_EPILOGUE_GELU_BIAS: return kBiasIn | kGelu;
    case SPAN_CUBLASLT_EPILOGUE_GELU_AUX: return kAuxOut | kGelu;
    case SPAN_CUBLASLT_EPILOGUE_GELU_AUX_BIAS: return kBiasIn | kAuxOut | kGelu;
    case SPAN_CUBLASLT_EPILOGUE_DGELU: return kAuxIn | kDGelu;
    case SPAN_CUBLASLT_EPILOGUE_DGELU_BGRAD: return kAuxIn | kDGelu | kBiasGradRows;
    case SPAN_CUBLASLT_EPILOGUE_BGRADA: return kBiasGradRows;
    case SPAN_CUBLASLT_EPILOGUE_BGRADB: return kBiasGradCols;
    default: return 0;
  }
}

bool isType(uint32_t t) { return t == SPAN_CUDA_R_32F || t == SPAN_CUDA_R_16BF || t == SPAN_CUDA_R_16F; }

/** cuBLASLt's table of (compute, scale, A/B, C/D) types, the rows span may use. */
int types(const Desc& d, const Layout& A, const Layout& B, const Layout& C, const Layout& D) {
  if (d.scale != SPAN_CUDA_R_32F || A.type != B.type || C.type != D.type || !isType(A.type) || !isType(D.type)) return kUnsupported;
  if (d.compute == SPAN_CUBLAS_COMPUTE_32F) return A.type == SPAN_CUDA_R_32F && D.type != SPAN_CUDA_R_32F ? kUnsupported : kOk;
  if (d.compute == SPAN_CUBLAS_COMPUTE_32F_FAST_TF32 || d.compute == SPAN_CUBLAS_COMPUTE_32F_FAST_16BF)
    return A.type == SPAN_CUDA_R_32F && D.type == SPAN_CUDA_R_32F ? kOk : kUnsupported;
  return kUnsupported;
}

/** Sizes: op(A) [m, k], op(B) [k, n], C and D [m, n]; ld ≥ rows; equal batch counts. */
int shapes(const Layout* L[4], Problem& p) {
  const Layout &A = *L[0], &B = *L[1], &C = *L[2], &D = *L[3];
  p.m = (int64_t)D.rows, p.n = (int64_t)D.cols;
  p.k = (int64_t)(p.transa ? A.rows : A.cols);
  if ((int64_t)(p.transa ? A.cols : A.rows) != p.m || (int64_t)(p.transb ? B.rows : B.cols) != p.n) return kInvalid;
  if ((int64_t)(p.transb ? B.cols : B.rows) != p.k || C.rows != D.rows || C.cols != D.cols) return kInvalid;
  for (int i = 0; i < 4; i++) {
    if (L[i]->ld < (int64_t)L[i]->rows || L[i]->ld < 1 || L[i]->batch < 1 || L[i]->stride < 0) return kInvalid;
    if (L[i]->batch != D.batch) return kInvalid;
  }
  p.batch = D.batch;
  return kOk;
}

/** The epilogue's vectors: bias and aux types default to D's; GELU aux ld ≥ m and a multiple of 8. */
int epilogueArgs(const Desc& d, Problem& p) {
  const unsigned u = uses(d.epilogue);
  if (!u) return kUnsupported;
  p.biasType = d.biasType == -1 ? (int)p.D.type : d.biasType;
  p.auxType = d.auxType == -1 ? (int)p.D.type : d.auxType;
  if ((u & (kBiasIn | kBiasGradRows | kBiasGradCols)) && p.biasType != (int)p.D.type) return kUnsupported;
  if (u & (kAuxIn | kAuxOut)) {
    if (p.auxType != (int)p.D.type) return kUnsupported;
    if (d.auxLd < p.m || d.auxLd % 8 != 0 || d.auxBatchStride % 8 != 0 || d.auxBatchStride < 0) return kInvalid;
  }
  if (d.biasBatchStride < 0) return kInvalid;
  p.epilogue = d.epilogue;
  p.biasBatchStride = d.biasBatchStride, p.auxLd = d.auxLd, p.auxBatchStride = d.auxBatchStride;
  p.bias = const_cast<void*>(d.bias), p.aux = d.aux;
  return kOk;
}

/** GELU as cuBLASLt defines it: the tanh approximation, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
double gelu(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

/** Its derivative (DGELU): 0.5·(1 + t) + 0.5·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²), t the tanh above. */
double dgelu(double x) {
  const double t = std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * 0.7978845608028654 * (1 + 3 * 0.044715 * x * x);
}

}  // namespace

float load(uint32_t type, const void* base, int64_t at) {
  if (type == SPAN_CUDA_R_16BF) return bf16ToFloat(static_cast<const uint16_t*>(base)[at]);
  if (type == SPAN_CUDA_R_16F) return halfToFloat(static_cast<const uint16_t*>(base)[at]);
  return static_cast<const float*>(base)[at];
}

void store(uint32_t type, void* base, int64_t at, float v) {
  if (type == SPAN_CUDA_R_16BF) static_cast<uint16_t*>(base)[at] = floatToBf16(v);
  else if (type == SPAN_CUDA_R_16F) static_cast<uint16_t*>(base)[at] = floatToHalf(v);
  else static_cast<float*>(base)[at] = v;
}

int describe(const Desc* d, const Layout* A, const Layout* B, const Layout* C, const Layout* D, Problem& p) {
  if (!d || !A || !B || !C || !D) return kInvalid;
  const Layout* L[4] = {A, B, C, D};
  for (const Layout* l : L)
    if (l->order != SPAN_CUBLASLT_ORDER_COL) return kUnsupported;
  if (d->transc != SPAN_CUBLAS_OP_N) return kUnsupported;
  if (d->transa < 0 || d->transa > 2 || d->transb < 0 || d->transb > 2) return kInvalid;  // OP_C (2) is OP_T for real types
  if (d->pointerMode != SPAN_CUBLASLT_POINTER_MODE_HOST && d->pointerMode != SPAN_CUBLASLT_POINTER_MODE_DEVICE) return kUnsupported;
  int s = types(*d, *A, *B, *C, *D);
  if (s != kOk) return s;
  p.A = *A, p.B = *B, p.C = *C, p.D = *D;
  p.compute = d->compute;
  p.transa = d->transa != SPAN_CUBLAS_OP_N, p.transb = d->transb != SPAN_CUBLAS_OP_N;
  if ((s = shapes(L, p)) != kOk) return s;
  return epilogueArgs(*d, p);
}

int bind(Problem& p, const void* alpha, const void* a, const void* b, const void* beta, const void* c, void* d) {
  if (!alpha || !beta) return kInvalid;
  std::memcpy(&p.alpha, alpha, 4);  // scale type CUDA_R_32F; device pointers are host memory here
  std::memcpy(&p.beta, beta, 4);
  const bool empty = p.m == 0 || p.n == 0;
  if (!d && !empty) return kInvalid;
  if (p.k > 0 && !empty && (!a || !b)) return kInvalid;
  if (p.beta != 0 && !c && !empty) return kInvalid;  // beta 0: C is never read and may be null
  if (c == d && c && (p.C.ld != p.D.ld || p.C.stride != p.D.stride)) return kInvalid;  // in place: C and D one layout
  const unsigned u = uses(p.epilogue);
  if ((u & (kBiasIn | kBiasGradRows | kBiasGradCols)) && !p.bias && !empty) return kInvalid;
  if ((u & (kAuxIn | kAuxOut)) && !p.aux && !empty) return kInvalid;
  p.a = a, p.b = b, p.c = c, p.d = d;
  return kOk;
}

namespace {

/** The bias gradient of one batch: row sums of `rows` (m) or, for BGRADB, column sums of op(B) over k. */
void biasGrad(const Problem& p, int64_t batch, const double* rowSums) {
  const unsigned u = uses(p.epilogue);
  const int64_t off = batch * p.biasBatchStride;
  if (u & kBiasGradRows) {
    if (p.epilogue == SPAN_CUBLASLT_EPILOGUE_BGRADA) {
      for (int64_t i = 0; i < p.m; i++) {  // Σ_q op(A)[i, q]
        double s = 0;
        for (int64_t q = 0; q < p.k; q++) s += load(p.A.type, p.a, batch * p.A.stride + (p.transa ? q + i * p.A.ld : i + q * p.A.ld));
        store(p.biasType, p.bias, off + i, (float)s);
      }
    } else {
      for (int64_t i = 0; i < p.m; i++) store(p.biasType, p.bias, off + i, (float)rowSums[i]);
    }
  }
  if (u & kBiasGradCols) {
    for (int64_t j = 0; j < p.n; j++) {  // Σ_q op(B)[q, j]
      double s = 0;
      for (int64_t q = 0; q < p.k; q++) s += load(p.B.type, p.b, batch * p.B.stride + (p.transb ? j + q * p.B.ld : q + j * p.B.ld));
      store(p.biasType, p.bias, off + j, (float)s);
    }
  }
}

/** One element through the epilogue: x = alpha·acc + beta·C (+ bias), aux, activation or its gradient. */
float element(const Problem& p, int64_t batch, int64_t i, int64_t j, float acc) {
  const unsigned u = uses(p.epilogue);
  float x = p.alpha * acc;
  if (p.beta != 0) x += p.beta * load(p.C.type, p.c, batch * p.C.stride + i + j * p.C.ld);
  if (u & kBiasIn) x += load(p.biasType, p.bias, batch * p.biasBatchStride + i);
  const int64_t auxAt = batch * p.auxBatchStride + i + j * p.auxLd;
  if (u & kAuxOut) store(p.auxType, p.aux, auxAt, x);
  if (u & kRelu) x = x > 0 ? x : 0;
  if (u & kGelu) x = (float)gelu(x);
  if (u & kDGelu) x = (float)(x * dgelu(load(p.auxType, p.aux, auxAt)));
  return x;
}

}  // namespace

void epilogue(const Problem& p, int64_t batch, const float* acc, const float*, const float*) {
  const bool rowSums = p.epilogue == SPAN_CUBLASLT_EPILOGUE_DGELU_BGRAD;
  double* sums = rowSums ? new double[p.m]() : nullptr;
  for (int64_t j = 0; j < p.n; j++)
    for (int64_t i = 0; i < p.m; i++) {
      const float x = element(p, batch, i, j, acc[i + j * p.m]);
      if (sums) sums[i] += x;
      store(p.D.type, p.d, batch * p.D.stride + i + j * p.D.ld, x);
    }
  biasGrad(p, batch, sums);
  delete[] sums;
}

}  // namespace span_lt
