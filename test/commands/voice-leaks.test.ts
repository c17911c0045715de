// Issue 36, cause 6: library wording that still leaked, each case now one line in span's voice,
// through real processes (bin/run.js; dist/ must be built): a broken addon file (V8's "Invalid or
// unexpected token", "Cannot find module"), tfjs' "install tfjs-node" banner on the cuda backend
// (stand-ins), oclif's "WARNING: current directory does not exist", V8's JSON text for a
// truncated trainer_state.json, `got undefined` in span plot, and a TensorBoard event file left
// on a full disk by a message naming no path. The mpirun cases are in checks-first.test.ts.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {cudaAddonPath} from '../../src/core/engine/cuda/addon.js'
import {buildStandins} from '../helpers/cuda-standins.js'
import {BIN, ROOT, type Run, runSpan} from '../helpers/spawn.js'
import {writeBlocks} from '../core/train/helpers.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-voice-leaks-'))
const span = (args: string, o: {cwd?: string; env?: NodeJS.ProcessEnv; input?: string} = {}): Run =>
  runSpan(args.split(' '), {cwd: o.cwd ?? tmp, env: o.env ?? process.env, input: o.input, timeout: 300_000})
const TINY = '--preset tiny --layers 1 --hidden 16 --heads 2 --batch-size 2 --backend wasm'
const LEAKS = /Invalid or unexpected token|Cannot find module|WARNING|Hi, looks like|Unterminated|Unexpected (token|end)|in JSON at|undefined|Error:/

/** One line on stderr (besides the run's own progress lines) matching `re`, and the exit code. */
function oneLine(r: Run, code: number, re: RegExp): void {
  const lines = r.stderr.split('\n').filter((l) => l !== '' && !/^span [a-z ]+: (config|model|memory plan|effective batch|\d+ [a-z])|^(pre|fine)/.test(l))
  expect(lines, r.stderr).toHaveLength(1)
  expect(lines[0]).toMatch(re)
  expect(r.stderr).not.toMatch(LEAKS)
  expect(r.code, r.stderr).toBe(code)
}

let full: string | null = null
beforeAll(() => {
  writeBlocks(join(tmp, 'blocks.ndjson'), 20, 1)
  writeFileSync(join(tmp, 'broken.bin'), 'garbage ( \u0001 not an addon')
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

describe("library wording in span's voice", () => {
  it('a broken addon file (not a shared object; a relative path): "not a loadable addon", never V8\'s parse or module text', () => {
    for (const path of [join(tmp, 'broken.bin'), 'broken.bin']) {
      const r = span('doctor', {env: {...process.env, SPAN_NATIVE_ADDON: path}})
      expect(r.stdout).toMatch(
        new RegExp(`native +missing +the addon failed to load \\(${path.replaceAll('/', '\\/').replaceAll('.', '\\.')}: not a loadable addon \\(`),
      )
      expect(r.stdout + r.stderr).not.toMatch(LEAKS)
    }
    const r = span(`pretrain blocks.ndjson ${TINY.replace('wasm', 'native')} --max-steps 1 --out nat`, {env: {...process.env, SPAN_NATIVE_ADDON: 'broken.bin'}})
    oneLine(r, 1, /^span pretrain: --backend native is not available: the addon failed to load \(broken\.bin: not a loadable addon \(.*\)\)/)
  }, 120_000)

  it('a working directory removed under the shell: one line, exit 1, no oclif WARNING', () => {
    const gone = join(tmp, 'gone')
    mkdirSync(gone)
    const r = spawnSync('bash', ['-c', `cd ${gone} && rmdir ${gone} && ${process.execPath} ${BIN} tokenize < /dev/null`], {encoding: 'utf8'})
    oneLine({code: r.status, stdout: r.stdout, stderr: r.stderr}, 1, /^span: the working directory no longer exists/)
    expect(r.stdout).toBe('')
  })

  it("a truncated or non-object trainer_state.json: one line naming it, never V8's JSON text", () => {
    const make = span(
      `finetune squad --train ${join(ROOT, 'fixtures', 'squad-demo', 'dev.json')} --preset tiny --backend wasm --max-len 64 --max-query-len 16 --batch-size 2 --stop-at 1 --out ft`,
    )
    expect(make.code, make.stderr).toBe(0)
    const state = join(tmp, 'ft', 'checkpoint-1', 'trainer_state.json')
    const text = readFileSync(state, 'utf8')
    writeFileSync(state, text.slice(0, 30)) // the manifest catches it first
    oneLine(
      span('finetune squad --resume ft --stop-at 2'),
      1,
      /^span finetune squad: ft\/checkpoint-1: inconsistent checkpoint: trainer_state\.json has 30 bytes/,
    )
    rmSync(join(tmp, 'ft', 'checkpoint-1', 'span-manifest.json')) // a checkpoint without a manifest (Hugging Face's, an older span's)
    oneLine(span('finetune squad --resume ft --stop-at 2'), 1, /^span finetune squad: ft\/checkpoint-1\/trainer_state\.json:\d+: invalid JSON at column \d+: /)
    writeFileSync(state, '[1]\n')
    oneLine(span('finetune squad --resume ft --stop-at 2'), 1, /^span finetune squad: ft\/checkpoint-1\/trainer_state\.json: expected a JSON object/)
    expect(readdirSync(join(tmp, 'ft')).sort()).toEqual(['checkpoint-1', 'span-run.json'])
  }, 300_000)

  it('span plot: a record without "step" is said as such (no `got undefined`)', () => {
    oneLine(
      span('plot', {input: '{"loss":1}\n'}),
      1,
      /^span plot: stdin:1: expected a metrics record with an integer "step" ≥ 0 .*got a record without "step"$/,
    )
  })

  it('a TensorBoard folder on a full disk: one line naming the event file, nothing left there, no run directory', (ctx) => {
    if (!full) return ctx.skip() // no tmpfs mount allowed here
    const r = span(`pretrain blocks.ndjson ${TINY} --max-steps 2 --out tb-run --tensorboard ${full}/tb`)
    oneLine(r, 1, new RegExp(`^span pretrain: ${full}/tb/events\\.out\\.tfevents\\.\\d+\\.[^:]+: no space left on device \\(ENOSPC\\)$`))
    expect(readdirSync(full)).toEqual(['filler'])
    expect(existsSync(join(tmp, 'tb-run'))).toBe(false)
  }, 120_000)
})

const standins = buildStandins()
const cudaWhy = 'error' in standins ? standins.error : !existsSync(cudaAddonPath()) ? 'the cuda loader is not built (node native/build.mjs)' : null

describe.skipIf(cudaWhy !== null)(`the cuda backend on the stand-ins${cudaWhy ? ` (skipped: ${cudaWhy})` : ''}`, () => {
  it('a kernel the device lacks runs on tfjs\' cpu backend without its "install tfjs-node" banner', () => {
    // topk has no cuda kernel: it falls back to cpu (register.ts), whose first write printed the banner
    const script = `import * as tf from '@tensorflow/tfjs'; import {initBackend} from './dist/core/engine/backend.js'
      await initBackend('cuda'); const r = tf.topk(tf.tensor1d([3, 1, 2]), 2); console.log(tf.getBackend(), Array.from(await r.values.data()).join(','))`
    const env = {...process.env, SPAN_CUDA_LIBS: 'error' in standins ? '' : standins.dir}
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {cwd: ROOT, env, encoding: 'utf8', timeout: 300_000})
    expect(r.stdout.trim(), r.stderr).toBe('cuda 3,2')
    expect(r.stderr).toBe('')
  }, 300_000)
})
