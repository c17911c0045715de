// A stop signal while nobody reads stdout (`span pretrain … | slow-reader`, mpirun asleep after
// Ctrl-C): the loop never blocks on its metrics, so the signal is seen at the step's end, the
// checkpoint is saved while stdout is still unread, and the records (the checkpoint's last) all
// come once it is read. stdout is a FIFO (a real 64 KB pipe) that this test opens and does not
// read until the checkpoint is on disk. Real bin/run.js processes (dist/ must be built).
import {spawn} from 'node:child_process'
import {execFileSync, spawnSync} from 'node:child_process'
import {closeSync, constants, createReadStream, existsSync, mkdtempSync, openSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeAll, describe, expect, it} from 'vitest'
import {writeBlocks} from '../core/train/helpers.js'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'run.js')
const tmp = mkdtempSync(join(tmpdir(), 'span-unread-'))
const blocks = join(tmp, 'blocks.ndjson')
const tsv = join(tmp, 'sst2.tsv')
const PIPE = 65_536 // Linux's pipe capacity (16 pages)
const WAIT = 150_000
const TINY = '--preset tiny --layers 1 --hidden 16 --heads 2 --batch-size 2 --backend native --threads 1 --seed 4 --lr 1e-3'.split(' ') // ms: generous, for a loaded machine; nothing is timed

beforeAll(() => {
  writeBlocks(blocks, 300, 1)
  writeFileSync(
    tsv,
    'sentence\tlabel\n' +
      Array.from({length: 400}, (_, i) => `film ${i} was ${i % 2 ? 'good' : 'bad'}`)
        .map((s, i) => `${s}\t${i % 2}`)
        .join('\n') +
      '\n',
  )
})

const running: {kill(sig: NodeJS.Signals): boolean; exitCode: number | null; signalCode: string | null}[] = []
afterEach(() => {
  for (const p of running.splice(0)) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL') // a failed test's run, held by its unread stdout
})

/**
 * `node bin/run.js ARGS` with stdout on a FIFO nobody reads yet; stderr collected. `pty`: stdout is
 * a terminal instead, as mpirun gives rank 0: `script` holds the pty and copies it into the FIFO,
 * so it too stops reading once the FIFO is full; stderr goes to a file (mpirun's is a pipe).
 */
function unreadRun(name: string, args: string[], o: {env?: NodeJS.ProcessEnv; pty?: boolean} = {}) {
  const fifo = join(tmp, `${name}.fifo`)
  const errFile = join(tmp, `${name}.stderr`)
  const pidFile = join(tmp, `${name}.pid`)
  execFileSync('mkfifo', [fifo])
  const held = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK) // a reader exists (no EPIPE) but reads nothing
  const wr = openSync(fifo, constants.O_WRONLY)
  const inPty = `echo $$ > ${pidFile}; exec ${process.execPath} ${bin} ${args.join(' ')} 2> ${errFile}`
  const [cmd, argv] = o.pty ? ['script', ['-qec', inPty, '/dev/null']] : [process.execPath, [bin, ...args]]
  const p = spawn(cmd, argv, {cwd: tmp, stdio: ['ignore', wr, 'pipe'], env: {...process.env, ...o.env}})
  closeSync(wr)
  running.push(p)
  let piped = ''
  p.stderr?.on('data', (d) => (piped += d))
  const stderr = () => (o.pty ? (existsSync(errFile) ? readFileSync(errFile, 'utf8') : '') : piped)
  const kill = (sig: NodeJS.Signals) => (o.pty ? process.kill(Number(readFileSync(pidFile, 'utf8')), sig) : p.kill(sig))
  const ended = new Promise<number | null>((resolve) => p.on('close', (code) => resolve(code)))
  let exited = false
  void ended.then(() => (exited = true))
  /** Polls until `ok()` (or the process ends, or WAIT passes: then fails saying what it waited for). */
  const until = async (what: string, ok: () => boolean) => {
    for (const t0 = Date.now(); !ok(); await new Promise((r) => setTimeout(r, 50))) {
      if (exited || Date.now() - t0 > WAIT) throw new Error(`never ${what} (${exited ? 'the run ended' : `${WAIT} ms`}); stderr:\n${stderr()}`)
    }
  }
  /** Reads stdout to its end (the run then drains it and exits). */
  const read = async () => {
    const chunks: Buffer[] = []
    for await (const c of createReadStream(fifo)) chunks.push(c as Buffer) // a second reader, blocking: it gets every byte
    closeSync(held)
    return Buffer.concat(chunks).toString('utf8')
  }
  return {kill, ended, until, read, stderr, exited: () => exited}
}

const records = (s: string) =>
  s
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)

/** Every step's record once, in order, then the stop's checkpoint record last. */
function expectComplete(recs: Record<string, unknown>[], stop: number, out: string): void {
  const steps = recs.filter((r) => 'loss' in r && !('split' in r)).map((r) => r.step)
  expect(steps).toEqual(Array.from({length: stop}, (_, i) => i + 1))
  expect(recs.at(-1)).toEqual({step: stop, checkpoint: join(out, `checkpoint-${stop}`)})
}

