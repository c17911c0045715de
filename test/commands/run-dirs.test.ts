// Run directories as a user meets them (issues 24 and 25; dist/ must be built): `span pretrain
// FILE` without --out runs into a fresh runs/pretrain-STAMP/; a new run never trains into a
// directory that holds anything (nor into --init's, nor /); --keep deletes only the run's own
// checkpoints; the lock is keyed on the real path (a symbolic link shares it) and taken where
// span can write; every command that reads a model takes a run directory; finetune --resume
// needs no flag again, from any directory, and checks what is typed again (data by SHA-256).
import {spawn, spawnSync} from 'node:child_process'
import {chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {BIN, runSpan} from '../helpers/spawn.js'
import {writeBlocks} from '../core/train/helpers.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-run-dirs-'))
const train = join(tmp, 'train.ndjson')
const tsv = join(tmp, 'sst2.tsv')
const TINY = ['--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--batch-size', '2', '--backend', 'wasm', '--seed', '4']
const GLUE_RUN = ['--task', 'sst2', '--max-len', '8', '--batch-size', '2', '--backend', 'wasm']
const GLUE = [...GLUE_RUN, '--preset', 'tiny']
const asRoot = process.getuid?.() === 0
const setpriv = spawnSync('setpriv', ['--version']).status === 0

const span = (args: string[], cwd = tmp) => runSpan(args, {cwd})
const lines = (s: string) =>
  s
    .trimEnd()
    .split('\n')
    .filter((l) => l !== '')

beforeAll(() => {
  chmodSync(tmp, 0o755)
  writeBlocks(train, 12, 1)
  writeFileSync(tsv, 'sentence\tlabel\n' + Array.from({length: 8}, (_, i) => `film ${i % 3} good ${i}\t${i % 2}`).join('\n') + '\n')
})

describe('a fresh default run directory (24.1)', () => {
  it('span pretrain FILE without --out runs into runs/pretrain-YYYYmmdd-HHMMSS/, named on stderr; the next one into another', () => {
    const cwd = mkdtempSync(join(tmp, 'cwd-'))
    const a = span(['pretrain', train, ...TINY, '--max-steps', '2'], cwd)
    expect(a.code, a.stderr).toBe(0)
    const named = /no --out given: this run goes to (runs\/pretrain-\d{8}-\d{6}(?:-\d+)?)\//.exec(a.stderr)
    expect(named).not.toBeNull()
    expect(readdirSync(join(cwd, named![1])).sort()).toEqual(['checkpoint-2', 'span-run.json'])
    const b = span(['pretrain', train, ...TINY, '--max-steps', '1'], cwd)
    expect(b.code, b.stderr).toBe(0)
    expect(readdirSync(join(cwd, 'runs'))).toHaveLength(2)
  })

  it('span finetune TASK without --out runs into runs/finetune-TASK-…/; a failed start leaves no directory', () => {
    const cwd = mkdtempSync(join(tmp, 'cwd-'))
    const r = span(['finetune', 'glue', ...GLUE, '--train', tsv, '--epochs', '1'], cwd)
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/no --out given: this run goes to runs\/finetune-glue-\d{8}-\d{6}\//)
    const bad = span(['finetune', 'glue', ...GLUE, '--train', join(tmp, 'absent.tsv')], cwd)
    expect(bad.code).toBe(1)
    expect(readdirSync(join(cwd, 'runs'))).toHaveLength(1) // the failed run's empty directory is gone
    const none = span(['finetune', 'glue', '--task', 'sst2', '--preset', 'tiny'], cwd)
    expect(none.stderr).toBe('span finetune glue: missing --train: the training data (or --resume DIR to continue a run)\n')
    expect(none.code).toBe(2)
  })
})

