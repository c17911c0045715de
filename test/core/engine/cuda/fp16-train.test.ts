import {existsSync, mkdtempSync, readFileSync, readdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {decodeSafetensors} from '../../../../src/core/model/safetensors.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {runSpan} from '../../../helpers/spawn.js'

// --precision fp16 with dynamic loss scaling as processes (issue 35), on the stand-in device:
// 20 steps of a tiny pretrain and of finetune squad within 2% of fp32; a forced overflow
// (SPAN_TEST_OVERFLOW_STEPS: +inf written into one gradient) skips exactly that step (weights and
// AdamW state byte-equal to the step before, the scale halved, the step counted), the scale doubles
// after the growth window, with --accumulate 1 and 2; a resume from the checkpoint saved right after
// the skipped step ends byte-equal to the run that went on; the same under CUDA Graphs; fp16 on
// native is a usage error.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false
const out = () => join(mkdtempSync(join(tmpdir(), 'span-fp16-train-')), 'run')

function env(extra: Record<string, string> = {}, libs = true): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = {...process.env, ...(libs ? {SPAN_CUDA_LIBS: (standins as {dir: string}).dir} : {}), ...extra}
  if (!libs) delete e.SPAN_CUDA_LIBS
  delete e.SPAN_CUDA_PRECISION
  return e
}

let maskedText: string | undefined
function masked(): string {
  return (maskedText ??= ['tokenize', 'block', 'mask'].reduce(
    (input, cmd) => runSpan(cmd === 'tokenize' ? [cmd] : [cmd, ...(cmd === 'block' ? ['--len', '16'] : ['--seed', '1'])], {input}).stdout,
    'the union is strong\n',
  ))
}

const TINY = ['--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--batch-size', '2', '--log-every', '1']
const pretrainArgs = (steps: number) => ['pretrain', ...TINY, '--max-steps', String(steps)]
const squadArgs = (steps: number) => [
  ...['finetune', 'squad', '--preset', 'tiny', '--train', 'fixtures/squad-demo/train.json', '--max-len', '32', '--max-query-len', '8', '--doc-stride', '16'],
  ...['--batch-size', '2', '--max-train-examples', String(2 * steps), '--epochs', '1', '--log-every', '1'],
]

type Rec = {step: number; loss: number; grad_norm: number; loss_scale?: number; skipped_steps?: number}

function run(args: string[], backend: string, e: NodeJS.ProcessEnv, input = '', dir = out()): {recs: Rec[]; dir: string; stderr: string} {
  const r = runSpan([...args, '--backend', backend, '--out', dir], {input, env: e})
  expect(r.code, r.stderr).toBe(0)
  const recs = r.stdout
    .split('\n')
    .filter((l) => l.includes('"loss"'))
    .map((l) => JSON.parse(l) as Rec)
  return {recs, dir, stderr: r.stderr}
}

/** A checkpoint's weights (model.safetensors' bytes), AdamW moments (the tensors' bytes) and optimizer metadata. */
function state(dir: string, step: number): {weights: Buffer; moments: Buffer; meta: Record<string, string>} {
  const ck = join(dir, `checkpoint-${step}`)
  const opt = readFileSync(join(ck, 'optimizer.safetensors'))
  const file = decodeSafetensors(opt, 'optimizer.safetensors')
  const moments = Buffer.concat([...file.tensors].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, t]) => Buffer.from(t.bytes)))
  return {weights: readFileSync(join(ck, 'model.safetensors')), moments, meta: file.metadata}
}

function within2Percent(args: string[], input = ''): void {
  const fp32 = run(args, 'native', env(), input)
  const fp16 = run([...args, '--precision', 'fp16'], 'cuda', env(), input)
  expect(fp16.recs).toHaveLength(20)
  expect(fp32.recs).toHaveLength(20)
  fp16.recs.forEach((r, i) => expect(Math.abs(r.loss - fp32.recs[i].loss) / fp32.recs[i].loss, `step ${i + 1}`).toBeLessThan(0.02))
  expect(fp16.recs.every((r) => r.loss_scale === 128 && r.skipped_steps === 0)).toBe(true) // no overflow in 20 steps at 2^7: nothing skipped
  const ck = readdirSync(fp16.dir).find((d) => d.startsWith('checkpoint-'))!
  const config = JSON.parse(readFileSync(join(fp16.dir, ck, args[0] === 'pretrain' ? 'train_config.json' : 'finetune_config.json'), 'utf8'))
  expect(config).toMatchObject({backend: 'cuda', precision: 'fp16'})
}

/** 8 steps with +inf in a gradient at step 3, a growth window of 4, a checkpoint after every step. */
const overflowArgs = (accumulate: number) => [
  ...pretrainArgs(8),
  '--precision',
  'fp16',
  '--accumulate',
  String(accumulate),
  '--loss-scale-window',
  '4',
  '--save-every',
  '1',
  '--keep',
  '20',
]
const OVERFLOW = {SPAN_TEST_OVERFLOW_STEPS: '3'}

