// Dynamic loss scaling on the device (issue 35, --precision fp16): one thread, launched between the
// multi-tensor squared-norm kernel and the multi-tensor AdamW of adamw_multi.cu, so that nothing of it
// is read on the host during a step and a CUDA Graph replays it (its arguments are the same every
// step; everything that changes is device data).
//
// The policy is fairseq's, as SpanBERT trained with it: DynamicLossScaler.update_scale and the
// overflow test of FP16Optimizer.clip_grad_norm (the gradient norm is inf or NaN) in
// facebookresearch/SpanBERT@0670d8b6, pretraining/fairseq/optim/fp16_optimizer.py; with
// torch.amp.GradScaler's separate backoff factor (fairseq divides by its growth factor: the same 0.5
// by default) and its rule of growing only while the scale stays finite:
//   overflow: scale *= backoff; lastOverflow = iter; skipped += 1; factor = NaN (adamw_multi.cu then
//             changes nothing: weights, moments and AdamW's step stay as they were); when the new
//             scale ≤ minScale, flag bit 0 (fairseq raises FloatingPointError "Minimum loss scale
//             reached"; span's loop reads the flag when it logs and stops the run)
//   clean:    if (iter − lastOverflow) mod window = 0: scale *= growth (when finite)
//             t += 1 (AdamW's step: skipped steps do not count, as neither reference calls
//             optimizer.step on them)
//             sumsq ← sumsq / scale_old² (the unscaled gradients' squared norm, for the log)
//             factor = min(1, maxNorm / (√sumsq + 1e-6)) / scale_old: unscale, then clip (torch's
//             clip_grad_norm_ on the unscaled gradients; 1 when maxNorm is inf)
//             bc = [1 − β1^t, 1 − β2^t] (f32, computed in double) for adamw_multi.cu
//   iter += 1
// sumsq on entry is Σ g² of the scaled gradients (adamw_multi.cu's span_multi_sum_squares_clip_f32,
// whose factor is overwritten here). lastOverflow starts at −1, so the first growth comes after
// `window` clean steps, as in fairseq.
//
// scale: float [1], the loss's multiplier (read by the backward pass, updated here).
// state (int32 [12], one device block; its host side: src/core/engine/cuda/loss-scale.ts):
//   [0] iter, [1] lastOverflow, [2] skipped steps, [3] t (updates applied), [4] flags, [5] unused,
//   [6..7] β1 (double), [8..9] β2 (double), [10..11] unused.

extern "C" __global__ void span_loss_scale_step(float* __restrict__ sumsq, float* __restrict__ scalep, int* __restrict__ state, float* __restrict__ factor,
                                                float* __restrict__ bc, float maxNorm, float growth, float backoff, int window, float minScale) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  const float scale = scalep[0], s2 = sumsq[0];
  const int iter = state[0];
  const bool overflow = (__float_as_uint(s2) & 0x7fffffffu) >= 0x7f800000u;  // inf or NaN (on the bits: immune to fast-math)
  float next = scale;
  if (overflow) {
    next = scale * backoff;
    state[1] = iter;
    state[2] += 1;
    if (next <= minScale) state[4] |= 1;
    factor[0] = __int_as_float(0x7fffffff);  // NaN: skip the update
  } else {
    if ((iter - state[1]) % window == 0) {
      const float grown = scale * growth;
      if ((__float_as_uint(grown) & 0x7fffffffu) < 0x7f800000u) next = grown;
    }
    const int t = state[3] + 1;
    state[3] = t;
    const float unscaled = (float)((double)s2 / ((double)scale * (double)scale));
    sumsq[0] = unscaled;
    const double coef = maxNorm / (sqrt((double)unscaled) + 1e-6);
    factor[0] = (float)((coef < 1.0 ? coef : 1.0) / (double)scale);
    const double* betas = (const double*)(state + 6);
    bc[0] = (float)(1.0 - pow(betas[0], (double)t));
    bc[1] = (float)(1.0 - pow(betas[1], (double)t));
  }
  scalep[0] = next;
  state[0] = iter + 1;
}
