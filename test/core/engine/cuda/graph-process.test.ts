import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {runSpan} from '../../../helpers/spawn.js'

// `SPAN_CUDA_GRAPH=1 span pretrain --backend cuda` on the stand-in device (docs/cuda-backend.md,
// "One step as a CUDA Graph"). A whole `tiny` step (forward, backward, clipping, multi-tensor
// AdamW with a new learning rate each step) logged every step and without dropout replays as one
// graph after its warm-ups: the run's metrics, weights and optimiser state equal the eager run's
// byte for byte. With dropout the masks' seeds are kernel arguments that change every step: the
// steps decline, say why once, and still equal eager.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

function masked(): string {
  return ['tokenize', 'block', 'mask'].reduce(
    (input, cmd) => runSpan(cmd === 'tokenize' ? [cmd] : [cmd, ...(cmd === 'block' ? ['--len', '16'] : ['--seed', '1'])], {input}).stdout,
    'the union is strong\n',
  )
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

  it('with dropout (seeds as kernel arguments) the steps decline, say why once, and give the same metrics', () => {
    const input = masked()
    const flags = ['--max-steps', '6', '--log-every', '1']
    const [plain, graphed] = [pretrain(input, {}, flags), pretrain(input, {SPAN_CUDA_GRAPH: '1'}, flags)]
    expect(graphed.metrics).toEqual(plain.metrics)
    const lines = graphed.stderr.split('\n').filter((l) => l.includes('ran eagerly'))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/cuda graph: a step of shape pretrain 2x\d+ mlm \d+ sbo \d+ ran eagerly: its work differed from each of the 4 steps before/)
    expect(graphed.stderr).toMatch(/cuda graph: 0 steps replayed, 0 captured, 4 warm-up, 2 eager, 1 step shapes/)
  }, 120_000)
})
