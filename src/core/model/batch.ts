import * as tf from '@tensorflow/tfjs'
import type {MaskedExample} from '../data/masked.js'
import {SpanError} from '../stream/errors.js'
import {maxOf} from '../util/arrays.js'

// A masked example record is parsed and checked in data/ (docs/formats.md#masked-examples).
export {type MaskedExample, toMaskedExample} from '../data/masked.js'

/** The encoder's inputs of a padded batch on the host, row-major [B, T]: what every task's batch has. */
export interface EncoderHostBatch {
  B: number
  T: number
  ids: Int32Array // [B·T]
  segments: Int32Array // [B·T]
  mask: Float32Array // [B·T] 1 real, 0 padding
}

/**
 * A collated batch on the host, flattened: every position index is b·T + t, so heads
 * gather rows of the encoder output reshaped to [B·T, H].
 */
export interface HostBatch extends EncoderHostBatch {
  mlmPos: Int32Array // [Nm] flat positions of MLM targets
  mlmLabels: Int32Array // [Nm] original ids
  sboLeft: Int32Array // [Ns] flat position of s−1
  sboRight: Int32Array // [Ns] flat position of e+1
  sboRel: Int32Array // [Ns] i − s, < max_targets
  sboLabels: Int32Array // [Ns] original ids
  nextLabels: Int32Array | null // [B] 0 = B follows A, 1 = random (HF next_sentence_label)
  /** the real target counts when the target arrays are padded (padTargets); absent: their lengths */
  targets?: {mlm: number; sbo: number}
}

export interface CollateOptions {
  padId: number
  /** SBO targets per span (the reference truncates longer spans' SBO targets) */
  maxTargets: number
  /** pad to this length instead of the batch's longest example */
  length?: number
  /** the model's max_position_embeddings */
  maxPositions: number
}

/** Pads a list of masked examples into one batch (see HostBatch). */
export function collate(examples: MaskedExample[], o: CollateOptions): HostBatch {
  if (examples.length === 0) throw new SpanError('cannot collate an empty batch')
  const longest = maxOf(examples.map((e) => e.ids.length))
  const T = o.length ?? longest
  if (longest > T) throw new SpanError(`an example of ${longest} tokens does not fit the batch length ${T}`)
  if (T > o.maxPositions) throw new SpanError(`batch length ${T} exceeds the model's ${o.maxPositions} positions`)
  const B = examples.length
  const ids = new Int32Array(B * T).fill(o.padId)
  const segments = new Int32Array(B * T)
  const mask = new Float32Array(B * T)
  const mlm = {pos: [] as number[], labels: [] as number[]}
  const sbo = {left: [] as number[], right: [] as number[], rel: [] as number[], labels: [] as number[]}
  examples.forEach((ex, b) => {
    const base = b * T
    ex.ids.forEach((id, t) => {
      ids[base + t] = id
      segments[base + t] = ex.segments?.[t] ?? 0
      mask[base + t] = 1
    })
    for (const [pos, orig] of ex.targets) {
      mlm.pos.push(base + pos)
      mlm.labels.push(orig)
    }
    addSboTargets(ex, base, o.maxTargets, sbo)
  })
  const hasNext = examples.every((e) => typeof e.next === 'boolean')
  return {
    B, T, ids, segments, mask,
    mlmPos: Int32Array.from(mlm.pos), mlmLabels: Int32Array.from(mlm.labels),
    sboLeft: Int32Array.from(sbo.left), sboRight: Int32Array.from(sbo.right),
    sboRel: Int32Array.from(sbo.rel), sboLabels: Int32Array.from(sbo.labels),
    nextLabels: hasNext ? Int32Array.from(examples, (e) => (e.next ? 0 : 1)) : null,
  }
}

/**
 * SBO targets of one example (SpanBERT §3.2, reference `span_masking` with endpoints
 * 'external'): a span (s, e) counts only when its outer boundaries s−1 and e+1 are real
 * tokens, not [CLS] (position 0) nor [SEP] (position n−1), i.e. 2 ≤ s and e ≤ n−3; such
 * spans get MLM only. Like the reference (`pad_to_len` cuts each pair's target list to
 * max_pair_targets), only the first maxTargets tokens of a longer span are SBO targets.
 */
