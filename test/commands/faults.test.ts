// Faults as a user meets them (issue 13): a full disk (a small tmpfs; skipped where this process
// may not mount one), a closed pipe under pretrain, a kill at every rename of a checkpoint save
// (strace's fault injection; skipped without strace), two runs on one --out. Real bin/run.js
// processes (dist/ must be built); tiny models on the wasm backend.
import {execFileSync, spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {shellAsync} from '../helpers/spawn.js'
import {writeBlocks} from '../core/train/helpers.js'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'run.js')
const tmp = mkdtempSync(join(tmpdir(), 'span-faults-'))
const blocks = join(tmp, 'blocks.ndjson')
const TINY = ['--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--batch-size', '2', '--backend', 'wasm', '--seed', '4', '--lr', '1e-3']

/** Runs a shell line; stdout and stderr apart, the exit code of the first command of a pipe. */
const sh = (line: string, cwd = tmp) => shellAsync(line, cwd)
const span = (args: string) => `node ${bin} ${args}`
const stderrLines = (s: string) =>
  s
    .split('\n')
    .filter(
      (l) => l !== '' && !/^pretrain: (from|step)/.test(l) && !/: (config|model|memory plan \(.*\)): |: peak resident memory |: --batch-size auto: /.test(l),
    )

/** A 64 KB tmpfs filled up to its last byte, or null where this process may not mount one. */
function fullDisk(): string | null {
  const dir = join(tmp, 'full')
  mkdirSync(dir, {recursive: true})
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]).status !== 0) return null
  spawnSync('bash', ['-c', `cat /dev/zero > ${dir}/filler`])
  return dir
}
let full: string | null = null

beforeAll(() => {
  writeBlocks(blocks, 300, 1)
  full = fullDisk()
})
afterAll(() => {
  if (full) spawnSync('umount', [full])
})

describe('a full disk', () => {
  it('stdout or -o on a full disk: one line, exit 1, no file and no temporary under -o (mask, block)', async (ctx) => {
    if (!full) return ctx.skip() // mount not permitted here
    const rs = await Promise.all([
      sh(`${span(`mask ${blocks}`)} > ${full}/m.ndjson`),
      sh(span(`mask ${blocks} -o ${full}/m2.ndjson`)),
      sh(span(`mask ${blocks} -o ${tmp}/m3.ndjson --write-unigram ${full}/uni.txt`)),
    ])
    for (const r of rs) {
      expect(r.stderr).toMatch(/^span mask: .*no space left on device \(ENOSPC\)\n$/)
      expect(r.code).toBe(1)
    }
    expect(readdirSync(full).sort()).toEqual(['filler', 'm.ndjson']) // the > redirection made it, nothing else
    expect(existsSync(join(tmp, 'm3.ndjson'))).toBe(false) // all outputs of a command land together, or none
    expect(readdirSync(tmp).filter((n) => n.includes('.tmp-'))).toEqual([])
  })

  it('pretrain with stdout on a full disk: one line, exit 1, the checkpoint in its own directory saved', async (ctx) => {
    if (!full) return ctx.skip()
    const out = join(tmp, 'ck-full')
    const r = await sh(`${span(`pretrain ${blocks} ${TINY.join(' ')} --max-steps 3 --log-every 1 --out ${out}`)} > ${full}/metrics.ndjson`)
    expect(r.code).toBe(1)
    const lines = stderrLines(r.stderr).filter((l) => !/steps take about|effective batch/.test(l)) // notes (the 1000-step estimate, the batch), not errors
    expect(lines[0]).toMatch(/^span pretrain: metrics output: no space left on device \(ENOSPC\): metrics are no longer written; training goes on/)
    expect(lines.at(-1)).toMatch(
      /^span pretrain: metrics output: no space left on device \(ENOSPC\); the metrics after that point were lost; the checkpoint in .*ck-full is saved$/,
    )
    expect(JSON.parse(readFileSync(join(newest(out), 'trainer_state.json'), 'utf8')).step).toBe(3)
  })
})

