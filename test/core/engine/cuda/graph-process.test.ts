import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {ROOT, runSpan} from '../../../helpers/spawn.js'

// `SPAN_CUDA_GRAPH=1 span pretrain --backend cuda` on the stand-in device (docs/cuda-backend.md,
// "One step as a CUDA Graph"). A whole `tiny` step (forward, backward, clipping, multi-tensor
// AdamW with a new learning rate each step) logged every step and without dropout replays as one
// graph after its warm-ups: the run's metrics, weights and optimiser state equal the eager run's
// byte for byte. So does a real run: dropout (seeds read from the device), blocks masked afresh
// each step (targets padded to a fixed count), gradient accumulation and a logging window of 4.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

function masked(): string {
  return ['tokenize', 'block', 'mask'].reduce(
    (input, cmd) => runSpan(cmd === 'tokenize' ? [cmd] : [cmd, ...(cmd === 'block' ? ['--len', '16'] : ['--seed', '1'])], {input}).stdout,
    'the union is strong\n',
  )
}

/** The first `n` blocks of 16 tokens (the longest `span block --len 16` makes) of fixtures/corpus.txt, unmasked: pretrain masks them. */
function fullBlocks(n: number): string {
  const text = readFileSync(join(ROOT, 'fixtures', 'corpus.txt'), 'utf8')
    .split('\n')
    .slice(0, 30)
    .join('\n')
  const blocks = runSpan(['block', '--len', '16'], {input: runSpan(['tokenize'], {input: text}).stdout})
    .stdout.trim()
    .split('\n')
  const full = blocks.slice(1).filter((l) => (JSON.parse(l) as {ids: number[]}).ids.length === 16)
  return [blocks[0], ...full.slice(0, n)].join('\n') + '\n'
}

type Run = {metrics: string[]; stderr: string; out: string}

function pretrain(input: string, extra: Record<string, string>, flags: string[]): Run {
  const out = join(mkdtempSync(join(tmpdir(), 'span-cuda-graph-')), 'm')
  const args = ['pretrain', '--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--batch-size', '2', '--backend', 'cuda', ...flags]
  const r = runSpan([...args, '--out', out], {input, env: {...process.env, SPAN_CUDA_LIBS: (standins as {dir: string}).dir, ...extra}})
  expect(r.code, r.stderr).toBe(0)
  const metrics = r.stdout.split('\n').filter((l) => l.includes('"loss"'))
  return {metrics: metrics.map((l) => l.replace(/"(seconds|tokens_per_s|elapsed)[^,}]*[,}]/g, '')), stderr: r.stderr, out}
}

const file = (r: Run, steps: number, name: string) => readFileSync(join(r.out, `checkpoint-${steps}`, name))

describe.skipIf(skip)('SPAN_CUDA_GRAPH=1 span pretrain --backend cuda (stand-in)', () => {
  it('replays a whole tiny step (clipping, multi-tensor AdamW) as one graph, byte-equal to eager', () => {
    const input = masked()
    const flags = ['--max-steps', '10', '--log-every', '1', '--dropout', '0']
    const [plain, graphed] = [pretrain(input, {}, flags), pretrain(input, {SPAN_CUDA_GRAPH: '1'}, flags)]
    expect(graphed.metrics).toHaveLength(10)
    expect(graphed.metrics).toEqual(plain.metrics)
    for (const f of ['model.safetensors', 'optimizer.safetensors']) expect(file(graphed, 10, f).equals(file(plain, 10, f)), f).toBe(true)
    const m =
      /cuda graph: (\d+) steps replayed, (\d+) captured, (\d+) warm-up, (\d+) eager, 1 step shapes; stand-in libcuda: \d+ kernel launches, (\d+) graph launches/.exec(
        graphed.stderr,
      )
    expect(m, graphed.stderr).not.toBeNull()
    const [replayed, captured, , eager, graphLaunches] = m!.slice(1).map(Number)
    expect(replayed).toBeGreaterThanOrEqual(5) // warm-ups, one capture, then every step a replay
    expect(captured).toBe(1)
    expect(eager).toBe(0)
    expect(graphLaunches).toBe(replayed + captured)
    expect(graphed.stderr).not.toMatch(/ran eagerly/)
    expect(plain.stderr).not.toMatch(/cuda graph/)
  }, 120_000)

  it('a real run (blocks masked dynamically, dropout, --accumulate 2, --log-every 4) replays after its warm-ups, byte-equal to eager', () => {
    // Full 16-token blocks, so that every micro-batch is 2 × 16: with the targets padded to
    // 2·maskBudget(16) (docs/cuda-backend.md) the run has one step shape whatever the masks draw.
    const input = fullBlocks(24)
    const flags = ['--max-steps', '10', '--log-every', '4', '--accumulate', '2'] // dropout, warm-up, clipping: the defaults
    const [plain, graphed] = [pretrain(input, {}, flags), pretrain(input, {SPAN_CUDA_GRAPH: '1'}, flags)]
    expect(graphed.metrics).toHaveLength(3)
    expect(graphed.metrics).toEqual(plain.metrics)
    for (const f of ['model.safetensors', 'optimizer.safetensors']) expect(file(graphed, 10, f).equals(file(plain, 10, f)), f).toBe(true)
    const m =
      /cuda graph: (\d+) steps replayed, (\d+) captured, (\d+) warm-up, (\d+) eager, 1 step shapes; stand-in libcuda: \d+ kernel launches, (\d+) graph launches/.exec(
        graphed.stderr,
      )
    expect(m, graphed.stderr).not.toBeNull()
    const [replayed, captured, warmup, eager, graphLaunches] = m!.slice(1).map(Number)
    expect([captured, eager]).toEqual([1, 0])
    expect(replayed + captured + warmup).toBe(10)
    expect(replayed).toBeGreaterThanOrEqual(5) // every step after the warm-ups and the capture: new masks and targets each step
    expect(graphLaunches).toBe(replayed + captured)
    expect(graphed.stderr).not.toMatch(/ran eagerly/)
  }, 120_000)
})
