import {describe, expect, it} from 'vitest'
import {presetConfig} from '../../../src/core/model/config.js'
import {SpanBertForPreTraining} from '../../../src/core/model/pretraining.js'
import {DEFAULTS, resolveConfig} from '../../../src/core/train/config.js'
import {HEADROOM, POOL_SHARE, divisorsDown, largestFitting, parameterCount, planMemory} from '../../../src/core/train/memory-plan.js'
import {poolCapBytes} from '../../../src/core/engine/native-pool.js'
import {effectiveRows, planRun} from '../../../src/core/train/run-plan.js'
import {formatBytes, hostMemory, memoryOverride} from '../../../src/core/util/memory.js'
import {initBackend} from '../../../src/core/engine/index.js'

const V = 30522
const shape = (preset: 'tiny' | 'mini' | 'base', seqLen: number) => ({model: presetConfig(preset, V), seqLen, ratio: 0.15, examples: 1000})
const MiB = 2 ** 20

describe('the memory plan', () => {
  it('counts the parameters the model makes', async () => {
    await initBackend('cpu')
    const m = SpanBertForPreTraining.init(presetConfig('tiny', 500), 1)
    expect(parameterCount(m.config)).toBe(m.params.entries().reduce((n, [, t]) => n + t.size, 0))
    m.dispose()
  })

  it('adds up its parts, and grows with the batch, the length and the model', () => {
    const p = planMemory({...shape('tiny', 128), batch: 8})
    expect(p.total).toBe(p.weights + p.optimiser + p.activations + p.logits + p.runtime + p.collective)
    expect(p.collective).toBe(0)
    expect(p.weights).toBe(4 * p.parameters)
    const at = (s: ReturnType<typeof shape>, batch: number) => planMemory({...s, batch}).total
    expect(at(shape('tiny', 128), 16)).toBeGreaterThan(at(shape('tiny', 128), 8))
    expect(at(shape('tiny', 512), 8)).toBeGreaterThan(at(shape('tiny', 128), 8))
    expect(at(shape('base', 128), 8)).toBeGreaterThan(at(shape('mini', 128), 8))
    // activations scale with the rows; parameters do not
    const one = planMemory({...shape('mini', 512), batch: 1})
    const four = planMemory({...shape('mini', 512), batch: 4})
    expect(four.activations).toBeCloseTo(4 * one.activations, 0)
    expect(four.optimiser).toBe(one.optimiser)
  })

  it("counts NCCL data parallel's two device copies of every gradient (buckets packed, then summed)", () => {
    const alone = planMemory({...shape('base', 512), batch: 4})
    const nccl = planMemory({...shape('base', 512), batch: 4, allReduceOnDevice: true})
    expect(nccl.collective).toBe(2 * 4 * nccl.parameters)
    expect(nccl.total - alone.total).toBe(nccl.collective)
    expect(nccl.total).toBe(nccl.weights + nccl.optimiser + nccl.activations + nccl.logits + nccl.runtime + nccl.collective)
  })

  // The measured peaks of span pretrain (native backend, 3 steps, full-length blocks, bench/memory-plan.mjs) the factors were calibrated on:
  // the decoders' logits whole (docs/algorithms.md's first column) where they stay under CHUNK_ABOVE, chunked (the second) past it.
  it.each([
    ['tiny', 128, 8, 422],
    ['tiny', 128, 32, 754],
    ['tiny', 512, 8, 788],
    ['tiny', 512, 32, 1348],
    ['mini', 128, 8, 716],
    ['mini', 128, 32, 1496],
    ['mini', 512, 8, 1603],
    ['base', 128, 2, 2577],
    ['base', 128, 8, 3963],
    ['base', 512, 2, 4363],
    ['base', 512, 4, 5554],
    ['base', 512, 8, 8389],
    ['base', 512, 16, 14562],
  ] as const)('is within a quarter of the measured peak of %s at %i × batch %i (%i MiB)', (preset, len, batch, measured) => {
    const planned = planMemory({...shape(preset, len), batch}).total / MiB
    expect(Math.abs(planned - measured) / measured).toBeLessThan(0.25)
  })

  it('chooses the largest micro-batch dividing the effective batch that fits', () => {
    expect(divisorsDown(12)).toEqual([12, 6, 4, 3, 2, 1])
    const s = shape('tiny', 128) // at 512, 16 rows plan below 8: their decoders go in chunks
    const limit = planMemory({...s, batch: 8}).total + 1
    const c = largestFitting(s, 32, limit)
    expect(c && {batch: c.batch, accumulate: c.accumulate}).toEqual({batch: 8, accumulate: 4})
    expect(largestFitting(s, 32, planMemory({...s, batch: 1}).total - 1)).toBeNull()
  })
})

