// Node-API functions about the matrix products (addon_gemm.cc), registered by addon.cc.
#pragma once
#include <node_api.h>

namespace span_gemm_napi {

/** Adds {gemm, gemmPath, gemmPaths, gemmImpl: {fp32, bf16}, bf16, bf16Convert} to info()'s object. */
void addInfo(napi_env env, napi_value info);
/** setGemmPath("onednn" | "blas" | "builtin") → whether this build has that path (else nothing changes). */
napi_value SetGemmPath(napi_env env, napi_callback_info info);
/** toBf16(x: Float32Array, out: Uint16Array, scalar: boolean): bf16.h's conversion (scalar: the reference loop). */
napi_value ToBf16(napi_env env, napi_callback_info info);
/** peak() → {ghz, fmaLatency, fp32PerCycle, bf16PerCycle, vectorBits} of one core (peak.h). */
napi_value MeasurePeak(napi_env env, napi_callback_info info);

}  // namespace span_gemm_napi