describe('a closed pipe under pretrain', () => {
  it('`span pretrain … | head -1` trains on, warns once, exits 0 with the last checkpoint saved', async () => {
    const out = join(tmp, 'ck-head')
    const r = await sh(`${span(`pretrain ${blocks} ${TINY.join(' ')} --max-steps 6 --log-every 1 --out ${out}`)} | head -1`)
    expect(r.code).toBe(0)
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(1)
    expect(stderrLines(r.stderr).filter((l) => /stdout closed: metrics are no longer written; training goes on/.test(l))).toHaveLength(1)
    expect(JSON.parse(readFileSync(join(newest(out), 'trainer_state.json'), 'utf8')).step).toBe(6)
  })
})

describe('two runs on one --out', () => {
  it("the second is refused in one line while the first runs; the first goes on; a dead run's lock is taken over", async () => {
    const out = join(tmp, 'ck-two')
    const first = spawn('node', [bin, 'pretrain', blocks, ...TINY, '--max-steps', '100000', '--out', out], {cwd: tmp, stdio: ['ignore', 'ignore', 'pipe']})
    let firstErr = ''
    first.stderr.on('data', (d) => (firstErr += d))
    const firstExit = new Promise<number | null>((resolve) => first.on('close', resolve))
    const lock = join(out, '.span.lock') // inside the run directory
    for (let i = 0; i < 400 && !existsSync(lock); i++) await new Promise((r) => setTimeout(r, 50))
    const second = await sh(span(`pretrain ${blocks} ${TINY.join(' ')} --max-steps 2 --out ${out}`))
    expect(second.stderr).toMatch(
      new RegExp(`^span pretrain: .*ck-two: in use by another span run \\(pid ${first.pid}; lock .*ck-two/\\.span\\.lock\\); wait for it`),
    )
    expect(stderrLines(second.stderr)).toHaveLength(1)
    expect(second.code).toBe(1)
    first.kill('SIGINT')
    expect(await firstExit).toBe(130) // stopped with a checkpoint, its lock released
    expect(existsSync(lock)).toBe(false)
    const step = JSON.parse(readFileSync(join(newest(out), 'trainer_state.json'), 'utf8')).step as number
    // issue 13 item 13: "saving" is said before the save; "saved" only once the step's checkpoint is there
    expect(firstErr).toMatch(new RegExp(`SIGINT at step ${step}: saving a checkpoint \\(a second SIGINT stops without it`))
    expect(firstErr).toContain(`saved the checkpoint of step ${step}; continue with --resume ${out}`)
    writeFileSync(lock, '999999999\n') // a dead process's
    const third = await sh(span(`pretrain --resume ${out} --max-steps ${step + 1}`))
    expect(third.stderr).toMatch(/took over the stale lock .* of pid 999999999 \(no longer running\)/)
    expect(third.code).toBe(0)
  })
})

