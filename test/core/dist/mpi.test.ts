// The MPI engine and data-parallel pre-training under a real `mpirun -np 2` (Open MPI, 2 cores:
// --oversubscribe; as root it needs OMPI_ALLOW_RUN_AS_ROOT*). Skips with the reason where mpirun
// or the span_dist addon is absent. dist/ must be built (`npm test` builds it).
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {distAddonPath} from '../../../src/core/dist/addon.js'
import {readSafetensors, toFloat32} from '../../../src/core/model/safetensors.js'
import {qas, squad} from '../../commands/squad-fixture.js'
import {litbankDoc} from '../tasks/coref-helpers.js'
import {writeBlocks} from '../train/helpers.js'

const root = join(import.meta.dirname, '..', '..', '..')
const bin = join(root, 'bin', 'run.js')
const hasMpirun = spawnSync('mpirun', ['--version'], {encoding: 'utf8'}).status === 0
const why = !hasMpirun ? 'mpirun not found (apt-get install openmpi-bin libopenmpi-dev)' : !existsSync(distAddonPath()) ? 'span_dist addon not built (node native/build.mjs)' : null
/** A Slurm cluster to run srun on (never in CI: a one-node slurmctld + slurmd on this host, README "Training on many processes"). */
const srunWhy = !hasMpirun || why ? why : spawnSync('sinfo', ['-h', '-o', '%a'], {encoding: 'utf8', timeout: 5000}).stdout?.includes('up') ? null : 'no srun, or no Slurm partition up (sinfo)'
const env = {...process.env, OMPI_ALLOW_RUN_AS_ROOT: '1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: '1', OMPI_MCA_btl_vader_single_copy_mechanism: 'none'}
const MPI = ['mpirun', '-np', '2', '--oversubscribe']
const tmp = mkdtempSync(join(tmpdir(), 'span-dist-'))
const train = join(tmp, 'train.ndjson')
const TINY = ['--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--backend', 'native', '--threads', '1', '--dropout', '0', '--seed', '5', '--lr', '1e-3', '--warmup', '1', '--log-every', '1']

function run(cmd: string[], timeout = 120_000, extra: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(cmd[0], cmd.slice(1), {cwd: root, env: {...env, ...extra}, encoding: 'utf8', timeout, maxBuffer: 1 << 26})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}
const records = (s: string) => s.trimEnd().split('\n').filter((l) => l).map((l) => JSON.parse(l) as Record<string, number>)
const steps = (s: string) => records(s).filter((r) => 'loss' in r)

/** SPAN_DEBUG_TENSORS=1 makes every rank log `tensors after step N: M` (rank k > 0 behind `[rank k] `). */
const CENSUS = {SPAN_DEBUG_TENSORS: '1'}

/** Each rank's tensor count after each of its steps: the first step makes AdamW's moments, then none may grow. */
function expectNoLeak(stderr: string, steps: number): void {
  for (const rank of [0, 1]) {
    const re = new RegExp(`^${rank === 0 ? '' : `\\[rank ${rank}\\] `}span [\\w ]+: tensors after step (\\d+): (\\d+)$`, 'gm')
    const counts = [...stderr.matchAll(re)].map((m) => [Number(m[1]), Number(m[2])])
    expect(counts.map(([s]) => s), `rank ${rank}'s census`).toEqual(Array.from({length: steps}, (_, i) => i + 1))
    expect(counts.slice(1).map(([, n]) => n), `rank ${rank}'s tensors from step 2 on`).toEqual(counts.slice(1).map(() => counts[1][1]))
  }
}

/** `mpirun -np 2 [MCA…] ARGV` running: its output so far, its end, and a wait for a logged step. */
function mpiJob(argv: string[], mca: string[] = []) {
  const job = spawn(MPI[0], [...MPI.slice(1), ...mca, ...argv], {cwd: root, env})
  const out = {stdout: '', stderr: ''}
  job.stdout.on('data', (d) => (out.stdout += d))
  job.stderr.on('data', (d) => (out.stderr += d))
  const ended = new Promise<number | null>((resolve) => job.on('close', (code) => resolve(code)))
  const untilStep = async (n: number) => {
    while (!out.stdout.includes(`"step":${n},`)) await new Promise((r) => setTimeout(r, 100))
  }
  return {job, out, ended, untilStep}
}

/** The pid of rank `k` of the job writing to `out` (found by its environment and command line). */
function rankPid(k: number, out: string): number {
  const pid = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).find((p) => {
    try {
      const e = readFileSync(`/proc/${p}/environ`, 'utf8')
      return e.includes(`OMPI_COMM_WORLD_RANK=${k}\0`) && readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(out)
    } catch {
      return false
    }
  })
  expect(pid, `rank ${k} of the job writing ${out}`).toBeDefined()
  return Number(pid)
}

