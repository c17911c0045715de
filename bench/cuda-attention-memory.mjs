#!/usr/bin/env node
// Peak allocator bytes of a real `base`-shaped training step on the cuda backend with the fused
// attention (flash_attention_*.cu: no [B, A, T, T] tensor) and with the simple path (probs saved,
// dropout(P), dP as transients), at fp32 and bf16, against the figure the T×T tensors take (issue
// 21, "What it must show": base 16×512 before and after fused attention). Each measurement is one
// steady-state optimiser step (bench/lib/cuda-step-memory.mjs: forward with dropout, backward,
// clipping, AdamW; m and v already live) read from the caching allocator as the metrics NDJSON's
// peak_device_bytes reads it. On the stand-in device a base step at batch 16 × 512 would take hours,
// so the script measures the batches given (default 1 and 2) and scales to --scale-to (16) by the
// per-sample slope of the last two: peak(16) = peak(B₂) + (16 − B₂)·(peak(B₂) − peak(B₁))/(B₂ − B₁),
// printed as scaled. The decoders take the path the scaled batch takes (chunked past CHUNK_ABOVE
// logit floats: base 16×512 chunks, 1×512 would not), so that the slope is the one batch 16 has.
// Plain JS over dist/ (npm run build first):
//   SPAN_CUDA_LIBS=$(npm run -s standins | tail -1) node bench/cuda-attention-memory.mjs \
//     [--preset base] [--T 512] [--batches 1,2] [--layers 12] [--precision fp32,bf16] [--scale-to 16]
// On a GPU: --batches 16 measures batch 16 itself (then nothing is scaled).
// Prints one JSON line per (precision, attention, batch) and one summary line per precision.
import {CHUNK_ABOVE, chunked} from '../dist/core/model/decoder-loss.js'
import {MiB, cudaOrSkip, examples, measureStep, opt, tensorBatch} from './lib/cuda-step-memory.mjs'
import {V} from './lib/synthetic.mjs'
import {disposeBatch} from '../dist/core/model/batch.js'

const preset = opt('--preset', 'base')
const T = Number(opt('--T', 512))
const batches = opt('--batches', '1,2').split(',').map(Number)
const layers = Number(opt('--layers', 12))
const precisions = opt('--precision', 'fp32,bf16').split(',')
const scaleTo = Number(opt('--scale-to', 16))

await cudaOrSkip('cuda-attention-memory')
// The decoder path batch scaleTo takes (its MLM target count at this T; SBO's is about the same).
const big = tensorBatch(examples(scaleTo, T))
const chunkAbove = chunked(Math.max(big.nMlm, big.nSbo), V) ? 0 : Infinity
disposeBatch(big)

for (const precision of precisions) {
  const rows = {}
  let A = 0
  for (const [mode, flash] of [
    ['simple', false],
    ['flash', true],
  ]) {
    for (const B of batches) {
      const r = measureStep({preset, B, T, layers, precision, flash, chunkAbove})
      A = r.config.num_attention_heads
      rows[`${mode}${B}`] = r
      console.log(
        JSON.stringify({
          bench: 'cuda_attention_memory',
          precision,
          attention: mode,
          preset,
          batch: `${B}x${T}`,
          layers,
          decoders: chunkAbove === 0 ? 'chunked' : 'whole',
          targets: [r.counts.nMlm, r.counts.nSbo],
          live_before_mib: MiB(r.before),
          peak_mib: MiB(r.peak),
          step_above_live_mib: MiB(r.peak - r.before),
          saved_at_backward_mib: MiB(r.saved),
          loss: +r.loss.toFixed(4),
          seconds: +r.seconds.toFixed(1),
        }),
      )
    }
  }
  const tt = (B) => B * A * T * T * 4 // one [B, A, T, T] fp32 tensor
  const [b1, b2] = batches.slice(-2)
  const scaled = (mode, key) => {
    const at = (B) => (key === 'peak' ? rows[`${mode}${B}`].peak : rows[`${mode}${B}`].saved)
    if (batches.length < 2) return at(b2 ?? b1)
    return at(b2) + ((scaleTo - b2) * (at(b2) - at(b1))) / (b2 - b1)
  }
  const last = batches[batches.length - 1]
  console.log(
    JSON.stringify({
      bench: 'cuda_attention_memory_summary',
      precision,
      batch: `${last}x${T}`,
      layers,
      peak_saved_by_flash_mib: MiB(rows[`simple${last}`].peak - rows[`flash${last}`].peak),
      saved_activations_saved_by_flash_mib: MiB(rows[`simple${last}`].saved - rows[`flash${last}`].saved),
      tt_tensor_mib: MiB(tt(last)),
      tt_saved_expected_mib: MiB((layers + 1) * tt(last)), // L saved probs + the zeros tfjs makes as the gradient of a layer's probs output
      // at the peak (the backward pass's end): the L saved probs and the L zeros tfjs made as the gradient of each
      // layer's probs output (tfjs' backpropagateGradients keeps every gradient it made until the pass ends)
      tt_peak_expected_mib: MiB(2 * layers * tt(last)),
      per_sample_peak_slope_mib:
        batches.length < 2 ? null : Object.fromEntries(['simple', 'flash'].map((m) => [m, MiB((rows[`${m}${b2}`].peak - rows[`${m}${b1}`].peak) / (b2 - b1))])),
      [`scaled_to_${scaleTo}x${T}`]:
        batches.length < 2
          ? null
          : {
              scaled: true,
              peak_simple_mib: MiB(scaled('simple', 'peak')),
              peak_flash_mib: MiB(scaled('flash', 'peak')),
              saved_simple_mib: MiB(scaled('simple', 'saved')),
              saved_flash_mib: MiB(scaled('flash', 'saved')),
              tt_tensor_mib: MiB(tt(scaleTo)),
              tt_peak_expected_mib: MiB(2 * layers * tt(scaleTo)),
            },
      chunk_above: CHUNK_ABOVE,
    }),
  )
}