describe('planRun', () => {
  const backend = {name: 'native', tfName: 'cpu'} as const
  const withMemory = <T>(value: string, f: () => T): T => {
    const before = process.env.SPAN_MEMORY_AVAILABLE
    process.env.SPAN_MEMORY_AVAILABLE = value
    try {
      return f()
    } finally {
      if (before === undefined) delete process.env.SPAN_MEMORY_AVAILABLE
      else process.env.SPAN_MEMORY_AVAILABLE = before
    }
  }
  const s = shape('tiny', 128) // monotonic in the batch (at 512 the chunked decoders of 16 rows plan below 8 rows)
  const roomFor = (batch: number) => String(Math.ceil(planMemory({...s, batch, pool: 'share'}).total / HEADROOM) + 1) // native: its buffer pool planned and capped

  it('resolves auto to the largest micro-batch that fits under 80%, accumulating to the effective batch', () => {
    const c = resolveConfig([])
    const log = withMemory(roomFor(8), () => planRun(c, s, backend, 1)).notes
    expect([c['batch-size'], c.accumulate]).toEqual([8, 4])
    expect(log[0]).toMatch(/^--batch-size auto: 8 × --accumulate 4 = the effective batch 32 /)
    expect(log[1]).toMatch(
      /^memory plan \(fp32, backend native\): 4\.5M parameters, .* for a micro-batch of 8 × 128 tokens; .* of \S+ MiB SPAN_MEMORY_AVAILABLE/,
    )
  })

  it('counts the native buffer pool in the plan and holds the pool to it (issue 36); SPAN_NATIVE_POOL_MB is planned as given', () => {
    const {plan, notes} = withMemory(roomFor(8), () => planRun(resolveConfig([{name: 'flags', values: {'batch-size': 8}}]), s, backend, 1))
    expect(plan.pool).toBe(Math.ceil(POOL_SHARE * (plan.activations + plan.logits)))
    expect(plan.total).toBe(planMemory({...s, batch: 8, attentionProbs: false}).total + plan.pool) // native's flash attention keeps no probabilities
    expect(plan.activations).toBeLessThan(planMemory({...s, batch: 8}).activations)
    expect(poolCapBytes()).toBe(plan.pool)
    expect(notes.at(-1)).toMatch(/; native buffer pool \S+ (KiB|MiB);/)
    process.env.SPAN_NATIVE_POOL_MB = '64'
    try {
      expect(withMemory('64G', () => planRun(resolveConfig([{name: 'flags', values: {'batch-size': 8}}]), s, backend, 1)).plan.pool).toBe(64 * 2 ** 20)
      expect(poolCapBytes()).toBe(64 * 2 ** 20)
    } finally {
      delete process.env.SPAN_NATIVE_POOL_MB
    }
    expect(planRun(resolveConfig([{name: 'flags', values: {'batch-size': 8}}]), s, {name: 'wasm', tfName: 'wasm'}, 1).plan.pool).toBe(0)
  })

  it('takes --effective-batch, and --batch-size × --accumulate as the effective batch', () => {
    expect(effectiveRows(resolveConfig([{name: 'flags', values: {'effective-batch': 64}}]), 1).global).toBe(64)
    expect(effectiveRows(resolveConfig([{name: 'flags', values: {'batch-size': 4, accumulate: 3}}]), 1).global).toBe(12)
    expect(effectiveRows(resolveConfig([{name: 'flags', values: {accumulate: 2}}]), 2)).toEqual({global: 64, perProcess: 32})
    expect(effectiveRows(resolveConfig([{name: 'flags', values: {'batch-size': 3}}]), 2)).toEqual({global: 6, perProcess: 3}) // --batch-size is each process's
    const c = resolveConfig([{name: 'flags', values: {'batch-size': 4, 'effective-batch': 16}}])
    effectiveRows(c, 2)
    expect(c.accumulate).toBe(2) // 2 processes × 4 × 2
    expect(() => effectiveRows(resolveConfig([{name: 'flags', values: {'batch-size': 5, 'effective-batch': 16}}]), 1)).toThrow(
      /not a multiple of --batch-size 5/,
    )
    expect(() => effectiveRows(resolveConfig([{name: 'flags', values: {'batch-size': 4, accumulate: 3, 'effective-batch': 16}}]), 1)).toThrow(
      /makes --accumulate 4, not 3/,
    )
  })

  it('refuses a run that cannot fit in one line, with what would', () => {
    const c = resolveConfig([{name: 'flags', values: {'batch-size': 32}}])
    const err = withMemory(roomFor(8), () => {
      try {
        planRun(c, s, backend, 1)
      } catch (e) {
        return e as Error & {exitCode: number}
      }
      return null
    })
    expect(err?.exitCode).toBe(1)
    expect(err?.message).toMatch(
      /^needs about \S+ (MiB|GiB) \(2 layers of 128, 32 × 128 tokens, fp32\) but 80% of the \S+ MiB SPAN_MEMORY_AVAILABLE is \S+ MiB; would fit: --batch-size 8 --accumulate 4 \(the same effective batch, \S+ MiB\)$/,
    )
    expect(err?.message).not.toContain('\n')
  })

  it('names a smaller preset when not even one example of this model fits', () => {
    const c = resolveConfig([{name: 'flags', values: {preset: 'base'}}]) // batch-size auto
    const room = String(Math.ceil(planMemory({...shape('mini', 512), batch: 1, pool: 'share'}).total / HEADROOM) + 1)
    let message = ''
    withMemory(room, () => {
      try {
        planRun(c, shape('base', 512), backend, 1)
      } catch (e) {
        message = (e as Error).message
      }
    })
    expect(message).toMatch(/^needs about \S+ GiB \(12 layers of 768, 1 × 512 tokens, fp32\) but 80% of .*; would fit: --preset mini$/)
  })

  it('says so when the backend does not tell its memory, and checks nothing', () => {
    const c = resolveConfig([{name: 'flags', values: {'batch-size': 4}}])
    const log = planRun(c, s, {name: 'tensorflow-gpu', tfName: 'tensorflow'}, 1).notes
    expect(log[0]).toMatch(/the memory there is is not known, so the plan is not checked/)
  })
})