function overflowSkipsExactlyThatStep(accumulate: number): void {
  const r = run(overflowArgs(accumulate), 'cuda', env(OVERFLOW), masked())
  expect(r.recs.map((x) => x.loss_scale)).toEqual([128, 128, 64, 64, 64, 64, 128, 128]) // halved at 3; doubled after the 4 clean steps 4–7
  expect(r.recs.map((x) => x.skipped_steps)).toEqual([0, 0, 1, 1, 1, 1, 1, 1])
  expect(r.recs[2].grad_norm).toBeNull() // the overflowed norm: inf, null in JSON
  const [before, skipped, after] = [2, 3, 4].map((s) => state(r.dir, s))
  expect(skipped.weights.equals(before.weights)).toBe(true) // byte-equal: nothing applied
  expect(skipped.moments.equals(before.moments)).toBe(true)
  expect(after.weights.equals(skipped.weights)).toBe(false) // the next step applies
  expect([before.meta.step, skipped.meta.step, after.meta.step]).toEqual(['2', '2', '3']) // AdamW's step: updates applied
  expect([before.meta.loss_scale, skipped.meta.loss_scale, skipped.meta.loss_scale_skipped, skipped.meta.loss_scale_iter]).toEqual(['128', '64', '1', '3'])
}

describe.skipIf(skip)('--precision fp16 on the stand-in device as processes', () => {
  it('20 steps of a tiny pretrain end within 2% of the fp32 losses', () => within2Percent(pretrainArgs(20), masked()), 240_000)

  it('20 steps of finetune squad end within 2% of the fp32 losses', () => within2Percent(squadArgs(20)), 300_000)

  it(
    'a forced overflow skips exactly that step: weights and AdamW state byte-equal, scale halved, step counted; the scale doubles after the window',
    () => overflowSkipsExactlyThatStep(1),
    240_000,
  )

  it('the same with --accumulate 2', () => overflowSkipsExactlyThatStep(2), 300_000)

  it('a resume from the checkpoint saved right after the skipped step ends byte-equal to the uninterrupted run', () => {
    const whole = run(overflowArgs(1), 'cuda', env(OVERFLOW), masked())
    const resumed = run([...overflowArgs(1), '--resume', join(whole.dir, 'checkpoint-3')], 'cuda', env(OVERFLOW), masked(), out())
    expect(resumed.recs.map((r) => [r.step, r.loss, r.grad_norm, r.loss_scale, r.skipped_steps])).toEqual(
      whole.recs.slice(3).map((r) => [r.step, r.loss, r.grad_norm, r.loss_scale, r.skipped_steps]),
    )
    const [a, b] = [state(whole.dir, 8), state(resumed.dir, 8)]
    expect(b.weights.equals(a.weights)).toBe(true)
    expect(b.moments.equals(a.moments)).toBe(true)
    expect(b.meta).toEqual(a.meta)
  }, 300_000)

  it('an overflow that takes the scale to --loss-scale-min stops the run when the step is logged, in one line (fairseq: FloatingPointError)', () => {
    const dir = out()
    const args = [...pretrainArgs(4), '--precision', 'fp16', '--loss-scale-min', '100', '--backend', 'cuda', '--out', dir]
    const r = runSpan(args, {input: masked(), env: env({SPAN_TEST_OVERFLOW_STEPS: '1'})})
    expect(r.code).toBe(1)
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('span pretrain: ') && !/^span pretrain: (config|model|memory plan|effective batch)/.test(l))
    expect(lines).toEqual([
      'span pretrain: the fp16 loss scale fell to 64 by step 1, at or below --loss-scale-min 100: the loss is probably exploding; lower the learning rate, clip gradients or use --precision bf16 or fp32',
    ])
  }, 120_000)

  it('inside CUDA Graph steps: the same losses, scales and skips as eager steps, with steps replayed', () => {
    const eager = run(overflowArgs(1), 'cuda', env(OVERFLOW), masked())
    const graphed = run(overflowArgs(1), 'cuda', env({...OVERFLOW, SPAN_CUDA_GRAPH: '1'}), masked())
    expect(graphed.recs).toEqual(eager.recs.map((r, i) => ({...r, tokens_per_s: (graphed.recs[i] as Record<string, unknown>).tokens_per_s})))
    const replayed = Number(/cuda graph: (\d+) steps replayed/.exec(graphed.stderr)?.[1])
    expect(replayed, graphed.stderr).toBeGreaterThan(0)
    expect(state(graphed.dir, 8).weights.equals(state(eager.dir, 8).weights)).toBe(true)
  }, 300_000)
})

describe('--precision fp16 on a CPU backend', () => {
  it('is a usage error in one line, and writes nothing', () => {
    const dir = out()
    const r = runSpan([...pretrainArgs(1), '--backend', 'native', '--precision', 'fp16', '--out', dir], {
      input: masked(),
      env: {...env({}, false), SPAN_CPU_FLAGS: 'avx512_bf16'},
    })
    expect([r.code, r.stderr]).toEqual([2, 'span pretrain: --precision fp16 needs --backend cuda; --backend native computes in fp32 or bf16\n'])
    expect(existsSync(dir)).toBe(false)
  })

  it('a bad loss-scale flag is a usage error naming it', () => {
    const r = runSpan([...pretrainArgs(1), '--backend', 'native', '--loss-scale-backoff', '2', '--out', out()], {input: ''})
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--loss-scale-backoff/)
  })
})
