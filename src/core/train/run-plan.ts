/**
 * The memory plan said before step 1 (README "Memory plan"): the plan of this run's model,
 * micro-batch, length, precision and backend against the memory there is; `--batch-size auto`
 * resolved to the largest micro-batch that fits; a run that cannot fit refused in one line
 * (exit 1) before anything is written.
 */
import {probeCuda} from '../engine/cuda/addon.js'
import {nativeFlashAttention} from '../engine/native-flash.js'
import {resetPool} from '../engine/native-pool.js'
import type {BackendInfo} from '../engine/backend.js'
import {type BertConfig, PRESETS, type PresetName, presetConfig} from '../model/config.js'
import {SpanError} from '../stream/errors.js'
import {type MemoryBudget, formatBytes, hostMemory} from '../util/memory.js'
import type {TrainConfig} from './config.js'
import {HEADROOM, type MemoryPlan, type PlanShape, largestFitting, planMemory} from './memory-plan.js'

/** The batch settings of a run before they are resolved: --batch-size N or auto, --accumulate, --effective-batch. */
export const DEFAULT_EFFECTIVE_BATCH = 32

/** What the plan is made against: device memory for GPU backends (null: unknown there), host memory otherwise. */
export function memoryBudget(backend: BackendInfo): MemoryBudget | null {
  if (backend.name === 'cuda') {
    const p = probeCuda()
    return typeof p === 'string' ? null : {bytes: p.freeMem, source: 'free device memory'}
  }
  if (backend.name === 'tensorflow-gpu') return null // libtensorflow's allocator does not say; the plan is shown, not enforced
  return hostMemory()
}

/**
 * Examples a step takes over all processes, and this process's share: --effective-batch, else
 * processes × --batch-size × --accumulate (32 × --accumulate with auto). A given --batch-size
 * with --effective-batch fixes --accumulate (an --accumulate given too must agree).
 */
export function effectiveRows(c: TrainConfig, world: number): {global: number; perProcess: number} {
  const b = c['batch-size']
  const global = c['effective-batch'] ?? (b === 'auto' ? DEFAULT_EFFECTIVE_BATCH * c.accumulate : world * b * c.accumulate)
  if (global % world !== 0) throw new SpanError(`--effective-batch ${global} is not a multiple of the ${world} processes`, 2)
  const perProcess = global / world
  if (c['effective-batch'] !== null && b !== 'auto') {
    if (perProcess % b !== 0)
      throw new SpanError(`--effective-batch ${global} is not a multiple of --batch-size ${b}${world > 1 ? ` × ${world} processes` : ''}`, 2)
    if (c.accumulate !== 1 && c.accumulate !== perProcess / b)
      throw new SpanError(`--effective-batch ${global} makes --accumulate ${perProcess / b}, not ${c.accumulate}: give two of the three`, 2)
    c.accumulate = perProcess / b
  }
  return {global, perProcess}
}

/**
 * Resolves `auto` (c['batch-size'] and c.accumulate become numbers), checks the plan against the
 * budget (HEADROOM of it) and returns it with the lines that say it (logged once the run has
 * started: a resume's own errors come first). `world` processes share the machine's memory.
 */
export function planRun(c: TrainConfig, shape: Omit<PlanShape, 'batch'>, backend: BackendInfo, world: number): {plan: MemoryPlan; notes: string[]} {
  const notes: string[] = []
  const nccl = backend.name === 'cuda' && world > 1 // data parallel on cuda: NCCL's gradient buckets on each device
  const flash = backend.name === 'native' && nativeFlashAttention() // no [A, T, T] probabilities kept
  const plan = resolvePlan(c, {...shape, allReduceOnDevice: nccl, pool: poolOf(backend), attentionProbs: !flash}, backend, world, (line) => notes.push(line))
  if (backend.name === 'native') resetPool(plan.pool / 2 ** 20) // the pool held to what the plan counted for it
  return {plan, notes}
}

/** The native backend's pool as the plan counts it: SPAN_NATIVE_POOL_MB when set, else a share of a step's transients. */
function poolOf(backend: BackendInfo): PlanShape['pool'] {
  if (backend.name !== 'native') return undefined
  const mb = Number(process.env.SPAN_NATIVE_POOL_MB)
  return process.env.SPAN_NATIVE_POOL_MB !== undefined && Number.isFinite(mb) && mb >= 0 ? mb * 2 ** 20 : 'share'
}

/**
 * The processes that share one budget: on cuda each rank has a device of its own (--device per
 * local rank), so none; the host's memory is shared by every process of the machine.
 */
export function budgetSharers(backend: BackendInfo, world: number): number {
  return backend.name === 'cuda' ? 1 : world
}

/** The precision of the run's matrix products: the resolved --precision on cuda and native, fp32 elsewhere. */
function precisionOf(c: TrainConfig, backend: BackendInfo): string {
  return backend.name === 'cuda' || backend.name === 'native' ? (c.precision ?? 'fp32') : 'fp32'
}

/**
 * Under bf16 the cuda backend casts each GEMM's A and B to bf16 copies that live for that GEMM
 * (CudaBackend.gemm, cast_bf16.cu): the peak adds the largest pair, 2 bytes an element: the tied
 * decoder's [V, H] embedding with its [N, H] rows, or the FFN's [B·T, I] activations with its [I, H]
 * weight (the attention products' operands are smaller than the FFN's). 0 at fp32 and tf32. Native at
 * bf16 is planned the same (a bf16 GEMM's packed operands; the reference path of native/src/gemm.cc
 * keeps fp32 copies per thread instead, up to twice this).
 */
