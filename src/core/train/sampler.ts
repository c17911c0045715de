import {Rng} from '../data/rng.js'

/** murmur3's finaliser: a 32-bit mix in which every input bit affects every output bit. */
function fmix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/**
 * A generator that depends only on (seed, …parts): the mask of example i in epoch e, the order of
 * epoch e. Nothing about it is carried from step to step, so a resumed run draws the same numbers
 * as an uninterrupted one. Parts may be up to 2^53 (indices are split into two words).
 */
export function deriveRng(seed: number, ...parts: number[]): Rng {
  let h = fmix32((seed >>> 0) ^ 0x9e3779b9)
  for (const p of parts) {
    h = fmix32(h ^ fmix32((p >>> 0) + 0x632be5ab))
    h = fmix32(h ^ fmix32(Math.floor(p / 4294967296) + 0x85157af5))
  }
  const s = new Uint32Array(4)
  for (let i = 0; i < 4; i++) s[i] = fmix32(h + Math.imul(i + 1, 0x9e3779b9))
  if ((s[0] | s[1] | s[2] | s[3]) === 0) s[0] = 1 // xoshiro's one forbidden state
  return new Rng(s)
}

/** Stream tags for deriveRng, so the order, the masks and the eval masks never share numbers. */
export const STREAM = {order: 1, mask: 2, evalMask: 3, dropout: 4} as const

/** Where the sampler stands: saved in the training state. */
export interface SamplerState {
  epoch: number
  cursor: number // examples of this epoch already drawn
}

/**
 * Draws examples uniformly at random without replacement within an epoch (a fresh seeded
 * permutation per epoch), then starts the next epoch. The permutation is a function of
 * (seed, epoch), so the state is two numbers. Memory: 4 bytes per example.
 */
export class EpochSampler {
  private epochNo = 0
  private cursorNo = 0
  private perm: Uint32Array | null = null

  constructor(readonly size: number, readonly seed: number) {
    if (size < 1) throw new RangeError('cannot sample from an empty data set')
  }

  /** The next example: its index in the file and the epoch it is drawn in. */
  next(): {index: number; epoch: number} {
    if (this.cursorNo === this.size) {
      this.epochNo++
      this.cursorNo = 0
      this.perm = null
    }
    this.perm ??= permutation(this.size, deriveRng(this.seed, STREAM.order, this.epochNo))
    return {index: this.perm[this.cursorNo++], epoch: this.epochNo}
  }

  state(): SamplerState {
    return {epoch: this.epochNo, cursor: this.cursorNo}
  }

  restore(s: SamplerState): void {
    if (!Number.isInteger(s.epoch) || !Number.isInteger(s.cursor) || s.epoch < 0 || s.cursor < 0 || s.cursor > this.size) {
      throw new RangeError(`sampler state ${JSON.stringify(s)} does not fit ${this.size} examples`)
    }
    this.epochNo = s.epoch
    this.cursorNo = s.cursor
    this.perm = null
  }
}

/** A uniformly random permutation of 0..n−1 (Fisher–Yates). */
export function permutation(n: number, rng: Rng): Uint32Array {
  const p = new Uint32Array(n)
  for (let i = 0; i < n; i++) p[i] = i
  for (let i = n - 1; i > 0; i--) {
    const j = rng.int(i + 1)
    const t = p[i]
    p[i] = p[j]
    p[j] = t
  }
  return p
}

/**
 * The order of epoch e over n units: a seeded permutation, a function of (seed, epoch) only, so
 * a resumed run continues the same order. With `lengths`, batching by length as Hugging Face's
 * LengthGroupedSampler does (transformers trainer_pt_utils.get_length_grouped_indices): the
 * permutation is cut into mega-batches of 50 steps' worth of units, each sorted by length,
 * longest first (ties in permutation order), so the batches within hold similar lengths and
 * pad little; still seeded and reproducible.
 */
export function epochOrder(n: number, seed: number, epoch: number, lengths: ((i: number) => number) | null, perStep: number): Uint32Array {
  const perm = permutation(n, deriveRng(seed, STREAM.order, epoch))
  if (!lengths) return perm
  const mega = Math.max(1, perStep * 50)
  for (let at = 0; at < n; at += mega) {
    const part = Array.from(perm.subarray(at, Math.min(n, at + mega)))
    const rank = new Map(part.map((u, k) => [u, k]))
    part.sort((a, b) => lengths(b) - lengths(a) || (rank.get(a) as number) - (rank.get(b) as number))
    perm.set(part, at)
  }
  return perm
}
