/**
 * The memory plan of a pre-training run (README "Memory plan"; docs/algorithms.md#memory-plan):
 * how much memory a step of this model, micro-batch, sequence length and backend takes, made
 * before any tensor exists, so a run that cannot fit is refused at once and `--batch-size auto`
 * can choose the largest micro-batch that fits. Peak resident memory, in bytes, is modelled as
 *
 *   runtime + 4·(PARAM_COPIES·P + EMBED_COPIES·V·H) + 4·B·[ T·L·(ACT_H·H + ACT_I·I) + ATT·A·T²·L ] + decoders
 *
 * decoders = 4·B·LOGITS·(n_mlm + n_sbo)·V while a decoder's logits fit in CHUNK_ABOVE, else
 * 4·CHUNK_COPIES·CHUNK_FLOATS (model/decoder-loss.ts: the logits made and scored a chunk at a time);
 * plus, for NCCL data parallel on cuda (world > 1), 4·NCCL_GRAD_COPIES·P: the gradient buckets
 * packed and summed on the device (dist/nccl-device.ts); plus, on the native backend, its buffer
 * pool, POOL_SHARE·(activations + decoders) or SPAN_NATIVE_POOL_MB, at which the run caps it.
 *
 * P parameters (float32 weights, gradients, AdamW's two moments), V·H the word embeddings (whose
 * gradient comes from a gather and the tied decoders, made and summed in more copies); B rows of T tokens (the longest example of the
 * data, at most --max-len: batches are padded to their longest row); L layers of hidden size H,
 * feed-forward size I and A heads (the tensors the gradient tape keeps per token and layer, and
 * the attention probabilities and their dropout mask per head, none with native's flash attention,
 * which keeps a row's log-sum-exp instead); n_mlm = ceil(ratio·(T−2)) MLM
 * targets a row, n_sbo as many SBO targets (an upper bound: spans touching [CLS]/[SEP] have
 * none), each with a row of V decoder logits.
 * The factors are calibrated on peak RSS measured for `span pretrain` of tiny, mini and base at
 * lengths 128 and 512 on the native backend (bench/memory-plan.mjs prints the table; the plan is
 * within 25% of each); see docs/algorithms.md#memory-plan.
 */
import type {BertConfig} from '../model/config.js'
import {CHUNK_FLOATS, chunked} from '../model/decoder-loss.js'
import {SpanBertForPreTraining} from '../model/pretraining.js'

/**
 * Node, TensorFlow.js, the native addon with its BLAS threads, oclif: what a run holds before its model.
 * 150 MiB since 2026-12-06 (250 before): with 250, measured again that day, tiny, mini and base runs
 * peaked 2–32% under their plans, and a 1.5M-parameter tiny run whose other terms plan 100 MiB peaks
 * at 251 MiB; docs/algorithms.md#memory-plan.
 */
export const RUNTIME_BYTES = 150 * 2 ** 20
/** float32 copies of each parameter at the peak: weights, gradients, AdamW m and v. */
export const PARAM_COPIES = 4
/** further float32 copies of the word embeddings [V, H]: the gradients of the gather and of the two tied decoders, summed. */
export const EMBED_COPIES = 2.5
/** floats the gradient tape keeps per token, layer and unit of H, and of I. */
export const ACT_H = 8
export const ACT_I = 6
/** floats per attention probability (probabilities, their dropout mask, the gradient). */
export const ATT = 2
/** floats per decoder logit (the logits and their gradient, part of the time both), where a decoder's logits are held whole. */
export const LOGITS = 1.8
/** A chunked decoder (model/decoder-loss.ts): CHUNK_FLOATS logits times this (logits, softmax, one-hot, gradient) … */
export const CHUNK_COPIES = 4
/** … and this many further copies of the word embeddings [V, H] (its gradient summed over the chunks). */
export const CHUNK_EMBED_COPIES = 0
/**
 * float32 copies of every gradient that NCCL data parallel on cuda holds at once
 * (dist/nccl-device.ts allReduceGradsOnDevice): every bucket packed into one buffer, all-reduced
 * out-of-place into another, both live until the step's buckets are cut back into the gradients.
 * Counted on top of the activations although the backward pass has freed them by then: the
 * caching allocator keeps blocks by size class, and the activations' blocks are not the buckets'.
 */
export const NCCL_GRAD_COPIES = 2
/**
 * The native backend's buffer pool (engine/native-pool.ts) keeps disposed kernel outputs for reuse:
 * at the peak it can hold this share of one micro-batch's transient tensors (activations and decoder
 * logits) besides the live ones. The run caps the pool at exactly the bytes planned for it
 * (run-plan.ts), so the plan holds whatever the pool's own default (an eighth of RAM) would be.
 */
export const POOL_SHARE = 0.5

