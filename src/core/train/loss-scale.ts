import {type LossScaleOptions, type LossScaleState, LossScaler} from '../engine/cuda/loss-scale.js'
import {SpanError} from '../stream/errors.js'
import type {AdamW} from './optim.js'

/**
 * Dynamic loss scaling's settings, checkpoint state and metrics for the training loops (issue 35;
 * the device side: engine/cuda/loss-scale.ts, loss_scale.cu). Defaults follow fairseq as SpanBERT
 * trained with it (facebookresearch/SpanBERT@0670d8b6, pretraining/fairseq/options.py
 * --fp16-init-scale 2^7, --min-loss-scale 1e-4; optim/fp16_optimizer.py DynamicLossScaler: factor 2,
 * window 2^14 / world size / update_freq). torch.amp.GradScaler differs in init_scale (2^16),
 * growth_interval (2000) and has no minimum; its backoff_factor 0.5 is fairseq's 1/factor.
 */
export interface LossScaleFlags {
  'loss-scale-init': number
  'loss-scale-growth': number
  'loss-scale-backoff': number
  /** null: fairseq's 2^14 / (processes × --accumulate) */
  'loss-scale-window': number | null
  'loss-scale-min': number
}

export const LOSS_SCALE_DEFAULTS: LossScaleFlags = {
  'loss-scale-init': 128,
  'loss-scale-growth': 2,
  'loss-scale-backoff': 0.5,
  'loss-scale-window': null,
  'loss-scale-min': 1e-4,
}

/** The first setting out of range and what it must be (for the caller's error in its own words), or null. */
export function lossScaleProblem(c: LossScaleFlags): [keyof LossScaleFlags, string] | null {
  const positive = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v > 0
  const w = c['loss-scale-window']
  const checks: [keyof LossScaleFlags, boolean, string][] = [
    ['loss-scale-init', positive(c['loss-scale-init']), 'a positive number'],
    ['loss-scale-growth', positive(c['loss-scale-growth']) && c['loss-scale-growth'] > 1, 'a number above 1'],
    ['loss-scale-backoff', positive(c['loss-scale-backoff']) && c['loss-scale-backoff'] < 1, 'a number between 0 and 1'],
    ['loss-scale-window', w === null || (Number.isInteger(w) && w >= 1 && w < 2 ** 31), 'a whole number of steps ≥ 1'],
    ['loss-scale-min', positive(c['loss-scale-min']), 'a positive number'],
  ]
  const bad = checks.find(([, ok]) => !ok)
  return bad ? [bad[0], bad[2]] : null
}

/** A config's settings, the defaults where it has none (a run saved before loss scaling had flags). */
export function lossScaleSettings(c: Partial<Record<keyof LossScaleFlags, number | null>>): LossScaleFlags {
  const pick = <K extends keyof LossScaleFlags>(k: K) => (c[k] ?? LOSS_SCALE_DEFAULTS[k]) as LossScaleFlags[K]
  return {
    'loss-scale-init': pick('loss-scale-init'),
    'loss-scale-growth': pick('loss-scale-growth'),
    'loss-scale-backoff': pick('loss-scale-backoff'),
    'loss-scale-window': pick('loss-scale-window'),
    'loss-scale-min': pick('loss-scale-min'),
  }
}

/** The scaler's settings for a run over `world` processes with `accumulate` micro-batches a step. */
export function lossScaleOptions(c: LossScaleFlags, world: number, accumulate: number): LossScaleOptions {
  const window = c['loss-scale-window'] ?? Math.max(1, Math.round(2 ** 14 / world / accumulate)) // fairseq's float window, to whole steps
  return {init: c['loss-scale-init'], growth: c['loss-scale-growth'], backoff: c['loss-scale-backoff'], window, min: c['loss-scale-min']}
}

/** Gives `opt` a fresh loss scaler when the run computes in fp16 (a resumed one replaces it: restoreScaler). */
export function attachScaler(opt: AdamW, precision: string, o: LossScaleOptions): void {
  if (precision !== 'fp16') return
  opt.scaler?.dispose()
  opt.scaler = new LossScaler(o, [opt.opts.beta1, opt.opts.beta2], {scale: o.init, iter: 0, lastOverflow: -1, skipped: 0, t: opt.step, flags: 0})
}

const KEYS = ['loss_scale', 'loss_scale_iter', 'loss_scale_last_overflow', 'loss_scale_skipped', 'loss_scale_flags'] as const

/** optimizer.safetensors metadata for the scaler's state, and AdamW's applied updates as `step` (none without a scaler). */
export function scalerMetadata(opt: AdamW): Record<string, string> {
  if (!opt.scaler) return {}
  const s = opt.scaler.read()
  const values = [s.scale, s.iter, s.lastOverflow, s.skipped, s.flags]
  return {step: String(s.t), ...Object.fromEntries(KEYS.map((k, i) => [k, String(values[i])]))}
}

/**
 * A checkpoint's scaler state into `opt.scaler` (after opt.load: AdamW's step is the updates
 * applied); a checkpoint without one (saved at fp32 or bf16) starts a fresh scaler at that step.
 */
export function restoreScaler(opt: AdamW, meta: Record<string, string>, path: string): void {
  if (!opt.scaler) return
  const o = opt.scaler.opts
  let s: LossScaleState = {scale: o.init, iter: 0, lastOverflow: -1, skipped: 0, t: opt.step, flags: 0}
  if (meta.loss_scale !== undefined) {
    const v = KEYS.map((k) => Number(meta[k]))
    if (!(v[0] > 0) || !v.slice(1).every(Number.isInteger)) throw new SpanError(`${path}: metadata has no valid loss scaler state (${KEYS.join(', ')})`)
    s = {scale: v[0], iter: v[1], lastOverflow: v[2], skipped: v[3], t: opt.step, flags: v[4]}
  }
  opt.scaler.dispose()
  opt.scaler = new LossScaler(o, [opt.opts.beta1, opt.opts.beta2], s)
}

/**
 * The metrics record's fields (loss_scale: the scale the next step uses; skipped_steps: overflowed
 * steps so far), read when a step is logged; {} without a scaler. An overflow that took the scale to
 * --loss-scale-min or below stops the run here, as fairseq's FloatingPointError does.
 */
export function scalerFields(opt: AdamW, step: number): Record<string, number> {
  if (!opt.scaler) return {}
  const s = opt.scaler.read()
  if (s.flags & 1)
    throw new SpanError(
      `the fp16 loss scale fell to ${s.scale} by step ${step}, at or below --loss-scale-min ${opt.scaler.opts.min}: the loss is probably exploding; lower the learning rate, clip gradients or use --precision bf16 or fp32`,
    )
  return {loss_scale: s.scale, skipped_steps: s.skipped}
}