describe('available memory', () => {
  it('reads SPAN_MEMORY_AVAILABLE in bytes or with a unit', () => {
    expect(memoryOverride({SPAN_MEMORY_AVAILABLE: '2G'})).toEqual({bytes: 2 * 2 ** 30, source: 'SPAN_MEMORY_AVAILABLE'})
    expect(memoryOverride({SPAN_MEMORY_AVAILABLE: '512MiB'})?.bytes).toBe(512 * MiB)
    expect(memoryOverride({SPAN_MEMORY_AVAILABLE: '1000'})?.bytes).toBe(1000)
    expect(memoryOverride({})).toBeNull()
    expect(() => memoryOverride({SPAN_MEMORY_AVAILABLE: 'lots'})).toThrow(/SPAN_MEMORY_AVAILABLE must be bytes or a size such as 2G/)
  })

  it("is the machine's available memory otherwise", () => {
    const m = hostMemory({})
    expect(m.bytes).toBeGreaterThan(0)
    expect(m.source).toMatch(/available memory|free memory|cgroup/)
    expect(formatBytes(1.5 * 2 ** 30)).toBe('1.5 GiB')
    expect(formatBytes(300 * MiB)).toBe('300 MiB')
    expect(DEFAULTS['batch-size']).toBe('auto')
  })
})
