#!/usr/bin/env node
// The MLM/SBO decoders' logits [N, V] kept whole for the backward pass or scored in chunks and made
// again in the backward pass (src/core/model/decoder-loss.ts; the default chunks past CHUNK_ABOVE
// logit floats), on the cuda backend (issue 21 item 3: "so the [N, V] logits need not be kept for
// the backward pass (or are kept in bf16; measure)"). For each shape, one steady-state optimiser
// step with the decoders whole (chunkAbove ∞) and one chunked (chunkAbove 0), read from the caching
// allocator (bench/lib/cuda-step-memory.mjs): the step's peak and the bytes live when the forward
// pass has made the loss, against 4·N·V bytes per decoder's fp32 logits; and the decoder GEMM
// FLOPs the chunked path adds (one more [n, H]·[H, V] product per chunk: 2·N·V·H a decoder) against
// the step's matrix FLOPs (bench/lib/step-flops.mjs) at the model's full depth. The logits do not
// depend on the encoder's depth, so --layers (default 1) only saves emulator time; the FLOPs are
// counted for the preset's own depth. Plain JS over dist/:
//   SPAN_CUDA_LIBS=$(npm run -s standins | tail -1) node bench/cuda-decoder-memory.mjs \
//     [--preset base] [--shapes 32x128,16x512] [--layers 1] [--precision bf16]
import {CHUNK_ABOVE, chunkRows, chunked} from '../dist/core/model/decoder-loss.js'
import {presetConfig} from '../dist/core/model/config.js'
import {MiB, cudaOrSkip, measureStep, opt} from './lib/cuda-step-memory.mjs'
import {stepFlops} from './lib/step-flops.mjs'
import {V} from './lib/synthetic.mjs'

const preset = opt('--preset', 'base')
const shapes = opt('--shapes', '32x128,16x512').split(',')
const layers = Number(opt('--layers', 1))
const precision = opt('--precision', 'bf16')

await cudaOrSkip('cuda-decoder-memory')
const full = presetConfig(preset, V)
const H = full.hidden_size
for (const shape of shapes) {
  const [B, T] = shape.split('x').map(Number)
  const r = {}
  for (const [path, chunkAbove] of [
    ['whole', Infinity],
    ['chunked', 0],
  ]) {
    r[path] = measureStep({preset, B, T, layers, precision, flash: true, chunkAbove})
    const x = r[path]
    console.log(
      JSON.stringify({
        bench: 'cuda_decoder_memory',
        precision,
        decoders: path,
        preset,
        batch: shape,
        layers,
        targets: [x.counts.nMlm, x.counts.nSbo],
        live_before_mib: MiB(x.before),
        peak_mib: MiB(x.peak),
        step_above_live_mib: MiB(x.peak - x.before),
        live_after_forward_mib: MiB(x.forward),
        loss: +x.loss.toFixed(4),
        seconds: +x.seconds.toFixed(1),
      }),
    )
  }
  const {nMlm, nSbo} = r.whole.counts
  const logits = 4 * (nMlm + nSbo) * V // fp32 logits of both decoders
  const extra = 2 * (nMlm + nSbo) * V * H // the chunked path's second decoder GEMM
  const total = stepFlops(full, {...r.whole.counts}) // at the preset's depth
  console.log(
    JSON.stringify({
      bench: 'cuda_decoder_memory_summary',
      precision,
      batch: shape,
      targets: [nMlm, nSbo],
      default_path: chunked(Math.max(nMlm, nSbo), V) ? 'chunked' : 'whole',
      chunk_above_floats: CHUNK_ABOVE,
      chunk_rows: chunkRows(V),
      logits_fp32_mib: MiB(logits),
      logits_bf16_mib: MiB(logits / 2),
      peak_whole_minus_chunked_mib: MiB(r.whole.peak - r.chunked.peak),
      after_forward_whole_minus_chunked_mib: MiB(r.whole.forward - r.chunked.forward),
      recompute_gflop: +(extra / 1e9).toFixed(1),
      step_gflop: +((total + extra) / 1e9).toFixed(1),
      recompute_share: +(extra / (total + extra)).toFixed(4),
    }),
  )
}