/**
 * The job signalled once step `at` is logged: exit code, stderr, metrics records and the last one.
 * SIGUSR2 mpirun forwards at once; on SIGINT it sends SIGTERM and SIGKILL odls_base_sigkill_timeout
 * (1 s) apart, which a loaded 2-core machine can outlast, so that test raises it. `rank`: the
 * signal goes to that rank alone, not to mpirun.
 */
async function interruptAtStep2(argv: string[], sig: 'SIGINT' | 'SIGUSR2', mca: string[] = [], o: {at?: number; rank?: number} = {}) {
  const j = mpiJob(argv, mca)
  await j.untilStep(o.at ?? 2)
  if (o.rank === undefined) j.job.kill(sig)
  else process.kill(rankPid(o.rank, argv[argv.length - 1]), sig)
  const code = await j.ended
  const recs = records(j.out.stdout)
  return {code, stderr: j.out.stderr, recs, last: recs.at(-1) as Record<string, unknown>}
}

async function weights(dir: string): Promise<Map<string, Float32Array>> {
  const f = await readSafetensors(join(dir, 'model.safetensors'))
  return new Map([...f.tensors].map(([k, t]) => [k, toFloat32(t)]))
}

/**
 * max over tensors of ‖a − b‖ / (‖a‖ + 0.1·√n): relative, with a floor for tensors whose true
 * gradient is zero and whose values are float noise (the attention key bias, which softmax ignores).
 */
async function weightGap(a: string, b: string, skip: string[] = []): Promise<number> {
  const [wa, wb] = [await weights(a), await weights(b)]
  expect([...wb.keys()].sort()).toEqual([...wa.keys()].sort())
  let worst = 0
  for (const [k, x] of wa) {
    if (skip.includes(k)) continue
    const y = wb.get(k) as Float32Array
    let d = 0
    let n = 0
    for (let i = 0; i < x.length; i++) {
      d += (x[i] - y[i]) ** 2
      n += x[i] ** 2
    }
    worst = Math.max(worst, Math.sqrt(d) / (Math.sqrt(n) + 0.1 * Math.sqrt(x.length)))
  }
  return worst
}

/** 2 ranks × batch 8, 4 steps, with the census: run once, for the batch-16 comparison and as the run the resume test continues exactly. */
let twoRanks: ReturnType<typeof run> | undefined
const twoRanksBatch8 = () => (twoRanks ??= run([...MPI, 'node', bin, 'pretrain', train, ...TINY, '--max-steps', '4', '--batch-size', '8', '--out', join(tmp, 'two')], 120_000, CENSUS))

beforeAll(() => {
  writeBlocks(train, 40, 7)
})

