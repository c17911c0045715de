// The bad-input matrix (issue 13): every command that reads or writes files × (missing file,
// directory, unreadable file, bad output path, full disk) gives one `span CMD:` line on stderr,
// exit 1 (a data/filesystem error), nothing on stdout, and no output file or temporary left.
// "Unreadable": this suite runs as root, where chmod 000 does not stop a read, so the unreadable
// input is /proc/self/mem, whose read fails with EIO. "Full disk": a 64 KB tmpfs filled up (the
// case is skipped where this process may not mount). Usage errors (exit 2) are checked last.
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {writeBlocks} from '../core/train/helpers.js'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'run.js')
const tmp = mkdtempSync(join(tmpdir(), 'span-matrix-'))
const TINY = '--preset tiny --layers 1 --hidden 16 --heads 2 --batch-size 2 --backend wasm --max-steps 1'

/** Each command: its good input, and its argument line with IN and OUT to fill in. */
const COMMANDS: Record<string, {input: string; args: string}> = {
  tokenize: {input: 'text.txt', args: 'tokenize IN -o OUT'},
  vocab: {input: 'text.txt', args: 'vocab IN --size 40 -o OUT'},
  block: {input: 'tokens.ndjson', args: 'block IN --len 16 -o OUT'},
  mask: {input: 'blocks.ndjson', args: 'mask IN -o OUT'},
  'segment-ngrams': {input: 'text.txt', args: 'segment-ngrams --build IN --min-count 1 -o OUT'},
  inspect: {input: 'blocks.ndjson', args: 'inspect IN -o OUT'},
  pretrain: {input: 'blocks.ndjson', args: `pretrain IN ${TINY} --out OUT`},
}

function run(args: string[]): Promise<{code: number; stdout: string; stderr: string}> {
  return new Promise((resolve) => {
    const p = spawn('node', [bin, ...args], {cwd: tmp, stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    p.stdout.on('data', (d) => (stdout += d))
    p.stderr.on('data', (d) => (stderr += d))
    p.on('close', (code) => resolve({code: code ?? -1, stdout, stderr}))
  })
}

/** At most `n` processes at a time (the machine is shared). */
async function pool<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length)
  let next = 0
  await Promise.all(
    Array.from({length: n}, async () => {
      while (next < jobs.length) {
        const i = next++
        out[i] = await jobs[i]()
      }
    }),
  )
  return out
}

let full: string | null = null
beforeAll(() => {
  writeFileSync(join(tmp, 'text.txt'), Array.from({length: 300}, (_, i) => `the quick brown fox ${i} jumps over the lazy dog.`).join('\n') + '\n')
  expect(spawnSync('node', [bin, 'tokenize', 'text.txt', '-o', 'tokens.ndjson'], {cwd: tmp}).status).toBe(0)
  writeBlocks(join(tmp, 'blocks.ndjson'), 300, 1)
  mkdirSync(join(tmp, 'adir'))
  const dir = join(tmp, 'full')
  mkdirSync(dir)
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]).status === 0) {
    spawnSync('bash', ['-c', `cat /dev/zero > ${dir}/filler`])
    full = dir
  }
})
afterAll(() => {
  if (full) spawnSync('umount', [full])
})

const CASES: Record<string, (c: {input: string}) => {input: string; out: string} | null> = {
  'missing file': () => ({input: 'no-such-file', out: 'o1'}),
  directory: () => ({input: 'adir', out: 'o2'}),
  'unreadable file': () => ({input: '/proc/self/mem', out: 'o3'}),
  'bad output path': (c) => ({input: c.input, out: 'text.txt/sub/x'}), // ENOTDIR: a file where a directory should be
  'full disk': (c) => (full ? {input: c.input, out: join(full, 'x')} : null),
}

describe('the bad-input matrix', () => {
  it('every command × every fault: one `span CMD:` line, exit 1, no output left behind', async () => {
    const jobs: {name: string; job: () => Promise<{code: number; stdout: string; stderr: string}>}[] = []
    for (const [cmd, c] of Object.entries(COMMANDS)) {
      for (const [fault, make] of Object.entries(CASES)) {
        const io = make(c)
        if (!io) continue
        const out = io.out.startsWith('/') ? io.out : `${io.out}-${cmd}`
        const args = c.args.replace('IN', io.input).replace('OUT', out).split(' ')
        jobs.push({name: `${cmd} × ${fault}`, job: () => run(args)})
      }
    }
    const results = await pool(
      jobs.map((j) => j.job),
      4,
    )
    const bad: string[] = []
    results.forEach((r, i) => {
      const cmd = jobs[i].name.split(' × ')[0]
      const lines = r.stderr.split('\n').filter((l) => l !== '' && !/^pretrain: |^span pretrain: (config|model): /.test(l))
      const ok = r.code === 1 && r.stdout === '' && lines.length === 1 && lines[0].startsWith(`span ${cmd}: `)
      if (!ok) bad.push(`${jobs[i].name}: exit ${r.code}, stderr ${JSON.stringify(r.stderr.slice(0, 300))}`)
    })
    expect(bad).toEqual([])
    expect(readdirSync(tmp).filter((n) => n.includes('.tmp-') || /^o\d/.test(n))).toEqual([])
    if (full) expect(readdirSync(full)).toEqual(['filler'])
    console.log(
      `bad-input matrix: ${results.length} cases (${Object.keys(COMMANDS).length} commands × ${Object.keys(CASES).length} faults${full ? '' : ', full disk skipped: no tmpfs mount'}), all one line and exit 1`,
    )
  }, 900_000) // 35 processes: about a minute on an idle 2-core machine, far more on a loaded one

  it("usage errors exit 2 everywhere, in one line: oclif's integer flags and span's own number flags alike", async () => {
    const cases = [
      ['mask', '--p', '1.5'],
      ['block', '--len', '1'],
      ['tokenize', '--bogus'],
      ['pretrain', '--lr', 'x', '--out', 'o'],
      ['mask', '--ratio', '2'],
    ]
    const rs = await pool(
      cases.map((a) => () => run(a)),
      4,
    )
    rs.forEach((r, i) => {
      expect(r.code, cases[i].join(' ')).toBe(2)
      expect(r.stderr).toMatch(new RegExp(`^span ${cases[i][0]}: .*\\(see span ${cases[i][0]} --help\\)\\n$`))
    })
    expect(existsSync(join(tmp, 'o'))).toBe(false)
  })
})