export function bf16ScratchBytes(s: PlanShape, precision: string): number {
  if (precision !== 'bf16' && precision !== 'fp16') return 0
  const m = s.model
  const rows = s.batch * Math.ceil(s.ratio * Math.max(0, s.seqLen - 2))
  return 2 * Math.max(m.vocab_size * m.hidden_size + rows * m.hidden_size, s.batch * s.seqLen * m.intermediate_size + m.intermediate_size * m.hidden_size)
}

function resolvePlan(c: TrainConfig, shape: Omit<PlanShape, 'batch'>, backend: BackendInfo, world: number, log: (line: string) => void): MemoryPlan {
  const rows = effectiveRows(c, world)
  const budget = memoryBudget(backend)
  const sharers = budgetSharers(backend, world)
  const precision = precisionOf(c, backend)
  // the bf16 copies at the largest micro-batch this process could take: what `auto` leaves for them
  const scratchMax = bf16ScratchBytes({...shape, batch: c['batch-size'] === 'auto' ? rows.perProcess : c['batch-size']}, precision)
  const limit = budget ? (HEADROOM * budget.bytes) / sharers - scratchMax : Infinity
  if (c['batch-size'] === 'auto') {
    const choice = largestFitting(shape, rows.perProcess, limit)
    if (!choice) throw cannotFit(c, {...shape, batch: 1}, budget as MemoryBudget, sharers, null, precision)
    c['batch-size'] = choice.batch
    c.accumulate = choice.accumulate
    log(
      `--batch-size auto: ${choice.batch} × --accumulate ${choice.accumulate}${world > 1 ? ` × ${world} processes` : ''} = the effective batch ${rows.global} ` +
        `(the largest micro-batch of it that fits under ${Math.round(HEADROOM * 100)}% of the ${budget ? `${budget.source}` : 'memory'})`,
    )
    describePlan(choice.plan, c, shape, backend, budget, sharers, log)
    return choice.plan
  }
  const plan = planMemory({...shape, batch: c['batch-size']})
  if (plan.total > limit)
    throw cannotFit(c, {...shape, batch: c['batch-size']}, budget as MemoryBudget, sharers, largestFitting(shape, rows.perProcess, limit), precision)
  describePlan(plan, c, shape, backend, budget, sharers, log)
  return plan
}

/** The plan's line on stderr: parameters, optimiser state, activations, against the budget. */
function describePlan(
  p: MemoryPlan,
  c: TrainConfig,
  s: Omit<PlanShape, 'batch'>,
  backend: BackendInfo,
  budget: MemoryBudget | null,
  sharers: number,
  log: (line: string) => void,
): void {
  const precision = precisionOf(c, backend)
  const scratch = bf16ScratchBytes({...s, batch: c['batch-size'] as number}, precision)
  const against = budget
    ? `of ${formatBytes(budget.bytes)} ${budget.source}${sharers > 1 ? ` shared by ${sharers} processes` : ''} (a run may plan ${Math.round(HEADROOM * 100)}% of it)`
    : `(backend ${backend.name}: the memory there is is not known, so the plan is not checked)`
  log(
    `memory plan (${precision}, backend ${backend.name}): ${(p.parameters / 1e6).toFixed(1)}M parameters, weights ${formatBytes(p.weights)}, ` +
      `gradients and AdamW state ${formatBytes(p.optimiser)}; activations ${formatBytes(p.activations)} and decoder logits ${formatBytes(p.logits)} ` +
      `for a micro-batch of ${c['batch-size']} × ${s.seqLen} tokens; runtime ${formatBytes(p.runtime)}${p.pool ? `; native buffer pool ${formatBytes(p.pool)}` : ''}${scratch ? `; ${precision} operand copies ${formatBytes(scratch)}` : ''}${p.collective ? `; NCCL gradient buckets ${formatBytes(p.collective)}` : ''}; about ${formatBytes(p.total + scratch)} at the peak ${against}`,
  )
}

/** The one line of a run that cannot fit: what it needs, what there is, and what would fit. */
function cannotFit(c: TrainConfig, s: PlanShape, budget: MemoryBudget, sharers: number, fits: ReturnType<typeof largestFitting>, precision: string): SpanError {
  const need = planMemory(s).total + bf16ScratchBytes(s, precision)
  const limit = (HEADROOM * budget.bytes) / sharers
  const ways: string[] = []
  if (fits) ways.push(`--batch-size ${fits.batch} --accumulate ${fits.accumulate} (the same effective batch, ${formatBytes(fits.plan.total)})`)
  const preset = smallerPreset(c, s, limit)
  if (preset) ways.push(`--preset ${preset}`)
  const what = `${s.model.num_hidden_layers} layers of ${s.model.hidden_size}, ${s.batch} × ${s.seqLen} tokens, ${precision}`
  return new SpanError(
    `needs about ${formatBytes(need)} (${what}) but ${Math.round(HEADROOM * 100)}% of the ${formatBytes(budget.bytes)} ${budget.source}` +
      `${sharers > 1 ? ` over ${sharers} processes` : ''} is ${formatBytes(limit)}; ${ways.length ? `would fit: ${ways.join(', or ')}` : 'not even one example a micro-batch fits'}`,
  )
}

/** The largest preset below this model whose plan fits with the same micro-batch (or one row), if any. */
function smallerPreset(c: TrainConfig, s: PlanShape, limit: number): PresetName | null {
  const names = Object.keys(PRESETS) as PresetName[]
  const current = s.model
  for (const name of [...names].reverse()) {
    const m: BertConfig = presetConfig(name, current.vocab_size, {objectives: current.objectives, max_position_embeddings: current.max_position_embeddings})
    if (m.hidden_size * m.num_hidden_layers >= current.hidden_size * current.num_hidden_layers || name === c.preset) continue
    if (planMemory({...s, model: m, batch: s.batch}).total <= limit) return name
  }
  return null
}