describe('a new run owns its directory (25.2)', () => {
  it('refuses an --out that holds anything, touching nothing; --resume of it goes on', () => {
    const out = join(tmp, 'used')
    mkdirSync(join(out, 'checkpoint-7'), {recursive: true})
    writeFileSync(join(out, 'checkpoint-7', 'keep.txt'), 'not span')
    const r = span(['pretrain', train, ...TINY, '--max-steps', '1', '--out', out])
    expect(r.stderr).toMatch(/^span pretrain: .*used: not empty \(checkpoint-7\); a new run needs a new or empty directory.*--resume .*used\n$/)
    expect(r.code).toBe(1)
    expect(readdirSync(out)).toEqual(['checkpoint-7'])
    const ft = span(['finetune', 'glue', ...GLUE, '--train', tsv, '--out', out])
    expect(ft.stderr).toMatch(/^span finetune glue: .*used: not empty/)
    expect(ft.code).toBe(1)
  })

  it('--keep rotation deletes only the checkpoints the run wrote, never one it did not, across --resume', () => {
    const out = join(tmp, 'rot')
    const first = span(['pretrain', train, ...TINY, '--max-steps', '6', '--save-every', '2', '--stop-at', '2', '--out', out])
    expect(first.code, first.stderr).toBe(0)
    cpSync(join(out, 'checkpoint-2'), join(out, 'checkpoint-1'), {recursive: true}) // the user's copy, put in the run directory
    const rest = span(['pretrain', '--resume', out, '--keep', '1'])
    expect(rest.code, rest.stderr).toBe(0)
    expect(readdirSync(out).sort()).toEqual(['checkpoint-1', 'checkpoint-6', 'span-run.json'])
    expect(JSON.parse(readFileSync(join(out, 'span-run.json'), 'utf8'))).toEqual({format: 'span-run/1', checkpoints: [6]})
  })

  it('refuses --init and --out that are one place (a symbolic link, ./, a trailing slash, --out inside --init), and --out /', () => {
    const pt = join(tmp, 'pt')
    expect(span(['pretrain', train, ...TINY, '--max-steps', '1', '--out', pt]).code).toBe(0)
    symlinkSync(pt, join(tmp, 'pt-link'))
    const before = readdirSync(pt).sort()
    for (const out of ['pt-link/', './pt', join('pt', 'ft')]) {
      const r = span(['finetune', 'glue', ...GLUE_RUN, '--train', tsv, '--init', 'pt', '--out', out])
      expect(r.stderr).toMatch(
        new RegExp(
          `^span finetune glue: --out ${out.replaceAll('.', '\\.')} and --init pt are the same place \\(.*\\): the run would write over the model it starts from; give another --out\\n$`,
        ),
      )
      expect(r.code).toBe(2)
    }
    const pre = span(['pretrain', train, ...TINY, '--init', 'pt-link', '--out', 'pt/'])
    expect(pre.stderr).toMatch(/^span pretrain: --out pt\/ and --init pt-link are the same place/)
    expect(readdirSync(pt).sort()).toEqual(before)
    const root = span(['pretrain', train, ...TINY, '--out', '/'])
    expect(root.stderr).toBe('span pretrain: --out /: the root directory cannot hold a run; give a directory of its own, such as runs/NAME\n')
    expect(root.code).toBe(2)
    expect(existsSync('/best') || existsSync('/.span.lock')).toBe(false)
  })
})

describe('the lock of a run directory (25.3)', () => {
  it('--out same and --out alias (a symbolic link to same) exclude each other', async () => {
    mkdirSync(join(tmp, 'same'))
    symlinkSync(join(tmp, 'same'), join(tmp, 'alias'))
    const first = spawn(process.execPath, [BIN, 'pretrain', train, ...TINY, '--max-steps', '100000', '--out', 'same'], {cwd: tmp, stdio: 'ignore'})
    const ended = new Promise((resolve) => first.on('close', resolve))
    try {
      for (let i = 0; i < 400 && !existsSync(join(tmp, 'same', '.span.lock')); i++) await new Promise((r) => setTimeout(r, 50))
      const second = span(['pretrain', '--resume', 'alias/', '--max-steps', '2'])
      expect(second.stderr).toMatch(
        new RegExp(`^span pretrain: alias/: in use by another span run \\(pid ${first.pid}; lock .*same/\\.span\\.lock\\); wait for it to end`),
      )
      expect(lines(second.stderr)).toHaveLength(1)
      expect(second.code).toBe(1)
    } finally {
      first.kill('SIGINT')
      await ended
    }
  })

  it('a directory named like the lock file: span says so in one line and leaves no temporary', () => {
    const out = join(tmp, 'blocked')
    mkdirSync(join(out, '.span.lock'), {recursive: true})
    const r = span(['pretrain', train, ...TINY, '--max-steps', '1', '--out', out])
    expect(r.stderr).toBe(`span pretrain: ${out}/.span.lock: in the way of span's lock file (not a regular file); remove it\n`)
    expect(r.code).toBe(1)
    expect(readdirSync(out)).toEqual(['.span.lock'])
  })

  it.runIf(asRoot && setpriv)("a run directory span cannot write (root's, run as nobody) is refused when the lock is taken, before any training", () => {
    const out = join(tmp, 'roots')
    mkdirSync(out, {mode: 0o755})
    const p = spawnSync(
      'setpriv',
      ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, BIN, 'pretrain', train, ...TINY, '--max-steps', '1', '--out', out],
      {
        cwd: tmp,
        env: {...process.env, HOME: tmp},
        encoding: 'utf8',
      },
    )
    const r = {code: p.status, stderr: p.stderr}
    expect(r.stderr).toMatch(
      new RegExp(`^span pretrain: ${out}: permission denied \\(EACCES\\): span writes the run there \\(choose a directory you can write\\)$`, 'm'),
    )
    expect(r.stderr).not.toMatch(/config:|step/)
    expect(r.code).toBe(1)
  })
})

