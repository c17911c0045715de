import * as tf from '@tensorflow/tfjs'
import type {CudaBackend} from './backend.js'

/**
 * Dynamic loss scaling for --precision fp16 on the cuda backend (issue 35): the scale and the
 * scaler's counters live on the device and are updated there by native/cuda/kernels/loss_scale.cu
 * (one thread, between the squared-norm and the AdamW launches of optimiser.ts), so a step reads
 * nothing back and a CUDA Graph replays it. The policy (which reference each setting follows:
 * docs/cuda-backend.md, "fp16 and dynamic loss scaling"):
 * - the loss is multiplied by `scale` before the backward pass (optimiserStep);
 * - an inf or NaN squared gradient norm is an overflow: the step changes nothing (weights, AdamW
 *   moments and AdamW's step), the scale is multiplied by `backoff`, the step is counted as skipped;
 * - after `window` clean steps since the last overflow (fairseq's (iter − lastOverflow) mod window),
 *   the scale is multiplied by `growth`;
 * - otherwise the gradients are unscaled (÷ scale) before clipping, in the same factor AdamW reads.
 */
export interface LossScaleOptions {
  /** the first scale (fairseq --fp16-init-scale 2^7; torch GradScaler init_scale 2^16) */
  init: number
  /** ×growth after `window` clean steps (both: 2) */
  growth: number
  /** ×backoff on an overflow (torch backoff_factor 0.5; fairseq divides by its growth factor) */
  backoff: number
  /** clean steps between growths (fairseq 2^14 / world / accumulate; torch growth_interval 2000) */
  window: number
  /** an overflow that takes the scale to this or below stops the run (fairseq --min-loss-scale 1e-4; torch: none) */
  min: number
}

/** The scaler's state as checkpoints keep it (optimizer.safetensors metadata, train/state.ts). */
export interface LossScaleState {
  scale: number
  /** steps taken through the scaler, skipped ones included (fairseq's _iter) */
  iter: number
  /** the iter of the last overflow (−1: none yet; fairseq's _last_overflow_iter) */
  lastOverflow: number
  /** steps skipped so far */
  skipped: number
  /** AdamW updates applied (its bias-correction step): iter − skipped since the run began */
  t: number
  /** bit 0: an overflow took the scale to --loss-scale-min or below */
  flags: number
}

const WORDS = 12 // int32 [12]: iter, lastOverflow, skipped, t, flags, pad, β1 (f64), β2 (f64), pad ×2

/** The device side: the scale (float32 [1]) the loss is multiplied by, and the counters (int32 [12]); owns both. */
export class LossScaler {
  readonly scale: tf.Variable
  private readonly state: tf.Variable
  /** iter as the host knows it without reading the device: every step passes through the scaler once */
  hostIter: number

  constructor(
    readonly opts: LossScaleOptions,
    betas: [number, number],
    s: LossScaleState = {scale: opts.init, iter: 0, lastOverflow: -1, skipped: 0, t: 0, flags: 0},
  ) {
    const words = new Int32Array(WORDS)
    words.set([s.iter, s.lastOverflow, s.skipped, s.t, s.flags])
    new Float64Array(words.buffer, 24, 2).set(betas)
    this.scale = tf.variable(tf.scalar(s.scale, 'float32'), false)
    this.state = tf.variable(tf.tensor1d(words, 'int32'), false)
    this.hostIter = s.iter
  }

  /**
   * loss_scale.cu's launch: from Σ g² of the scaled gradients at `sumsq` (overwritten with the unscaled
   * one), the AdamW factor at `factor` (÷ scale and clipped to maxNorm, or NaN: skip) and the bias
   * corrections at `bc` for this step's t. Stream-ordered after the norm, before AdamW.
   */
  launch(backend: CudaBackend, at: {sumsq: number; factor: number; bc: number}, maxNorm: number): void {
    const {growth, backoff, window, min} = this.opts
    backend.launch(
      'loss_scale',
      'span_loss_scale_step',
      [1, 1, 1],
      [1, 1, 1],
      [
        {ptr: at.sumsq},
        {ptr: this.scale},
        {ptr: this.state},
        {ptr: at.factor},
        {ptr: at.bc},
        {f32: maxNorm},
        {f32: growth},
        {f32: backoff},
        {i32: window},
        {f32: min},
      ],
    )
    this.hostIter += 1
  }

  /** The state now (one read of the device: when a step is logged or saved, never during one). */
  read(): LossScaleState {
    const [scale] = this.scale.dataSync()
    const w = this.state.dataSync()
    return {scale, iter: w[0], lastOverflow: w[1], skipped: w[2], t: w[3], flags: w[4]}
  }

  dispose(): void {
    tf.dispose([this.scale, this.state])
  }
}