// Open MPI SIGKILLs the ranks 1 s after Ctrl-C's SIGTERM: rank 0 dies mid-save, its lock and a
// half-written checkpoint left in --out. The next run into that --out, resumed or not, repairs it.
describe('a fresh run into an --out a killed save left behind', () => {
  it('takes over the lock and removes the unfinished checkpoint first, pretrain and finetune alike', async () => {
    const dead = Number(execFileSync('node', ['-e', 'process.stdout.write(String(process.pid))'], {encoding: 'utf8'}))
    const tsv = join(tmp, 'sst2.tsv')
    writeFileSync(tsv, 'sentence\tlabel\n' + Array.from({length: 4}, (_, i) => `film ${i}\t${i % 2}`).join('\n') + '\n')
    const runs = {
      pre: `pretrain ${blocks} ${TINY.join(' ')} --max-steps 1`,
      ft: `finetune glue --task sst-2 --preset tiny --train ${tsv} --max-len 8 --epochs 1 --backend wasm --batch-size 4`,
    }
    for (const [name, args] of Object.entries(runs)) {
      const out = join(tmp, `killed-${name}`)
      mkdirSync(join(out, `.checkpoint-2.tmp-${dead}`), {recursive: true})
      writeFileSync(join(out, `.checkpoint-2.tmp-${dead}`, 'model.safetensors'), 'half')
      writeFileSync(join(out, '.span.lock'), `${dead}\n`)
      const r = await sh(span(`${args} --out ${out}`))
      expect(r.code, r.stderr).toBe(0)
      expect(r.stderr).toMatch(new RegExp(`took over the stale lock .* of pid ${dead} \\(no longer running\\)`))
      expect(r.stderr).toContain(`removed the unfinished ${join(out, `.checkpoint-2.tmp-${dead}`)} of a dead process`)
      expect(readdirSync(out).filter((n) => n.startsWith('.'))).toEqual([])
      expect(existsSync(join(out, '.span.lock'))).toBe(false)
    }
  })

  it('finetune --resume puts back a checkpoint a kill between the two renames left aside, before it picks one', async () => {
    const dead = Number(execFileSync('node', ['-e', 'process.stdout.write(String(process.pid))'], {encoding: 'utf8'}))
    const tsv = join(tmp, 'sst2-aside.tsv')
    writeFileSync(tsv, 'sentence\tlabel\n' + Array.from({length: 4}, (_, i) => `film ${i}\t${i % 2}`).join('\n') + '\n')
    const out = join(tmp, 'aside-ft')
    const args = `finetune glue --task sst-2 --preset tiny --train ${tsv} --max-len 8 --epochs 3 --backend wasm --batch-size 4 --out ${out}`
    const first = await sh(span(`${args} --stop-at 2`))
    expect(first.code, first.stderr).toBe(0)
    execFileSync('mv', [join(out, 'checkpoint-2'), join(out, `.checkpoint-2.old-${dead}`)]) // set aside, the new one never renamed in
    const r = await sh(span(`${args} --resume ${out}`))
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain(`restored ${join(out, 'checkpoint-2')} from ${join(out, `.checkpoint-2.old-${dead}`)}`)
    expect(
      r.stdout
        .split('\n')
        .filter((l) => l.includes('"loss"'))
        .map((l) => JSON.parse(l).step),
    ).toEqual([3])
  })
})