describe.skipIf(why !== null)(`MPI engine under mpirun -np 2${why ? ` (skipped: ${why})` : ''}`, () => {
  it('sums, broadcasts, and finds the rank whose config differs', () => {
    const r = run([...MPI, 'node', join(root, 'test', 'core', 'dist', 'mpi-worker.mjs'), 'differ'])
    expect(r.code, r.stderr).toBe(0)
    const out = records(r.stdout).sort((a, b) => a.rank - b.rank) as unknown as Record<string, unknown>[]
    expect(out.map((o) => o.rank)).toEqual([0, 1])
    for (const o of out) {
      expect(o).toMatchObject({size: 2, f32: [3, 6, 9], f64: [0.2, 2e12 + 1], bytes: [7, 8, 9], any: true})
      expect(o.agreement).toBe('rank 1 has another resolved config than rank 0; every rank must run the same command on the same data')
    }
  })

  it('2 ranks × batch 8 give the losses of 1 process × batch 16 at every step, and its weights (1e-5)', async () => {
    const one = join(tmp, 'one')
    const two = join(tmp, 'two')
    const a = run(['node', bin, 'pretrain', train, ...TINY, '--max-steps', '4', '--batch-size', '16', '--out', one])
    const b = twoRanksBatch8()
    expect(a.code, a.stderr).toBe(0)
    expect(b.code, b.stderr).toBe(0)
    expectNoLeak(b.stderr, 4) // every rank, every step (an epoch boundary at step 3)
    expect(b.stderr).toContain('effective batch 16: 2 processes × --batch-size 8 × --accumulate 1')
    expect(b.stderr).toMatch(/^\[rank 1\] span pretrain: /m)
    const [sa, sb] = [steps(a.stdout), steps(b.stdout)]
    expect(sb.map((r) => r.step)).toEqual([1, 2, 3, 4]) // rank 0 alone writes metrics
    sa.forEach((r, i) => {
      for (const k of ['loss', 'mlm_loss', 'sbo_loss', 'grad_norm']) expect(Math.abs(sb[i][k] - r[k]) / Math.abs(r[k]), `${k} at step ${r.step}`).toBeLessThan(1e-5)
      for (const k of ['mlm_acc', 'sbo_acc']) expect(sb[i][k]).toBe(r[k])
    })
    expect(await weightGap(join(one, 'checkpoint-4'), join(two, 'checkpoint-4'))).toBeLessThan(1e-5)
    expect(JSON.parse(readFileSync(join(two, 'checkpoint-4', 'trainer_state.json'), 'utf8')).world).toBe(2)
  })

  it('with dropout, 2 ranks × batch 8 and 1 × batch 16 differ mask for mask but agree in loss (2%)', () => {
    const withDropout = TINY.filter((x, i) => x !== '--dropout' && TINY[i - 1] !== '--dropout')
    const a = run(['node', bin, 'pretrain', train, ...withDropout, '--max-steps', '4', '--batch-size', '16', '--out', join(tmp, 'd1')])
    const b = run([...MPI, 'node', bin, 'pretrain', train, ...withDropout, '--max-steps', '4', '--batch-size', '8', '--out', join(tmp, 'd2')])
    expect(a.code, a.stderr).toBe(0)
    expect(b.code, b.stderr).toBe(0)
    const mean = (s: string) => steps(s).reduce((t, r) => t + r.loss, 0) / 4
    expect(steps(b.stdout).map((r) => r.loss)).not.toEqual(steps(a.stdout).map((r) => r.loss)) // other masks (per rank and step)
    expect(Math.abs(mean(b.stdout) - mean(a.stdout)) / mean(a.stdout)).toBeLessThan(0.02)
  })

  it('finetune glue: 2 ranks × batch 4 match 1 process × batch 8, the last batch split unevenly', async () => {
    const tsv = join(tmp, 'sst2.tsv')
    const words = ['good', 'bad', 'fine', 'dull', 'warm', 'slow', 'funny', 'flat', 'bright', 'grim']
    writeFileSync(tsv, 'sentence\tlabel\n' + Array.from({length: 30}, (_, i) => `${words[i % 10]} and ${words[(i * 3) % 10]} film ${i}\t${i % 2}`).join('\n') + '\n')
    const ft = (out: string, bs: string) => ['node', bin, 'finetune', 'glue', '--task', 'sst-2', '--preset', 'tiny', '--train', tsv, '--max-len', '16', '--epochs', '2', '--lr', '1e-3',
      '--log-every', '1', '--backend', 'native', '--threads', '1', '--dropout', '0', '--batch-size', bs, '--out', join(tmp, out)]
    const a = run(ft('g1', '8'))
    const b = run([...MPI, ...ft('g2', '4')], 120_000, CENSUS)
    expect(a.code, a.stderr).toBe(0)
    expect(b.code, b.stderr).toBe(0)
    expectNoLeak(b.stderr, 8) // the shared loop at world 2, an epoch end (checkpoint) at step 4
    const [ra, rb] = [records(a.stdout), records(b.stdout)]
    expect(rb.map((r) => r.step)).toEqual(ra.map((r) => r.step)) // 4 steps per epoch: 30 examples in global batches of 8
    const [la, lb] = [steps(a.stdout), steps(b.stdout)]
    expect(la.length).toBe(8)
    la.forEach((r, i) => expect(Math.abs(lb[i].loss - r.loss) / r.loss, `step ${r.step}`).toBeLessThan(1e-5))
    expect(await weightGap(join(tmp, 'g1', 'best'), join(tmp, 'g2', 'best'))).toBeLessThan(1e-5)
    const c2 = run([...ft('g2', '4'), '--resume', join(tmp, 'g2')]) // the shared loop saved world 2 (g2's checkpoints); one process may not continue it
    expect(c2.code).toBe(1)
    expect(c2.stderr).toMatch(/the run was trained on 2 processes, this one has 1; resume with the same number \(mpirun -np 2\)/)
  })

  it('finetune ner (the shared loop, a newer task): 2 ranks × batch 3 match 1 process × batch 6, leak no tensor, resume exactly', async () => {
    const conll = join(tmp, 'ner.conll')
    const ents = [['Paris', 'LOC'], ['Anna', 'PER'], ['Siemens', 'ORG'], ['Rome', 'LOC'], ['Olaf', 'PER'], ['Fiat', 'ORG'], ['Euro', 'MISC']]
    const sentence = (i: number) => [`${ents[i % 7][0]} NNP B-NP B-${ents[i % 7][1]}`, `met NN I-NP O`, `${ents[(i * 3) % 7][0]} NNP I-NP B-${ents[(i * 3) % 7][1]}`, `${i % 5 ? 'today' : 'again'} RB O O`].join('\n')
    writeFileSync(conll, '-DOCSTART- -X- O O\n\n' + Array.from({length: 22}, (_, i) => sentence(i)).join('\n\n') + '\n')
    const ft = (out: string, bs: string) => ['node', bin, 'finetune', 'ner', '--preset', 'tiny', '--train', conll, '--max-len', '16', '--epochs', '2', '--lr', '1e-3',
      '--log-every', '1', '--backend', 'native', '--threads', '1', '--dropout', '0', '--batch-size', bs, '--out', join(tmp, out)]
    const a = run(ft('n1', '6'))
    const b = run([...MPI, ...ft('n2', '3')], 120_000, CENSUS)
    expect(a.code, a.stderr).toBe(0)
    expect(b.code, b.stderr).toBe(0)
    expect(b.stderr).toContain('effective batch 6: 2 processes × --batch-size 3 × --accumulate 1')
    const [la, lb] = [steps(a.stdout), steps(b.stdout)]
    expect(la.map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]) // 22 sentences in global batches of 6: the 4th of each epoch split 3 + 1
    expect(lb.map((r) => r.step)).toEqual(la.map((r) => r.step))
    la.forEach((r, i) => expect(Math.abs(lb[i].loss - r.loss) / r.loss, `step ${r.step}`).toBeLessThan(1e-5))
    expect(await weightGap(join(tmp, 'n1', 'best'), join(tmp, 'n2', 'best'))).toBeLessThan(1e-5)
    expectNoLeak(b.stderr, 8)
    const c1 = run([...MPI, ...ft('n3', '3'), '--stop-at', '3']) // exact resume at world size 2, mid-epoch
    const c2 = run([...MPI, ...ft('n3', '3'), '--resume', join(tmp, 'n3')])
    for (const r of [c1, c2]) expect(r.code, r.stderr).toBe(0)
    expect(steps(c2.stdout).map((r) => [r.step, r.loss])).toEqual(lb.slice(3).map((r) => [r.step, r.loss]))
    expect(await weightGap(join(tmp, 'n2', 'best'), join(tmp, 'n3', 'best'))).toBe(0)
  })

  it('finetune coref: 2 ranks × batch 1 match 1 process × batch 2 (whole documents: no random run drawn), leak no tensor', async () => {
    const conll = join(tmp, 'coref.conll')
    writeFileSync(conll, ['a', 'b', 'c', 'd', 'e'].map((n, i) => litbankDoc(n, 1 + (i % 2))).join(''))
    const ft = (out: string, bs: string) => ['node', bin, 'finetune', 'coref', '--preset', 'tiny', '--train', conll, '--max-segment-len', '16', '--max-training-segments', '8',
      '--ffnn-size', '16', '--max-span-width', '4', '--top-span-ratio', '1', '--epochs', '1', '--lr', '1e-4', '--task-lr', '1e-4', '--log-every', '1', '--backend', 'native', '--threads', '1',
      '--dropout', '0', '--coref-dropout', '0', '--batch-size', bs, '--out', join(tmp, out)]
    const a = run(ft('c1', '2'))
    const b = run([...MPI, ...ft('c2', '1')], 120_000, CENSUS)
    expect(a.code, a.stderr).toBe(0)
    expect(b.code, b.stderr).toBe(0)
    const [la, lb] = [steps(a.stdout), steps(b.stdout)]
    expect(la.map((r) => r.step)).toEqual([1, 2, 3]) // 5 documents in global batches of 2: the last one alone on rank 0
    expect(lb.map((r) => r.step)).toEqual(la.map((r) => r.step))
    la.forEach((r, i) => expect(Math.abs(lb[i].loss - r.loss) / r.loss, `step ${r.step}`).toBeLessThan(1e-5))
    expect(await weightGap(join(tmp, 'c1', 'checkpoint-3'), join(tmp, 'c2', 'checkpoint-3'))).toBeLessThan(1e-4)
    expectNoLeak(b.stderr, 3)
  })

  it('finetune squad: 2 ranks × batch 2 × accumulate 2 match 1 process × batch 4 × accumulate 2', async () => {
    const json = join(tmp, 'squad.json')
    writeFileSync(json, squad([...qas, ...qas.map((q) => ({...q, id: `${q.id}b`}))]))
    const ft = (out: string, bs: string) => ['node', bin, 'finetune', 'squad', '--preset', 'tiny', '--train', json, '--max-len', '32', '--doc-stride', '8', '--max-query-len', '8',
      '--epochs', '2', '--lr', '1e-3', '--log-every', '1', '--accumulate', '2', '--backend', 'native', '--threads', '1', '--dropout', '0', '--batch-size', bs, '--out', join(tmp, out)]
    const a = run(ft('s1', '4'))
    const b = run([...MPI, ...ft('s2', '2')])
    expect(a.code, a.stderr).toBe(0)
    expect(b.code, b.stderr).toBe(0)
    const [ra, rb] = [records(a.stdout), records(b.stdout)]
    expect(rb.map((r) => r.step)).toEqual(ra.map((r) => r.step))
    const [la, lb] = [steps(a.stdout), steps(b.stdout)]
    expect(la.length).toBeGreaterThan(1)
    la.forEach((r, i) => expect(Math.abs(lb[i].loss - r.loss) / r.loss, `step ${r.step}`).toBeLessThan(1e-5))
    // 1e-4 here: a few of this tiny run's parameters (the last LayerNorm bias) get gradients near 0,
    // whose summation-order noise AdamW's normalisation turns into updates of lr size; qa_outputs.bias
    // is left out: its true gradient is exactly 0 (a softmax over positions ignores a shift), so its
    // updates are AdamW-normalised float noise in both runs
    expect(await weightGap(join(tmp, 's1', 'best'), join(tmp, 's2', 'best'), ['qa_outputs.bias'])).toBeLessThan(1e-4)
  })

  it('resumes exactly at world size 2 and refuses another', async () => {
    const full = join(tmp, 'two') // the uninterrupted run: 2 ranks × batch 8, 4 steps
    const part = join(tmp, 'part')
    const a = twoRanksBatch8()
    const b1 = run([...MPI, 'node', bin, 'pretrain', train, ...TINY, '--max-steps', '4', '--batch-size', '8', '--stop-at', '2', '--out', part])
    const b2 = run([...MPI, 'node', bin, 'pretrain', '--resume', part, '--threads', '1'])
    for (const r of [a, b1, b2]) expect(r.code, r.stderr).toBe(0)
    expect(steps(b2.stdout)).toEqual(steps(a.stdout).slice(2).map((r) => ({...r, tokens_per_s: steps(b2.stdout)[r.step - 3].tokens_per_s})))
    expect(await weightGap(join(full, 'checkpoint-4'), join(part, 'checkpoint-4'))).toBe(0)
    const c = run(['node', bin, 'pretrain', '--resume', part, '--threads', '1'])
    expect(c.code).toBe(1)
    expect(c.stderr).toMatch(/the run was trained on 2 processes, this one has 1; resume with the same number \(mpirun -np 2\)/)
  })

  it('stops every rank with one message when their configs differ', () => {
    const cmd = (wd: string) => ['node', bin, 'pretrain', train, ...TINY, '--max-steps', '2', '--batch-size', '4', '--weight-decay', wd, '--out', join(tmp, 'mix')]
    const r = run(['mpirun', '--oversubscribe', '-np', '1', ...cmd('0.01'), ':', '-np', '1', ...cmd('0.02')])
    expect(r.code, r.stderr).not.toBe(0)
    const lines = r.stderr.split('\n').filter((l) => l.includes('another resolved config or data'))
    expect(lines, r.stderr).toEqual(['span pretrain: rank 1 has another resolved config or data than rank 0; every rank must run the same command on the same data'])
    expect(existsSync(join(tmp, 'mix'))).toBe(false)
  })

  it('stops every rank with one message when their data differ under the same config (same relative paths, other directories)', () => {
    const [d0, d1] = [join(tmp, 'wd0'), join(tmp, 'wd1')]
    const rows = (flip: number) => 'sentence\tlabel\n' + Array.from({length: 8}, (_, i) => `film ${i}\t${(i + (i === 3 ? flip : 0)) % 2}`).join('\n') + '\n'
    for (const [d, flip] of [[d0, 0], [d1, 1]] as const) {
      mkdirSync(d)
      writeFileSync(join(d, 'train.tsv'), rows(flip)) // the same sentences and tokens; one label differs
      writeFileSync(join(d, 'train.ndjson'), readFileSync(train, 'utf8').replace(/"ids":\[2,(\d+)/, d === d1 ? '"ids":[2,7' : '"ids":[2,$1'))
    }
    const jobs = [
      ['pretrain', 'train.ndjson', ...TINY, '--max-steps', '2', '--batch-size', '4', '--out', 'p'],
      ['finetune', 'glue', '--task', 'sst-2', '--preset', 'tiny', '--train', 'train.tsv', '--max-len', '8', '--backend', 'native', '--threads', '1', '--batch-size', '2', '--out', 'g'],
    ]
    for (const args of jobs) {
      const r = run(['mpirun', '--oversubscribe', '-np', '1', '-wdir', d0, 'node', bin, ...args, ':', '-np', '1', '-wdir', d1, 'node', bin, ...args])
      expect(r.code, r.stderr).not.toBe(0)
      const lines = r.stderr.split('\n').filter((l) => l.includes('another resolved config or data'))
      expect(lines, r.stderr).toEqual([`span ${args[0] === 'pretrain' ? 'pretrain' : 'finetune glue'}: rank 1 has another resolved config or data than rank 0; every rank must run the same command on the same data`])
    }
  })

  it('a rank that fails (rank 0 cannot write its checkpoint) ends the job at once, naming itself', () => {
    const first = run([...MPI, 'node', bin, 'pretrain', train, ...TINY, '--max-steps', '1000', '--save-every', '2', '--batch-size', '4', '--stop-at', '1', '--out', join(tmp, 'blocked')])
    expect(first.code, first.stderr).toBe(0)
    writeFileSync(join(tmp, 'blocked', 'checkpoint-2'), 'x') // a file where rank 0 saves step 2 (a new run refuses a directory that holds anything: this one resumes)
    const t0 = Date.now()
    const r = run([...MPI, 'node', bin, 'pretrain', '--resume', join(tmp, 'blocked', 'checkpoint-1')], 60_000) // its checkpoint, not the newest name
    expect(Date.now() - t0).toBeLessThan(60_000)
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/^span pretrain: rank 0 failed: .*blocked\/checkpoint-2: could not save the checkpoint of step 2: .*; ending the job$/m)
    // Open MPI's own note; under load its show_help relay sometimes loses it (ORTE_ERROR_LOG: Data unpack would read past end of buffer … show_help.c)
    expect(r.stderr).toMatch(/MPI_ABORT was invoked on rank 0|ORTE_ERROR_LOG: .*show_help\.c/)
  })

  it('SIGUSR2 to mpirun: every rank stops after the same step, rank 0 saves one checkpoint, and the start said so', async () => {
    const out = join(tmp, 'interrupted')
    const {code, stderr, recs, last} = await interruptAtStep2(['node', bin, 'pretrain', train, ...TINY, '--max-steps', '100000', '--batch-size', '4', '--out', out], 'SIGUSR2')
    expect(code).toBe(140) // rank 0's status (128 + SIGUSR2); the other ranks end 0, so mpirun aborts nothing early
    expect(last).toEqual({step: recs.at(-2)?.step, checkpoint: join(out, `checkpoint-${String(recs.at(-2)?.step)}`)})
    expect(JSON.parse(readFileSync(join(out, `checkpoint-${String(last.step)}`, 'trainer_state.json'), 'utf8'))).toMatchObject({step: last.step, world: 2})
    expect(stderr.match(/^span pretrain: SIGUSR2 at step \d+: saving a checkpoint/gm)).toHaveLength(1)
    expect(stderr).toContain(`[rank 1] span pretrain: SIGUSR2 at step ${last.step}: stopping; rank 0 saves the checkpoint`)
    expect(stderr).not.toContain('[rank 1] span pretrain: saved')
    expect(stderr).toMatch(/^span pretrain: to stop with a checkpoint: kill -USR2 <mpirun's pid> \(Open MPI SIGKILLs the ranks 1 s after/m)
    expect(existsSync(join(out, '.span.lock'))).toBe(false)
  }, 120_000)

  it('SIGUSR2 to rank 1 alone: rank 0 stops at the same step under the signal rank 1 caught, saves, and ends 140', async () => {
    const out = join(tmp, 'one-rank')
    const {code, stderr, last} = await interruptAtStep2(['node', bin, 'pretrain', train, ...TINY, '--max-steps', '100000', '--batch-size', '4', '--out', out], 'SIGUSR2', [], {rank: 1})
    expect(code, stderr).toBe(140) // not 143: rank 0 caught nothing and named the stop SIGTERM
    expect(stderr).toMatch(new RegExp(`^span pretrain: SIGUSR2 at step ${String(last.step)}: saving a checkpoint`, 'm'))
    expect(last).toEqual({step: last.step, checkpoint: join(out, `checkpoint-${String(last.step)}`)})
    expect(existsSync(join(out, '.span.lock'))).toBe(false)
  }, 120_000)

  // From Ctrl-C to its SIGKILL mpirun sleeps (odls_base_sigkill_timeout twice) and reads none of
  // the ranks' output, whose stdout is a pty of about 16 KB; the ranks train on until the SIGTERM.
  // At --log-every 1 the pty fills (~130 records) long before it: rank 0 used to block in write(2)
  // until killed, its checkpoint unsaved. Now its records wait in memory (written off the main
  // thread), the SIGTERM is seen at the step's end and the checkpoint saved; the records still
  // queued when the SIGKILL comes are lost, the checkpoint is not (docs/formats.md#stdout-and-signals).
  it('SIGINT to mpirun during finetune glue at --log-every 1: every rank stops after the same step, one checkpoint, and --resume continues it', async () => {
    const tsv = join(tmp, 'sst2-int.tsv')
    writeFileSync(tsv, 'sentence\tlabel\n' + Array.from({length: 400}, (_, i) => `film ${i} was ${i % 2 ? 'good' : 'bad'}\t${i % 2}`).join('\n') + '\n')
    const out = join(tmp, 'ft-int')
    const ft = ['node', bin, 'finetune', 'glue', '--task', 'sst-2', '--preset', 'tiny', '--train', tsv, '--max-len', '16', '--epochs', '5000', '--log-every', '1', '--backend', 'native', '--threads', '1', '--dropout', '0', '--batch-size', '4', '--out', out]
    const j = mpiJob(ft, ['--mca', 'odls_base_sigkill_timeout', '10'])
    await j.untilStep(5)
    j.job.kill('SIGINT')
    const code = await j.ended
    const stderr = j.out.stderr
    expect(code).not.toBe(0)
    expect(stderr.match(/^span finetune glue: SIG\w+ at step \d+: saving a checkpoint/gm)).toHaveLength(1)
    const saved = /^span finetune glue: saved the checkpoint of step (\d+); continue with --resume/m.exec(stderr)
    expect(saved, stderr).not.toBeNull()
    const stop = Number(saved?.[1])
    expect(JSON.parse(readFileSync(join(out, `checkpoint-${String(stop)}`, 'trainer_state.json'), 'utf8'))).toMatchObject({step: stop, world: 2})
    expect(stderr).toContain(`[rank 1] span finetune glue: SIGTERM at step ${String(stop)}: stopping; rank 0 saves the checkpoint`)
    expect(stderr).toMatch(/^span finetune glue: to stop with a checkpoint: kill -USR2 .*SIGKILLs the ranks 10 s after/m)
    // stdout as far as mpirun passed it on: whole records in order, none twice, none past the stop
    const lines = j.out.stdout.split('\n').slice(0, -1) // a line cut by the SIGKILL has no newline
    const trained = lines.map((l) => JSON.parse(l) as Record<string, number>).filter((r) => 'loss' in r)
    expect(trained.map((r) => r.step)).toEqual(Array.from({length: trained.length}, (_, i) => i + 1))
    expect(trained.length).toBeLessThanOrEqual(stop)
    const more = run([...MPI, ...ft, '--resume', out, '--stop-at', String(stop + 1)])
    expect(more.code, more.stderr).toBe(0)
    expect(steps(more.stdout).map((r) => r.step)).toEqual([stop + 1])
  }, 120_000)

  it('ends the job within 60 s, naming the rank, when a rank is killed mid-run', async () => {
    const out = join(tmp, 'killed')
    const {out: output, ended, untilStep} = mpiJob(['node', bin, 'pretrain', train, ...TINY, '--max-steps', '100000', '--batch-size', '4', '--out', out])
    await untilStep(3)
    const t0 = Date.now()
    process.kill(rankPid(1, out), 'SIGKILL')
    const code = await ended
    expect(Date.now() - t0).toBeLessThan(60_000)
    expect(code).not.toBe(0)
    expect(output.stderr).toMatch(/process rank 1 .*exited on signal 9/)
  }, 120_000)

  it('a stopped rank holds the others in a collective: past SPAN_COLLECTIVE_TIMEOUT they end the job, saying why', async () => {
    const out = join(tmp, 'stopped')
    const {out: output, ended, untilStep} = mpiJob(['node', bin, 'pretrain', train, ...TINY, '--max-steps', '100000', '--batch-size', '4', '--out', out], ['-x', 'SPAN_COLLECTIVE_TIMEOUT=3'])
    await untilStep(3)
    const pid = rankPid(1, out)
    const t0 = Date.now()
    process.kill(pid, 'SIGSTOP') // as a debugger, a ^Z or a stuck file system would
    try {
      expect(await ended).not.toBe(0)
    } finally {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // mpirun ended it
      }
    }
    expect(Date.now() - t0).toBeGreaterThan(3000)
    expect(Date.now() - t0).toBeLessThan(60_000)
    expect(output.stderr).toMatch(/^span pretrain: rank 0 waited \d+ s in (all-reduce|broadcast) for the other ranks \(one is hung, stopped or far behind\); ending the job \(SPAN_COLLECTIVE_TIMEOUT=3\)$/m)
    expect(output.stderr).toMatch(/process rank 0 .*exited on signal 9/)
  }, 120_000)
})

