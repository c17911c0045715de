// Data parallel on device tensors: `mpirun -np 2 span … --backend cuda` on the stand-in device
// with the stand-in libnccl (native/cuda/standin/nccl: its ranks meet through Open MPI, its
// collectives run in stream order). Two ranks × batch b give one process × batch 2b; a missing
// NCCL and two ranks on one device are one line. Skips with the reason where mpirun, the
// span_dist addon or a C++ compiler for the stand-ins is absent. dist/ must be built.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {distAddonPath} from '../../../src/core/dist/addon.js'
import {ncclLibrary, ncclVersion} from '../../../src/core/dist/nccl.js'
import {probeDistEngines} from '../../../src/core/dist/probe.js'
import {readSafetensors, toFloat32} from '../../../src/core/model/safetensors.js'
import {buildStandins} from '../../helpers/cuda-standins.js'
import {writeBlocks} from '../train/helpers.js'

const root = join(import.meta.dirname, '..', '..', '..')
const bin = join(root, 'bin', 'run.js')
const standins = buildStandins()
const hasMpirun = spawnSync('mpirun', ['--version'], {encoding: 'utf8'}).status === 0
const why = !hasMpirun ? 'mpirun not found (apt-get install openmpi-bin libopenmpi-dev)' : !existsSync(distAddonPath()) ? 'span_dist addon not built' : 'error' in standins ? standins.error : null
const dir = 'dir' in standins ? standins.dir : ''
// two stand-in devices: each rank takes its local rank's; stand-in failures are said by span's own line
const env = {...process.env, OMPI_ALLOW_RUN_AS_ROOT: '1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: '1', OMPI_MCA_btl_vader_single_copy_mechanism: 'none', SPAN_CUDA_LIBS: dir, SPAN_STANDIN_DEVICES: '2', SPAN_STANDIN_QUIET: '1'}
const MPI = (n: number) => ['mpirun', '-np', String(n), '--oversubscribe']
const tmp = mkdtempSync(join(tmpdir(), 'span-nccl-'))
const train = join(tmp, 'train.ndjson')
const TINY = ['--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--backend', 'cuda', '--dropout', '0', '--seed', '5', '--lr', '1e-3', '--warmup', '1', '--log-every', '1']
const NCCL_LINE = /^span [\w ]+: gradients all-reduced on the devices by NCCL 2\.27\.3 \(2 ranks, one device each\)$/m

function run(cmd: string[], extra: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(cmd[0], cmd.slice(1), {cwd: root, env: {...env, ...extra}, encoding: 'utf8', timeout: 180_000, maxBuffer: 1 << 26})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}
const losses = (s: string) => s.split('\n').filter((l) => l.includes('"loss"')).map((l) => JSON.parse(l) as {step: number; loss: number})
const spanLines = (s: string) => s.split('\n').filter((l) => /^(\[rank \d\] )?span /.test(l))

/** max over tensors of ‖a − b‖ / (‖a‖ + 0.1·√n) (as test/core/dist/mpi.test.ts measures it). */
async function weightGap(a: string, b: string): Promise<number> {
  const [fa, fb] = [await readSafetensors(join(a, 'model.safetensors')), await readSafetensors(join(b, 'model.safetensors'))]
  expect([...fb.tensors.keys()].sort()).toEqual([...fa.tensors.keys()].sort())
  let worst = 0
  for (const [k, t] of fa.tensors) {
    const [x, y] = [toFloat32(t), toFloat32(fb.tensors.get(k) as typeof t)]
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

function expectSameLosses(one: string, two: string, count: number): void {
  const [a, b] = [losses(one), losses(two)]
  expect(a.length).toBe(count)
  expect(b.map((r) => r.step)).toEqual(a.map((r) => r.step))
  a.forEach((r, i) => expect(Math.abs(b[i].loss - r.loss) / r.loss, `step ${r.step}`).toBeLessThan(1e-5))
}

beforeAll(() => {
  writeBlocks(train, 40, 7)
})

describe('where NCCL is looked for, and what span doctor says', () => {
  it('SPAN_NCCL_LIB, else SPAN_CUDA_LIBS folders, else NVIDIA wheel folders under a site-packages, else the system loader', () => {
    const files: Record<string, string[]> = {'/b': ['libnccl.so.2'], '/venv/lib/python3.12/site-packages/nvidia/nccl/lib': ['libnccl.so.2'], '/venv/lib': ['python3.12']}
    const fs = {isDir: (p: string) => p in files || p === '/venv/lib/python3.12/site-packages', list: (p: string) => files[p] ?? []}
    const at = (env: Record<string, string>) => ncclLibrary(env, {env, home: '/nohome', fs})
    expect(at({SPAN_NCCL_LIB: '/x/libnccl.so.2', SPAN_CUDA_LIBS: '/b'})).toBe('/x/libnccl.so.2')
    expect(at({SPAN_CUDA_LIBS: '/a::/b', VIRTUAL_ENV: '/venv'})).toBe('/b/libnccl.so.2')
    expect(at({SPAN_CUDA_LIBS: '/a', VIRTUAL_ENV: '/venv'})).toBe('/venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2')
    expect(at({SPAN_CUDA_LIBS: '/a'})).toBe('libnccl.so.2')
    expect([ncclVersion(22703), ncclVersion(2804)]).toEqual(['2.27.3', '2.8.4'])
  })

  it.skipIf(why !== null)('span doctor: the stand-in through SPAN_CUDA_LIBS, in one line', () => {
    const nccl = probeDistEngines({SPAN_CUDA_LIBS: dir}).find((e) => e.engine === 'nccl')
    expect(nccl).toEqual({engine: 'nccl', available: true, detail: `NCCL 2.27.3 (${join(dir, 'libnccl.so.2')}); data-parallel training on --backend cuda all-reduces gradients on the device with it (MPI starts the ranks)`})
  })
})

describe.skipIf(why !== null)(`NCCL on the cuda stand-in under mpirun${why ? ` (skipped: ${why})` : ''}`, () => {
  // SPAN_STANDIN_DEFER=1: kernels and collectives wait in stream order for a synchronisation, so an
  // all-reduce issued before its inputs were computed, or read before it ran, gives other losses.
  it('pretrain: 2 ranks × batch 8 give the losses of 1 process × batch 16 (1e-5) and its weights (1e-3), leaking no tensor', async () => {
    const a = run(['node', bin, 'pretrain', train, ...TINY, '--max-steps', '3', '--batch-size', '16', '--out', join(tmp, 'p1')])
    const b = run([...MPI(2), '-x', 'SPAN_STANDIN_DEFER=1', 'node', bin, 'pretrain', train, ...TINY, '--max-steps', '3', '--batch-size', '8', '--out', join(tmp, 'p2')], {SPAN_DEBUG_TENSORS: '1'})
    expect(a.code, a.stderr).toBe(0)
    expect(b.code, b.stderr).toBe(0)
    expect(b.stderr).toMatch(NCCL_LINE)
    expectSameLosses(a.stdout, b.stdout, 3)
    expect(await weightGap(join(tmp, 'p1', 'checkpoint-3'), join(tmp, 'p2', 'checkpoint-3'))).toBeLessThan(1e-3)
    for (const rank of ['', '\\[rank 1\\] ']) {
      const census = [...b.stderr.matchAll(new RegExp(`^${rank}span pretrain: tensors after step (\\d+): (\\d+), device bytes (\\d+)$`, 'gm'))]
      expect(census.map((m) => Number(m[1])), `rank ${rank || 0}'s census`).toEqual([1, 2, 3])
      for (const k of [2, 3]) expect(census.slice(1).map((m) => Number(m[k])), 'tensors and device bytes from step 2 on').toEqual([census[1][k], census[1][k]].map(Number))
    }
  })

  it('finetune glue: 2 ranks × batch 4 match 1 process × batch 8, the last batch split unevenly', async () => {
    const tsv = join(tmp, 'sst2.tsv')
    const words = ['good', 'bad', 'fine', 'dull', 'warm', 'slow', 'funny', 'flat', 'bright', 'grim']
    writeFileSync(tsv, 'sentence\tlabel\n' + Array.from({length: 14}, (_, i) => `${words[i % 10]} and ${words[(i * 3) % 10]} film ${i}\t${i % 2}`).join('\n') + '\n')
    const ft = (out: string, bs: string) => ['node', bin, 'finetune', 'glue', '--task', 'sst-2', '--preset', 'tiny', '--train', tsv, '--max-len', '16', '--epochs', '1', '--lr', '1e-3',
      '--log-every', '1', '--backend', 'cuda', '--dropout', '0', '--batch-size', bs, '--out', join(tmp, out)]
    const a = run(ft('g1', '8'))
    const b = run([...MPI(2), ...ft('g2', '4')])
    expect(a.code, a.stderr).toBe(0)
    expect(b.code, b.stderr).toBe(0)
    expect(b.stderr).toMatch(NCCL_LINE)
    expectSameLosses(a.stdout, b.stdout, 2) // 14 examples in global batches of 8: the last has 6, 4 on rank 0 and 2 on rank 1
    expect(await weightGap(join(tmp, 'g1', 'best'), join(tmp, 'g2', 'best'))).toBeLessThan(1e-3)
  })

  it('world size 1 on cuda (mpirun -np 1) is one process: the same losses, no NCCL', () => {
    const a = run(['node', bin, 'pretrain', train, ...TINY, '--max-steps', '2', '--batch-size', '8', '--out', join(tmp, 'w1a')])
    const b = run([...MPI(1), 'node', bin, 'pretrain', train, ...TINY, '--max-steps', '2', '--batch-size', '8', '--out', join(tmp, 'w1b')])
    expect(b.code, b.stderr).toBe(0)
    expect(b.stderr).not.toContain('NCCL')
    expectSameLosses(a.stdout, b.stdout, 2)
  })

  it('the stand-in: all-reduces summed in rank order (the same bytes on every rank), averages, broadcasts, grouped, in stream order', () => {
    const worker = ['node', join(root, 'test', 'core', 'dist', 'nccl-worker.mjs')]
    // deferred or not; NCCL_COMM_ID: every rank derives the id from the address instead of rank 0 broadcasting it
    for (const extra of [{SPAN_STANDIN_DEFER: '0'}, {SPAN_STANDIN_DEFER: '1'}, {NCCL_COMM_ID: '127.0.0.1:29511'}]) {
      const r = run([...MPI(3), ...worker], {SPAN_STANDIN_DEVICES: '3', ...extra})
      expect(r.code, r.stderr).toBe(0)
      const out = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
      expect(out.map((o) => o.rank).sort()).toEqual([0, 1, 2])
      for (const o of out) expect(o).toMatchObject({sum: [0, 6, 3, -3], avg: [0, 2, 1, -1], bcast: [9, 8, 7, 6], inPlace: [0, 6, 3, -3]})
    }
    const own = run([...MPI(3), ...worker, 'own-id'], {SPAN_STANDIN_DEVICES: '3'}) // no broadcast of rank 0's id: refused on every rank
    expect(own.code, own.stderr).toBe(0)
    for (const o of own.stdout.trim().split('\n').map((l) => JSON.parse(l) as {error: string})) {
      expect(o.error).toMatch(/^ncclCommInitRank: invalid usage \(ncclCommInitRank: MPI rank \d holds another unique id/)
    }
  })

  it('without NCCL, or with two ranks on one device, every rank stops and rank 0 says why in one line', () => {
    const cmd = (out: string, ...more: string[]) => [...MPI(2), ...more, 'node', bin, 'pretrain', train, ...TINY, '--max-steps', '1', '--batch-size', '4', '--out', join(tmp, out)]
    const none = run(cmd('none', '-x', 'SPAN_NCCL_LIB=libnccl-absent.so.2'))
    expect(none.code).not.toBe(0)
    expect(spanLines(none.stderr).filter((l) => !/config:|memory plan|model:|effective batch/.test(l))).toEqual([
      'span pretrain: --backend cuda on 2 processes needs NCCL: libnccl-absent.so.2: cannot open shared object file: No such file or directory',
    ])
    const same = run([...cmd('same'), '--device', '0'])
    expect(same.code).not.toBe(0)
    expect(spanLines(same.stderr).filter((l) => l.includes('NCCL'))).toEqual([
      'span pretrain: NCCL could not make its communicator (device 0): ncclCommInitRank: invalid usage (Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 0); each rank needs its own device (leave --device out: a rank takes its local rank\'s)',
    ])
  })
})