describe('a run directory is a model everywhere (24.3)', () => {
  const pre = join(tmp, 'pre-run')
  const ft = join(tmp, 'ft-run')
  beforeAll(() => {
    expect(span(['pretrain', train, ...TINY, '--max-steps', '2', '--out', pre]).code).toBe(0)
    expect(span(['finetune', 'glue', ...GLUE, '--train', tsv, '--dev', tsv, '--epochs', '1', '--out', ft]).code).toBe(0)
  })

  it('encode, fill and export take a pretrain run (its newest checkpoint, said on stderr)', () => {
    const blocks = readFileSync(train, 'utf8')
    const enc = runSpan(['encode', '--model', pre, '--pool', 'cls', '--backend', 'wasm'], {input: blocks})
    expect(enc.code, enc.stderr).toBe(0)
    expect(enc.stderr).toContain(`span encode: ${pre} has no best/ (a run without dev scoring); using its newest checkpoint, ${join(pre, 'checkpoint-2')}`)
    const fill = runSpan(['fill', '--model', pre, '--vocab', join(pre, 'checkpoint-2', 'vocab.txt'), '--backend', 'wasm'], {input: 'a [MASK] b\n'})
    expect(fill.code, fill.stderr).toBe(0)
    expect(fill.stderr).toContain(`span fill: ${pre} has no best/`)
    const exp = span(['export', '--model', pre, '--to', join(tmp, 'exported'), '--format', 'safetensors'])
    expect(exp.code, exp.stderr).toBe(0)
    expect(exp.stderr).toContain(`using its newest checkpoint, ${join(pre, 'checkpoint-2')}`)
    expect(existsSync(join(tmp, 'exported', 'model.safetensors'))).toBe(true)
  })

  it('predict takes a finetune run (its best/), finetune --init a pretrain run (its newest checkpoint, said on stderr)', () => {
    const pred = span(['predict', 'glue', '--model', ft, '--data', tsv, '--backend', 'wasm'])
    expect(pred.code, pred.stderr).toBe(0)
    expect(pred.stderr).toBe('') // its best/: the run's model, as --init takes it
    const again = span(['finetune', 'glue', ...GLUE_RUN, '--train', tsv, '--epochs', '1', '--init', pre, '--out', join(tmp, 'from-pre')])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain(`${pre} has no best/`)
  })
})

describe('finetune --resume needs no flag again (24.4)', () => {
  const out = join(tmp, 'ft-resume')
  beforeAll(() => {
    const r = span(['finetune', 'glue', ...GLUE, '--train', tsv, '--dev', tsv, '--epochs', '2', '--stop-at', '2', '--out', out])
    expect(r.code, r.stderr).toBe(0)
  })

  it('a flag typed again that differs is refused in one line; a default left out is not "given"; data typed again must be the same bytes', () => {
    const epochs = span(['finetune', 'glue', '--resume', out, '--epochs', '3'])
    expect(epochs.stderr).toBe(
      `span finetune glue: --epochs 3 differs from the run in ${join(out, 'checkpoint-2')} (2); leave it out to continue the run as it was\n`,
    )
    expect(epochs.code).toBe(2)
    const other = join(tmp, 'other.tsv')
    writeFileSync(other, readFileSync(tsv, 'utf8').replace('film 0', 'film 9'))
    const data = span(['finetune', 'glue', '--resume', out, '--train', other])
    expect(lines(data.stderr).at(-1) + '\n').toMatch(
      new RegExp(
        `^span finetune glue: --train ${other}: not the data the run in .*checkpoint-2 trained on \\(sha256 [0-9a-f]{12}…, the run's [0-9a-f]{12}…\\)\\n$`,
      ),
    )
    expect(data.code).toBe(1)
  })

  it('from another directory, with only --resume: the saved settings supply every flag; the same values typed again agree', () => {
    const elsewhere = mkdtempSync(join(tmp, 'elsewhere-'))
    const copy = join(elsewhere, 'sst2-copy.tsv')
    cpSync(tsv, copy)
    const r = span(['finetune', 'glue', '--resume', out, '--task', 'SST-2', '--epochs', '2', '--train', copy, '--log-every', '1'], elsewhere)
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/resuming at step 2/)
    expect(readdirSync(out).sort()).toEqual(['best', 'checkpoint-8', 'span-run.json'])
    const saved = JSON.parse(readFileSync(join(out, 'checkpoint-8', 'finetune_config.json'), 'utf8'))
    expect(saved).toMatchObject({task: 'SST-2', epochs: 2, 'max-len': 8, init: 'preset:tiny', dev: tsv})
  })

  it('pretrain --resume works from another directory: the saved input path is absolute', () => {
    const cwd = mkdtempSync(join(tmp, 'rel-'))
    cpSync(train, join(cwd, 'mine.ndjson')) // a name that does not exist where --resume runs
    expect(span(['pretrain', 'mine.ndjson', ...TINY, '--max-steps', '3', '--stop-at', '1', '--out', 'run'], cwd).code).toBe(0)
    const r = span(['pretrain', '--resume', join(cwd, 'run')])
    expect(r.code, r.stderr).toBe(0)
    expect(readdirSync(join(cwd, 'run'))).toContain('checkpoint-3')
  })
})