function addSboTargets(
  ex: MaskedExample, base: number, maxTargets: number,
  out: {left: number[]; right: number[]; rel: number[]; labels: number[]},
): void {
  const n = ex.ids.length
  const orig = new Map(ex.targets)
  for (const [s, e] of ex.spans) {
    if (s - 1 < 1 || e + 1 > n - 2) continue
    for (let i = s; i <= e && i - s < maxTargets; i++) {
      const label = orig.get(i)
      if (label === undefined) throw new SpanError(`span [${s}, ${e}] covers position ${i}, which is not a target`)
      out.left.push(base + s - 1)
      out.right.push(base + e + 1)
      out.rel.push(i - s)
      out.labels.push(label)
    }
  }
}

/**
 * The batch with its MLM and SBO target arrays padded to `rows` entries each (position 0, label
 * −1: rows the cuda cross-entropy scores 0, with no gradient), the real counts kept in `targets`,
 * so that every batch of a shape does the same device work and a graphed step replays
 * (docs/cuda-backend.md, "One step as a CUDA Graph"). A batch with more targets than `rows` comes
 * back as it is (its own shape: correct, not replayed).
 */
export function padTargets(h: HostBatch, rows: number): HostBatch {
  const [nm, ns] = [h.mlmPos.length, h.sboLabels.length]
  if (nm > rows || ns > rows) return h
  const pad = (a: Int32Array, fill: number) => {
    const o = new Int32Array(rows).fill(fill) // [rows]
    o.set(a)
    return o
  }
  const sbo = {sboLeft: pad(h.sboLeft, 0), sboRight: pad(h.sboRight, 0), sboRel: pad(h.sboRel, 0), sboLabels: pad(h.sboLabels, -1)}
  return {...h, mlmPos: pad(h.mlmPos, 0), mlmLabels: pad(h.mlmLabels, -1), ...sbo, targets: {mlm: nm, sbo: ns}}
}

/** The batch as tensors; dispose with disposeBatch. */
export interface Batch {
  B: number
  T: number
  ids: tf.Tensor2D // [B, T] int32
  segments: tf.Tensor2D // [B, T] int32
  mask: tf.Tensor2D // [B, T] float32
  mlmPos: tf.Tensor1D // [Nm] int32
  mlmLabels: tf.Tensor1D // [Nm] int32
  sboLeft: tf.Tensor1D // [Ns] int32
  sboRight: tf.Tensor1D // [Ns] int32
  sboRel: tf.Tensor1D // [Ns] int32
  sboLabels: tf.Tensor1D // [Ns] int32
  nextLabels: tf.Tensor1D | null // [B] int32
  /** real targets (the tensors may hold more rows: padding labelled −1, padTargets) */
  nMlm: number
  nSbo: number
}

export function toTensors(h: HostBatch): Batch {
  const i1 = (a: Int32Array): tf.Tensor1D => tf.tensor1d(a, 'int32')
  return {
    B: h.B, T: h.T,
    ids: tf.tensor2d(h.ids, [h.B, h.T], 'int32'),
    segments: tf.tensor2d(h.segments, [h.B, h.T], 'int32'),
    mask: tf.tensor2d(h.mask, [h.B, h.T], 'float32'),
    mlmPos: i1(h.mlmPos), mlmLabels: i1(h.mlmLabels),
    sboLeft: i1(h.sboLeft), sboRight: i1(h.sboRight), sboRel: i1(h.sboRel), sboLabels: i1(h.sboLabels),
    nextLabels: h.nextLabels ? i1(h.nextLabels) : null,
    nMlm: h.targets?.mlm ?? h.mlmPos.length, nSbo: h.targets?.sbo ?? h.sboLeft.length,
  }
}

export function disposeBatch(b: Batch): void {
  tf.dispose([b.ids, b.segments, b.mask, b.mlmPos, b.mlmLabels, b.sboLeft, b.sboRight, b.sboRel, b.sboLabels])
  if (b.nextLabels) b.nextLabels.dispose()
}