describe('a stop signal while stdout is not read', () => {
  it('pretrain --log-every 1 past a full pipe: SIGTERM saves the checkpoint before stdout is read; no record lost', async () => {
    const out = join(tmp, 'pre')
    const r = unreadRun('pre', ['pretrain', blocks, ...TINY, '--max-steps', '100000', '--log-every', '1', '--save-every', '600', '--keep', '5', '--out', out])
    // 600 records (~120 KB) are more than the pipe and Node's 16 KB: a loop that waited for its reader never gets here
    await r.until('saved checkpoint-600 with stdout unread', () => existsSync(join(out, 'checkpoint-600', 'trainer_state.json')))
    r.kill('SIGTERM')
    await r.until('said the stop checkpoint was saved', () => /saved the checkpoint of step \d+/.test(r.stderr()))
    const stop = Number(/saved the checkpoint of step (\d+)/.exec(r.stderr())?.[1])
    expect(existsSync(join(out, `checkpoint-${stop}`, 'trainer_state.json'))).toBe(true) // on disk while stdout is unread
    expect(r.exited()).toBe(false) // it waits for its reader, checkpoint saved
    const text = await r.read()
    expect(await r.ended).toBe(143)
    const recs = records(text)
    expect(text.indexOf(join(out, 'checkpoint-600'))).toBeGreaterThan(PIPE + 16_384) // the pipe was full long before step 600
    expectComplete(recs, stop, out)
    expect(recs.filter((x) => 'checkpoint' in x).map((x) => x.step)).toEqual(stop === 600 ? [600] : [600, stop])
  }, 200_000)

  it('finetune glue past its metrics bound: it waits (said once); SIGUSR2 ends the wait and saves before stdout is read', async () => {
    const out = join(tmp, 'ft')
    const base = join(tmp, 'ft-base') // a model as small as pretrain's TINY: cheap steps
    const pre = spawnSync(process.execPath, [bin, 'pretrain', blocks, ...TINY, '--max-steps', '1', '--out', base], {cwd: tmp, encoding: 'utf8'})
    expect(pre.status, pre.stderr).toBe(0)
    const args = `finetune glue --task sst-2 --init ${base} --train ${tsv} --max-len 8 --epochs 5000 --log-every 1 --backend native --threads 1 --dropout 0 --batch-size 2 --out ${out}`
    const r = unreadRun('ft', args.split(' '), {env: {SPAN_METRICS_QUEUE_MB: '0.01'}}) // 10 KB queued past the full pipe, then the loop waits
    await r.until('said that stdout is not read', () => /stdout is not read: 0\.01 MiB of metrics records wait/.test(r.stderr()))
    r.kill('SIGUSR2')
    await r.until('said the stop checkpoint was saved', () => /saved the checkpoint of step \d+/.test(r.stderr()))
    const stop = Number(/saved the checkpoint of step (\d+)/.exec(r.stderr())?.[1])
    expect(existsSync(join(out, `checkpoint-${stop}`, 'trainer_state.json'))).toBe(true)
    expect(r.exited()).toBe(false)
    const text = await r.read()
    expect(await r.ended).toBe(140)
    expect(text.length).toBeGreaterThan(PIPE)
    expect(r.stderr().match(/stdout is not read/g)).toHaveLength(1)
    const recs = records(text)
    expectComplete(recs, stop, out)
  }, 200_000)

  // mpirun after Ctrl-C: rank 0's stdout a terminal nobody reads, where Node's write(2) blocks
  it.skipIf(spawnSync('script', ['--version']).status !== 0)(
    'pretrain --log-every 1 with stdout a terminal nobody reads: SIGTERM saves the checkpoint; no record lost',
    async () => {
      const out = join(tmp, 'pty')
      const r = unreadRun(
        'pty',
        ['pretrain', blocks, ...TINY, '--max-steps', '100000', '--log-every', '1', '--save-every', '800', '--keep', '5', '--out', out],
        {pty: true},
      )
      // 800 records (~160 KB) are more than the FIFO, script's buffer and the pty's 16 KB together
      await r.until('saved checkpoint-800 with stdout unread', () => existsSync(join(out, 'checkpoint-800', 'trainer_state.json')))
      r.kill('SIGTERM')
      await r.until('said the stop checkpoint was saved', () => /saved the checkpoint of step \d+/.test(r.stderr()))
      const stop = Number(/saved the checkpoint of step (\d+)/.exec(r.stderr())?.[1])
      expect(existsSync(join(out, `checkpoint-${stop}`, 'trainer_state.json'))).toBe(true)
      expect(r.exited()).toBe(false)
      const text = (await r.read()).replaceAll('\r\n', '\n') // the terminal's line ends
      expect(await r.ended).toBe(143)
      expect(text.indexOf(join(out, 'checkpoint-800'))).toBeGreaterThan(PIPE + 16_384 + 16_384)
      expectComplete(records(text), stop, out)
    },
    200_000,
  )
})
