// SpanAttention(Grad)'s softmax on the cuda backend, simple form (issue 20): the score and context
// products are cuBLASLt GEMMs batched over heads, this file does the row work between them, and
// dropout.cu drops probabilities with the same (seed, flat index into probs) bits as native. As
// native/src/fused.cc attention_forward / attention_backward (masked_softmax_rows and the softmax
// backward) and fused-composite.ts attention / attentionGrad:
//   forward:  S = Q_h·K_hᵀ (GEMM) → P = softmax(S·scale + mask[b]) (here) → ctx_h = dropout(P)·V_h (GEMM)
//   backward: dV = dropout(P)ᵀ·dctx, dPd = dctx·Vᵀ (GEMMs) → dP = dropout(dPd) (dropout.cu, same mask)
//             → dS = P ⊙ (dP − Σ_s dP ⊙ P)·scale (here) → dQ = dS·K, dK = dSᵀ·Q (GEMMs)
// It materialises P [B, A, T, T] for the backward pass; issue 21's fused attention replaces this
// file, the GEMMs and the probabilities' dropout by one online-softmax kernel each way that keeps
// only the row log-sum-exp (no [B, A, T, T] tensor).
//
// CPU reference per row (b, h, t) of T scores, mask [B, T] additive (one value per key):
//   u[s] = S[s]·scale + mask[b, s];  P[s] = exp(u[s] − max u) · (1 / Σ exp(u − max u))
//   dS[s] = P[s]·(dP[s] − Σ_s' dP[s']·P[s'])·scale
// Launch: one block per row (grid-stride over B·A·T rows), whole warps (blockDim.x a multiple of
// 32, ≤ 1024); sums are fixed trees (deterministic). probs may be scores, dscores may be dprobs.

// Repeated on purpose in cross_entropy.cu (ce_block_reduce): each .cu is compiled alone by NVRTC, with no header of span's to share.
static __device__ float att_block_reduce(float v, float* red, bool isMax) {
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = isMax ? fmaxf(v, w) : v + w;
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  __syncthreads();
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = lane < warps ? red[lane] : (isMax ? red[0] : 0.0f);
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = isMax ? fmaxf(v, w) : v + w;
  }
  return v;
}

// scores, probs [B·A, T, T]; mask [B, T]. T ≥ 1.
extern "C" __global__ void span_attention_softmax_f32(const float* scores, const float* __restrict__ mask, float* probs, long long B, int A,
                                                      int T, float scale) {
  __shared__ float red[32];
  const long long rows = B * A * T;
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* sr = scores + r * T;
    const float* mr = mask + (r / ((long long)A * T)) * T;
    float mx = sr[0] * scale + mr[0];
    for (int s = threadIdx.x; s < T; s += blockDim.x) mx = fmaxf(mx, sr[s] * scale + mr[s]);
    mx = att_block_reduce(mx, red, true);
    float sum = 0.0f;
    for (int s = threadIdx.x; s < T; s += blockDim.x) sum += expf(sr[s] * scale + mr[s] - mx);
    const float inv = 1.0f / att_block_reduce(sum, red, false);
    float* pr = probs + r * T;
    for (int s = threadIdx.x; s < T; s += blockDim.x) pr[s] = expf(sr[s] * scale + mr[s] - mx) * inv;
  }
}

// probs, dprobs, dscores [rows, T] (rows = B·A·T).
extern "C" __global__ void span_attention_softmax_backward_f32(const float* __restrict__ probs, const float* dprobs, float* dscores,
                                                               long long rows, int T, float scale) {
  __shared__ float red[32];
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *pr = probs + r * T, *gr = dprobs + r * T;
    float dot = 0.0f;
    for (int s = threadIdx.x; s < T; s += blockDim.x) dot += gr[s] * pr[s];
    dot = att_block_reduce(dot, red, false);
    for (int s = threadIdx.x; s < T; s += blockDim.x) dscores[r * T + s] = pr[s] * (gr[s] - dot) * scale;
  }
}
