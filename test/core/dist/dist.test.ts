// core/dist without a launcher: the launcher variables, buckets, the [rank k] prefix, the NCCL
// unique-id plumbing over a fake two-rank broadcast, and engines whose library is absent.
import {spawnSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {Writable} from 'node:stream'
import * as tf from '@tensorflow/tfjs'
import {describe, expect, it} from 'vitest'
import {distAddonPath} from '../../../src/core/dist/addon.js'
import {type Collective, SingleProcess, checkAgreement} from '../../../src/core/dist/collective.js'
import {allReduceGrads, buckets} from '../../../src/core/dist/grads.js'
import {deviceOf, launchEnv} from '../../../src/core/util/launch.js'
import {NCCL_UNIQUE_ID_BYTES, ncclUniqueId} from '../../../src/core/dist/nccl.js'
import {openCollective} from '../../../src/core/dist/open.js'
import {probeDistEngines} from '../../../src/core/dist/probe.js'
import {prefixStderr} from '../../../src/core/dist/rank-log.js'

const root = join(import.meta.dirname, '..', '..', '..')

describe('launchEnv', () => {
  it('reads Open MPI, Slurm and torchrun variables, in that order, and is one process without them', () => {
    expect(launchEnv({})).toEqual({launcher: 'none', rank: 0, size: 1, localRank: 0, master: null})
    expect(launchEnv({OMPI_COMM_WORLD_RANK: '3', OMPI_COMM_WORLD_SIZE: '4', OMPI_COMM_WORLD_LOCAL_RANK: '1', SLURM_PROCID: '0', SLURM_NTASKS: '9'}))
      .toEqual({launcher: 'openmpi', rank: 3, size: 4, localRank: 1, master: null})
    expect(launchEnv({SLURM_PROCID: '5', SLURM_NTASKS: '8', SLURM_LOCALID: '1'})).toMatchObject({launcher: 'slurm', rank: 5, size: 8, localRank: 1})
    expect(launchEnv({RANK: '1', WORLD_SIZE: '2', LOCAL_RANK: '1', MASTER_ADDR: 'n0', MASTER_PORT: '1234'}))
      .toEqual({launcher: 'torchrun', rank: 1, size: 2, localRank: 1, master: 'n0:1234'})
    expect(deviceOf(launchEnv({RANK: '1', WORLD_SIZE: '2', LOCAL_RANK: '1'}), null)).toBe(1)
    expect(deviceOf(launchEnv({RANK: '1', WORLD_SIZE: '2', LOCAL_RANK: '1'}), 0)).toBe(0)
  })

  it('refuses a rank outside the world and junk values', () => {
    expect(() => launchEnv({RANK: '2', WORLD_SIZE: '2'})).toThrow('RANK=2 is not below WORLD_SIZE=2')
    expect(() => launchEnv({SLURM_PROCID: 'x', SLURM_NTASKS: '2'})).toThrow('SLURM_PROCID=x: expected an integer ≥ 0')
  })

  it('refuses a torchrun-style launch with what to use instead', () => {
    expect(() => openCollective({RANK: '0', WORLD_SIZE: '2', MASTER_ADDR: 'n0'})).toThrow(/start the job with mpirun -np 2 or srun -n 2/)
    expect(openCollective({}).coll.engine).toBe('single')
  })

  it('refuses an srun launch without PMI (--mpi=none), which Open MPI cannot start, naming --mpi=pmix', () => {
    expect(() => openCollective({SLURM_PROCID: '1', SLURM_NTASKS: '2', SLURM_LOCALID: '1'})).toThrow(
      "srun started 2 tasks without a process-management interface (srun --mpi=none): Open MPI's ranks find each other through PMIx; run srun --mpi=pmix (or set MpiDefault=pmix in slurm.conf), or mpirun inside salloc or sbatch",
    )
    expect(openCollective({SLURM_PROCID: '0', SLURM_NTASKS: '1'}).coll.engine).toBe('single') // srun -n 1: one process, no MPI
  })
})

describe('buckets and the gradient sum', () => {
  it('groups consecutive parameters up to the byte budget, a larger one alone', () => {
    const sizes: Record<string, number> = {a: 10, b: 10, c: 100, d: 1}
    expect(buckets(['a', 'b', 'c', 'd'], (n) => sizes[n], 80)).toEqual([['a', 'b'], ['c'], ['d']])
    expect(buckets(['a', 'b', 'c', 'd'], (n) => sizes[n])).toEqual([['a', 'b', 'c', 'd']])
  })

  it('sums over a fake world of 2 and leaves no tensors behind', async () => {
    await tf.setBackend('cpu')
    const twice: Collective = {engine: 'fake', rank: 0, size: 2, broadcast() {}, close() {}, allReduceSum: (bufs) => bufs.forEach((b) => b.forEach((x, i) => (b[i] = 2 * x)))}
    const params: [string, tf.Variable][] = [['w', tf.variable(tf.zeros([2, 2]))], ['u', tf.variable(tf.zeros([3]))], ['b', tf.variable(tf.zeros([2]))]]
    const before = tf.memory().numTensors
    const grads = new Map<string, tf.Tensor>([['w', tf.tensor([1, 2, 3, 4], [2, 2])], ['b', tf.tensor([5, 6])]])
    allReduceGrads(twice, params, grads, 8)
    expect([...grads.keys()].sort()).toEqual(['b', 'w']) // u: reached by no rank, stays without a gradient
    expect(Array.from(grads.get('w')!.dataSync())).toEqual([2, 4, 6, 8])
    expect(Array.from(grads.get('b')!.dataSync())).toEqual([10, 12])
    tf.dispose([...grads.values()])
    expect(tf.memory().numTensors).toBe(before)
    tf.dispose(params.map(([, v]) => v))
  })
})

describe('[rank k] prefix', () => {
  it('prefixes every line of rank 1, across partial writes, and mutes on demand', () => {
    let got = ''
    const sink = new Writable({write(c, _e, cb) {
      got += c.toString()
      cb()
    }}) as unknown as NodeJS.WriteStream
    const log = prefixStderr(1, sink)
    sink.write('span pretrain: a\nb')
    sink.write('c\n')
    log.mute()
    sink.write('hidden\n')
    log.dispose()
    expect(got).toBe('[rank 1] span pretrain: a\n[rank 1] bc\n')
  })
})

describe('NCCL unique id', () => {
  const fakeWorld = (rank: number, wire: {bytes: Uint8Array | null}): Collective => ({
    engine: 'fake', rank, size: 2, allReduceSum() {}, close() {},
    broadcast(bufs) {
      const b = bufs[0] as Uint8Array
      if (rank === 0) wire.bytes = b.slice()
      else b.set(wire.bytes as Uint8Array)
    },
  })

  it('is made by rank 0 and broadcast, unless NCCL_COMM_ID lets every rank derive it', () => {
    const wire = {bytes: null as Uint8Array | null}
    let made = 0
    const make = () => {
      made++
      return Uint8Array.from({length: NCCL_UNIQUE_ID_BYTES}, (_, i) => (i * 7 + made) & 255)
    }
    const id0 = ncclUniqueId(fakeWorld(0, wire), make, {})
    const id1 = ncclUniqueId(fakeWorld(1, wire), make, {})
    expect(made).toBe(1)
    expect(Buffer.from(id1).equals(Buffer.from(id0))).toBe(true)
    ncclUniqueId(fakeWorld(1, wire), make, {NCCL_COMM_ID: 'n0:5000'})
    expect(made).toBe(2)
    expect(() => ncclUniqueId(fakeWorld(0, wire), () => new Uint8Array(3), {})).toThrow('an NCCL unique id has 128 bytes, got 3')
  })
})

describe.skipIf(!existsSync(distAddonPath()))('engines whose library is absent', () => {
  it('say why in one line (span doctor)', () => {
    const [mpi, nccl] = probeDistEngines({SPAN_MPI_LIB: 'libmpi-absent.so.40', SPAN_NCCL_LIB: 'libnccl-absent.so.2'})
    expect(mpi).toMatchObject({engine: 'mpi', available: false})
    expect(mpi.detail).toMatch(/^libmpi-absent\.so\.40: .*cannot open shared object file.*apt-get install openmpi-bin libopenmpi-dev\)$/)
    expect(nccl).toMatchObject({engine: 'nccl', available: false})
    expect(nccl.detail).toMatch(/^libnccl-absent\.so\.2: .*cannot open shared object file/)
    expect(nccl.detail).toMatch(/; data-parallel training on --backend cuda needs it \(pip install nvidia-nccl-cu12, or set SPAN_NCCL_LIB\)$/)
    expect(mpi.detail).not.toContain('srun') // a missing MPI says how to install it, not how to launch
    for (const r of [mpi, nccl]) expect(r.detail).not.toContain('\n')
  })

  it('span doctor --json reports both engines, one line each', () => {
    const r = spawnSync('node', [join(root, 'bin', 'run.js'), 'doctor', '--json'], {cwd: root, encoding: 'utf8', env: {...process.env, SPAN_NCCL_LIB: 'libnccl-absent.so.2'}})
    expect(r.status).toBe(0)
    const last = JSON.parse(r.stdout.trim().split('\n').at(-1) as string)
    expect(last.collectives.map((e: {engine: string}) => e.engine)).toEqual(['mpi', 'nccl'])
    expect(last.collectives[1]).toMatchObject({available: false, detail: expect.stringMatching(/^libnccl-absent\.so\.2: cannot open shared object file/)})
  })

  it('the Open MPI handles it dlsyms are those of the installed mpi.h (tools/check-mpi-abi.mjs)', () => {
    const r = spawnSync('node', [join(root, 'tools', 'check-mpi-abi.mjs'), '--json'], {cwd: root, encoding: 'utf8'})
    const out = JSON.parse(r.stdout)
    if (out.note.startsWith('skipped')) return // no mpi.h here: nothing to hold the ABI against
    expect(out.checks.map((c: {name: string}) => c.name)).toEqual(['MPI_COMM_WORLD', 'MPI_FLOAT', 'MPI_DOUBLE', 'MPI_BYTE', 'MPI_SUM', 'MPI_IN_PLACE', 'MPI_THREAD_FUNNELED'])
    expect(out.checks.filter((c: {ok: boolean}) => !c.ok)).toEqual([])
    expect(r.status).toBe(0)
  })

  it('the single-process engine agrees with itself', () => {
    expect(() => checkAgreement(new SingleProcess(), 'config', {a: 1})).not.toThrow()
  })
})