describe.skipIf(srunWhy !== null)(`Slurm's srun -n 2 --mpi=pmix${srunWhy ? ` (skipped: ${srunWhy})` : ''}`, () => {
  it('starts the ranks directly (Open MPI over PMIx): the losses and weights of 1 process × twice the batch', async () => {
    const a = run(['node', bin, 'pretrain', train, ...TINY, '--max-steps', '3', '--batch-size', '16', '--out', join(tmp, 'srun1')])
    const b = run(['srun', '-n', '2', '--mpi=pmix', '-t', '5', 'node', bin, 'pretrain', train, ...TINY, '--max-steps', '3', '--batch-size', '8', '--out', join(tmp, 'srun2')])
    expect(a.code, a.stderr).toBe(0)
    expect(b.code, b.stderr).toBe(0)
    expect(b.stderr).toMatch(/^\[rank 1\] span pretrain: effective batch 16: 2 processes/m) // SLURM_PROCID 1 of SLURM_NTASKS 2
    const [sa, sb] = [steps(a.stdout), steps(b.stdout)]
    expect(sb.map((r) => r.step)).toEqual([1, 2, 3])
    sa.forEach((r, i) => expect(Math.abs(sb[i].loss - r.loss) / r.loss, `step ${r.step}`).toBeLessThan(1e-5))
    expect(await weightGap(join(tmp, 'srun1', 'checkpoint-3'), join(tmp, 'srun2', 'checkpoint-3'))).toBeLessThan(1e-5)
  })

  it('srun --mpi=none: every task refuses in one line, naming --mpi=pmix', () => {
    const r = run(['srun', '-n', '2', '--mpi=none', '-t', '5', 'node', bin, 'pretrain', train, ...TINY, '--max-steps', '1', '--batch-size', '8', '--out', join(tmp, 'srun0')])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/^span pretrain: srun started 2 tasks without a process-management interface \(srun --mpi=none\): .*run srun --mpi=pmix/m)
    expect(r.stderr).toMatch(/^\[rank 1\] span pretrain: srun started 2 tasks without/m) // each task's line says which it is
    expect(existsSync(join(tmp, 'srun0'))).toBe(false)
  })
})

it('has a writable temp dir for the MPI tests', () => {
  writeFileSync(join(tmp, 'ok'), 'ok')
  expect(readFileSync(join(tmp, 'ok'), 'utf8')).toBe('ok')
})