/** Bytes per example of the data index (offset, length, line number) and sampler. */
const INDEX_BYTES = 24

/** What the plan is made for. */
export interface PlanShape {
  model: BertConfig
  batch: number // rows per micro-batch (this process's)
  seqLen: number // padded length of a batch: the longest example, at most --max-len
  ratio: number // share of each row's tokens that are MLM targets (--ratio; masked data: its own)
  examples: number // examples in the data (the index)
  allReduceOnDevice?: boolean // NCCL data parallel on cuda (world > 1): the gradient buckets on the device
  pool?: number | 'share' // the native backend's buffer pool: bytes (SPAN_NATIVE_POOL_MB), or POOL_SHARE of the transients; absent: none
  attentionProbs?: boolean // false: a flash kernel keeps each row's log-sum-exp, no [A, T, T] probabilities (native flash.cc); absent: kept
}

/** The parts of a run's peak memory, in bytes (parameters: a count). */
export interface MemoryPlan {
  parameters: number
  weights: number // the model's float32 weights
  optimiser: number // gradients and AdamW moments
  activations: number // what the gradient tape keeps through the encoder for one micro-batch
  logits: number // the MLM and SBO decoder logits of one micro-batch, with their gradient
  runtime: number // the process before its model, and the data index
  collective: number // NCCL's gradient buckets on the device (0 unless allReduceOnDevice)
  pool: number // the native backend's buffer pool, the cap the run sets on it (0 on other backends)
  total: number
}

/** The number of parameters of the pre-training model (encoder and heads). */
export function parameterCount(m: BertConfig): number {
  let n = 0
  for (const s of SpanBertForPreTraining.specs(m)) n += s.shape.reduce((a, b) => a * b, 1)
  return n
}

/** The peak memory of a pre-training step with this shape (see the module comment). */
export function planMemory(s: PlanShape): MemoryPlan {
  const m = s.model
  const P = parameterCount(m)
  const T = s.seqLen
  const L = m.num_hidden_layers
  const perRow = Math.ceil(s.ratio * Math.max(0, T - 2)) // n_mlm (and at most as many n_sbo) a row
  const weights = 4 * P
  const optimiser = 4 * P * (PARAM_COPIES - 1) + 4 * EMBED_COPIES * m.vocab_size * m.hidden_size
  const probs = s.attentionProbs === false ? 0 : ATT * m.num_attention_heads * T * T * L // [A, T, T] a row and layer
  const activations = 4 * s.batch * (T * L * (ACT_H * m.hidden_size + ACT_I * m.intermediate_size) + probs)
  const logits = decoderBytes(m, s.batch * perRow, m.objectives.includes('sbo') ? 2 : 1)
  const runtime = RUNTIME_BYTES + INDEX_BYTES * s.examples
  const collective = s.allReduceOnDevice ? 4 * NCCL_GRAD_COPIES * P : 0
  const pool = s.pool === undefined ? 0 : s.pool === 'share' ? Math.ceil(POOL_SHARE * (activations + logits)) : s.pool
  const total = weights + optimiser + activations + logits + runtime + collective + pool
  return {parameters: P, weights, optimiser, activations, logits, runtime, collective, pool, total}
}

/**
 * What the decoders (MLM, and SBO as an upper bound with as many rows) of N target rows each hold
 * for the backward pass: their logits whole (4·LOGITS·N·V bytes each), or, past CHUNK_ABOVE, a
 * chunk's worth at a time (decoder-loss.ts), the two heads one after the other.
 */
function decoderBytes(m: BertConfig, N: number, heads: number): number {
  const V = m.vocab_size
  if (!chunked(N, V)) return heads * 4 * LOGITS * N * V
  return 4 * (CHUNK_COPIES * CHUNK_FLOATS + CHUNK_EMBED_COPIES * V * m.hidden_size)
}

/** Share of the available memory a plan may take: the rest is headroom (other processes, estimate error). */
export const HEADROOM = 0.8

/** Divisors of n, largest first: the micro-batches that accumulate to exactly n. */
export function divisorsDown(n: number): number[] {
  const out: number[] = []
  for (let d = n; d >= 1; d--) if (n % d === 0) out.push(d)
  return out
}

/** A micro-batch and how many of them make one step's (per-process) effective batch. */
export interface BatchChoice {
  batch: number
  accumulate: number
  plan: MemoryPlan
}

/**
 * The largest micro-batch dividing `effective` (this process's rows per step) whose plan fits
 * under `limit` bytes, accumulated to `effective`; null when not even one row fits.
 */
export function largestFitting(shape: Omit<PlanShape, 'batch'>, effective: number, limit: number): BatchChoice | null {
  for (const b of divisorsDown(effective)) {
    const plan = planMemory({...shape, batch: b})
    if (plan.total <= limit) return {batch: b, accumulate: effective / b, plan}
  }
  return null
}