describe('a second SIGINT soon after the first', () => {
  /** Two SIGINTs to a run that has saved a checkpoint: 50 ms apart, or the second as the first is noted. */
  async function twice(out: string, onNotice: boolean): Promise<void> {
    const run = spawn('node', [bin, 'pretrain', blocks, ...TINY, '--max-steps', '100000', '--save-every', '3', '--keep', '3', '--out', out], {
      cwd: tmp,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let err = ''
    run.stderr.on('data', (d) => (err += d))
    const exit = new Promise<[number | null, string | null]>((resolve) => run.on('close', (code, signal) => resolve([code, signal])))
    for (let i = 0; i < 600 && !existsSync(join(out, 'checkpoint-6')); i++) await new Promise((r) => setTimeout(r, 50))
    run.kill('SIGINT')
    for (let i = 0; i < 200 && onNotice && !/SIGINT at step/.test(err); i++) await new Promise((r) => setTimeout(r, 5))
    await new Promise((r) => setTimeout(r, onNotice ? 0 : 50))
    run.kill('SIGINT')
    const [code, signal] = await exit
    expect(code === 130 || signal === 'SIGINT', `exit ${code} ${signal}`).toBe(true)
    expect(err).not.toMatch(/saving a checkpoint at step/) // the message of issue 13, item 13: it named a step never saved
    const stepOf = (n: number) => JSON.parse(readFileSync(join(out, `checkpoint-${n}`, 'trainer_state.json'), 'utf8')).step as number
    const saving = /SIGINT at step (\d+): saving a checkpoint \(a second SIGINT stops without it; the one of step (\d+) stays\)/.exec(err)
    if (saving) expect(stepOf(Number(saving[2]))).toBe(Number(saving[2])) // "the one of step K stays": it is there
    const saved = /saved the checkpoint of step (\d+)/.exec(err)
    if (saved) expect(stepOf(Number(saved[1]))).toBe(Number(saving?.[1])) // said only once it is there
    const newestStep = Number(/checkpoint-(\d+)$/.exec(newest(out))?.[1])
    if (saving && !saved) expect([Number(saving[1]), Number(saving[2])]).toContain(newestStep) // the save finished or never began
    const resumed = await sh(span(`pretrain --resume ${out} --max-steps ${newestStep + 1}`))
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain(`resuming at step ${newestStep}`)
  }

  it('claims no checkpoint that is not on disk; the run resumes from the one that is', async () => {
    await twice(join(tmp, 'ck-twice-50ms'), false)
    await twice(join(tmp, 'ck-twice-notice'), true)
  }, 180_000)
})

/** The newest checkpoint-STEP/ of a run directory. */
function newest(run: string): string {
  const steps = readdirSync(run)
    .map((n) => /^checkpoint-(\d+)$/.exec(n))
    .filter((m) => m !== null)
    .map((m) => Number(m[1]))
  return join(run, `checkpoint-${Math.max(...steps)}`)
}

const hasStrace = spawnSync('strace', ['-V']).status === 0

describe('a kill at every rename of a checkpoint save', () => {
  it.skipIf(!hasStrace)(
    '--resume after each is exact (the model of an uninterrupted run) or refuses in one line',
    async () => {
      const args = `${blocks} ${TINY.join(' ')} --max-steps 4 --save-every 2`
      const whole = await sh(span(`pretrain ${args} --out ${tmp}/k-whole`))
      expect(whole.code).toBe(0)
      execFileSync(
        'strace',
        [
          '-f',
          '-qq',
          '-e',
          'trace=rename,renameat,renameat2',
          '-o',
          join(tmp, 'renames.txt'),
          'node',
          bin,
          'pretrain',
          ...args.split(' '),
          '--out',
          join(tmp, 'k-count'),
        ],
        {cwd: tmp, stdio: 'ignore', env: {...process.env, UV_THREADPOOL_SIZE: '1'}},
      )
      const renames = readFileSync(join(tmp, 'renames.txt'), 'utf8')
        .split('\n')
        .filter((l) => /rename/.test(l)).length
      expect(renames).toBeGreaterThanOrEqual(2) // each save moves its checkpoint-STEP/ in as one directory
      const runs = Array.from({length: renames}, async (_, k) => {
        const out = `${tmp}/k-${k + 1}`
        // strace counts a syscall per thread: one libuv thread does every rename
        const killed = await sh(
          `UV_THREADPOOL_SIZE=1 strace -f -qq -o /dev/null -e inject=rename:signal=SIGKILL:when=${k + 1} ${span(`pretrain ${args} --out ${out}`)}`,
        )
        expect(killed.code).not.toBe(0)
        const resumed = await sh(span(`pretrain --resume ${out}`))
        // a kill at a rename of span-run.json after the last checkpoint landed: that run is complete
        const complete = /the run is at step 4, --max-steps is 4: nothing to train/.test(resumed.stderr)
        if (resumed.code !== 0 && !complete) {
          const lines = stderrLines(resumed.stderr) // notices of the repair (a dead run's lock, its temporaries), then one error line
          expect(lines.slice(0, -1).every((l) => /^span pretrain: (took over|removed|restored) /.test(l))).toBe(true)
          expect(lines.at(-1)).toMatch(/^span pretrain: \S+: /)
          return 'refused'
        }
        const [got, want] = [newest(out), newest(join(tmp, 'k-whole'))]
        expect(readFileSync(join(got, 'model.safetensors')).equals(readFileSync(join(want, 'model.safetensors')))).toBe(true)
        expect(readFileSync(join(got, 'optimizer.safetensors')).equals(readFileSync(join(want, 'optimizer.safetensors')))).toBe(true)
        expect(readdirSync(tmp).filter((n) => n.startsWith(`.k-${k + 1}.`))).toEqual([])
        expect(readdirSync(out).filter((n) => n.startsWith('.'))).toEqual([]) // no temporary checkpoint directory left
        return 'exact'
      })
      const outcomes = await Promise.all(runs)
      expect(outcomes.filter((o) => o === 'exact').length).toBeGreaterThanOrEqual(renames - 1) // only a kill before the first save has nothing to resume
    },
    180_000,
  )
})
