// Node-API functions about the matrix products (addon_gemm.cc), registered by addon.cc.
#pragma once
#include <node_api.h>

namespace span_gemm_napi {

/** Adds {gemm, gemmIsa, gemmPath, gemmPaths, gemmImpl: {fp32, bf16}, gemmFallbacks, bf16, bf16Convert} to info()'s object. */
void addInfo(napi_env env, napi_value info);
/** setGemmPath("onednn" | "blas" | "builtin") → whether this build has that path (else nothing changes). */
napi_value SetGemmPath(napi_env env, napi_callback_info info);
/** toBf16(x: Float32Array, out: Uint16Array, scalar: boolean): bf16.h's conversion (scalar: the reference loop). */
napi_value ToBf16(napi_env env, napi_callback_info info);
/** gemmLd(a, b, c, transA, transB, M, N, K, lda, ldb, ldc, beta): gemm.h's gemm_ld, for its tests. */
napi_value GemmLd(napi_env env, napi_callback_info info);
/** matmulBeta(a, b, c, batchA, batchB, M, N, K, transA, transB, beta): batch_matmul with beta (0 or 1), for its tests. */
napi_value MatmulBeta(napi_env env, napi_callback_info info);
/** peak() → {ghz, fmaLatency, fp32PerCycle, bf16PerCycle, vectorBits} of one core (peak.h). */
napi_value MeasurePeak(napi_env env, napi_callback_info info);
napi_value MeasurePeakAll(napi_env env, napi_callback_info info);

}  // namespace span_gemm_napi
