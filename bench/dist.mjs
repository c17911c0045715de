#!/usr/bin/env node
// Data-parallel pre-training on one machine (issue 14): tokens/s of the mini preset (L4 H256)
// at 1 rank × 2 threads (--batch-size 16) and 2 ranks × 1 thread (mpirun -np 2, --batch-size 8:
// the same global batch), blocks of 128 tokens from fixtures/corpus.txt, --dropout 0; the median
// over steps 2..S (step 1 warms up). Then the all-reduce alone: mpirun -np 2 summing the mini
// model's gradient (every parameter, float32) in 25 MB buckets, median of 10.
//   npm run build && node bench/dist.mjs [steps]      (needs mpirun; as root OMPI_ALLOW_RUN_AS_ROOT*)
import {spawnSync} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {ROOT} from './lib/corpus.mjs'

const bin = join(ROOT, 'bin', 'run.js')
const env = {...process.env, OMPI_ALLOW_RUN_AS_ROOT: '1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: '1'}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

if (process.argv[2] === '--allreduce') await allReduceOnly()
else main()

function main() {
  const steps = Number(process.argv[2] ?? 5)
  if (spawnSync('mpirun', ['--version']).status !== 0) {
    console.log('skipped: mpirun not found (apt-get install openmpi-bin libopenmpi-dev)')
    return
  }
  const tmp = mkdtempSync(join(tmpdir(), 'span-bench-dist-'))
  const blocks = join(tmp, 'blocks.ndjson')
  const tok = spawnSync('bash', ['-c', `node ${bin} tokenize ${join(ROOT, 'fixtures', 'corpus.txt')} | node ${bin} block --len 128 > ${blocks}`])
  if (tok.status !== 0) throw new Error(tok.stderr.toString())
  const common = [
    bin,
    'pretrain',
    blocks,
    '--preset',
    'mini',
    '--max-steps',
    String(steps),
    '--log-every',
    '1',
    '--dropout',
    '0',
    '--backend',
    'native',
    '--warmup',
    '1',
  ]
  const runs = [
    {name: '1 rank × 2 threads, batch 16', cmd: ['node', ...common, '--threads', '2', '--batch-size', '16', '--out', join(tmp, 'a')]},
    {
      name: '2 ranks × 1 thread, batch 8 each',
      cmd: ['mpirun', '-np', '2', '--oversubscribe', '--bind-to', 'none', 'node', ...common, '--threads', '1', '--batch-size', '8', '--out', join(tmp, 'b')],
    },
  ]
  console.log(`mini (L4 H256 A4), global batch 16 × ≤128 tokens, ${steps} steps, native backend, ${process.env.HOSTNAME ?? 'this machine'}`)
  for (const r of runs) {
    const t0 = Date.now()
    const p = spawnSync(r.cmd[0], r.cmd.slice(1), {env, encoding: 'utf8', maxBuffer: 1 << 26})
    if (p.status !== 0) throw new Error(`${r.name}: ${p.stderr}`)
    const recs = p.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((x) => 'tokens_per_s' in x)
    const tps = median(recs.slice(1).map((x) => x.tokens_per_s))
    const ar = /all-reduce: ([\d.]+) ms per step/.exec(p.stderr)
    console.log(
      `${r.name.padEnd(34)} ${Math.round(tps).toString().padStart(6)} tokens/s${ar ? `, all-reduce (with waiting for the other rank) ${ar[1]} ms/step` : ''}  [${((Date.now() - t0) / 1000).toFixed(0)} s wall]`,
    )
  }
  const p = spawnSync('mpirun', ['-np', '2', '--oversubscribe', 'node', new URL(import.meta.url).pathname, '--allreduce'], {env, encoding: 'utf8'})
  process.stdout.write(p.status === 0 ? p.stdout : `all-reduce alone failed: ${p.stderr}`)
  writeFileSync(join(tmp, 'done'), '')
}

async function allReduceOnly() {
  const tf = await import('@tensorflow/tfjs')
  const {presetConfig} = await import('../dist/core/model/config.js')
  const {SpanBertForPreTraining} = await import('../dist/core/model/pretraining.js')
  const {openCollective} = await import('../dist/core/dist/open.js')
  const {allReduceGrads} = await import('../dist/core/dist/grads.js')
  await tf.setBackend('cpu')
  const {coll} = openCollective()
  const model = SpanBertForPreTraining.init(presetConfig('mini', 30522, {pad_token_id: 0}), 1)
  const params = model.params.entries()
  const times = []
  for (let i = 0; i < 10; i++) {
    const grads = new Map(params.map(([n, v]) => [n, tf.onesLike(v)]))
    times.push(allReduceGrads(coll, params, grads) * 1000)
    tf.dispose([...grads.values()])
  }
  const floats = params.reduce((s, [, v]) => s + v.size, 0)
  if (coll.rank === 0)
    console.log(
      `all-reduce alone, 2 ranks, ${(floats / 1e6).toFixed(1)} M floats (${((4 * floats) / 2 ** 20).toFixed(0)} MB): ${median(times).toFixed(1)} ms (median of 10; includes reading tensors to the host and back)`,
    )
  coll.close()
  model.dispose()
}
