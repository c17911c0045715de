// Issue 25, causes 1 and 4, as a user meets them (real processes of bin/run.js, real mounts and
// links): a directory output (predict squad -o, export --to) writes only its own files and never
// renames, replaces or empties the folder; outputs that are one file, or an input, are refused by
// real path. Mounts need root (the suite runs as root in CI); those cases skip with a reason
// elsewhere. SPAN_TEST_BIN runs the same cases against another build (the one before the fix).
import {spawnSync} from 'node:child_process'
import {chownSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {BIN} from '../helpers/spawn.js'
import {initBackend} from '../../src/core/engine/index.js'
import {saveCheckpoint, writeFilesAtomically} from '../../src/core/model/checkpoint.js'
import {SpanBertForPreTraining} from '../../src/core/model/pretraining.js'
import {BertForQuestionAnswering, qaModelFiles} from '../../src/core/model/qa.js'
import {smallConfig} from '../core/model/helpers.js'
import {fixtureVocab} from '../core/train/helpers.js'
import {qas, squad} from './squad-fixture.js'

const bin = process.env.SPAN_TEST_BIN ?? BIN
const tmp = mkdtempSync(join(tmpdir(), 'span-owned-'))
const ckpt = join(tmp, 'ckpt')
const qa = join(tmp, 'qa')
const data = join(tmp, 'v1.json')
const mounts: string[] = []

function span(args: string[], cwd = tmp) {
  const r = spawnSync(process.execPath, [bin, ...args], {cwd, encoding: 'utf8'})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}
const sh = (line: string) => spawnSync('bash', ['-c', line], {encoding: 'utf8'})
const mount = (args: string, at: string): boolean => {
  const ok = sh(`mount ${args} ${at}`).status === 0
  if (ok) mounts.push(at)
  return ok
}
const canMount = (() => {
  const probe = mkdtempSync(join(tmpdir(), 'span-mount-probe-'))
  const ok = sh(`mount -t tmpfs -o size=64k tmpfs ${probe} && umount ${probe}`).status === 0
  return ok
})()
const files = (dir: string) => readdirSync(dir).sort()

beforeAll(async () => {
  await initBackend('cpu')
  const model = SpanBertForPreTraining.init(smallConfig({vocab_size: fixtureVocab.tokens.length}), 5)
  await saveCheckpoint(ckpt, model, fixtureVocab.info.path)
  model.dispose()
  const m = BertForQuestionAnswering.init(smallConfig({vocab_size: fixtureVocab.tokens.length, max_position_embeddings: 40}), 4)
  await writeFilesAtomically(qa, await qaModelFiles(m))
  m.dispose()
  copyFileSync(fixtureVocab.info.path, join(qa, 'vocab.txt'))
  writeFileSync(join(qa, 'finetune_config.json'), JSON.stringify({'max-len': 32, 'doc-stride': 8, 'max-query-len': 8}))
  writeFileSync(data, squad(qas))
})
afterAll(() => {
  for (const at of mounts.reverse()) sh(`umount ${at}`) // even when a case failed
})

describe('cause 1: a directory output writes only its own files', () => {
  it('predict squad with the default -o . keeps the caller’s working directory (same inode) and everything in it', () => {
    const w = join(tmp, 'w')
    mkdirSync(join(w, 'sub'), {recursive: true})
    writeFileSync(join(w, 'notes.txt'), 'mine')
    writeFileSync(join(w, '.x.tmp-999999999'), 'a user file whose name looks like a temporary one')
    const before = statSync(w).ino
    const r = span(['predict', 'squad', '--model', qa, '--data', data, '--backend', 'wasm'], w)
    expect(r.code, r.stderr).toBe(0)
    expect(statSync(w).ino).toBe(before) // not a new directory renamed over the old one
    expect(files(w)).toEqual(['.x.tmp-999999999', 'nbest_predictions.json', 'notes.txt', 'predictions.json', 'sub'])
    expect(readdirSync(tmp).filter((n) => n.startsWith('.w.'))).toEqual([])
  })

  it('export --to a symbolic link writes into the folder it names; the link stays a link', () => {
    const elsewhere = join(tmp, 'elsewhere')
    mkdirSync(elsewhere)
    writeFileSync(join(elsewhere, 'keep.txt'), 'kept')
    symlinkSync(elsewhere, join(tmp, 'link'))
    const r = span(['export', '--model', ckpt, '--to', 'link', '--format', 'pytorch'])
    expect(r.code, r.stderr).toBe(0)
    expect(lstatSync(join(tmp, 'link')).isSymbolicLink()).toBe(true)
    expect(files(elsewhere)).toContain('keep.txt')
    expect(files(elsewhere)).toContain('pytorch_model.bin')
  })

  it('export --model ckpt/ --to ./ckpt (one folder spelled twice) is refused, and the checkpoint keeps every file', () => {
    const before = files(ckpt)
    const r = span(['export', '--model', 'ckpt/', '--to', './ckpt', '--format', 'pytorch'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^span export: .*--model's own directory.*\n$/)
    expect(files(ckpt)).toEqual(before)
  })

  it('export into a folder with another checkpoint’s state keeps that state; its own temporaries of dead processes are cleared, nothing else', () => {
    const d = join(tmp, 'other')
    mkdirSync(d)
    writeFileSync(join(d, 'trainer_state.json'), '{}')
    writeFileSync(join(d, 'optimizer.safetensors'), 'x')
    writeFileSync(join(d, '.config.json.tmp-999999999'), 'left by a killed export')
    writeFileSync(join(d, '.notes.tmp-999999999'), 'a user file')
    expect(span(['export', '--model', ckpt, '--to', d, '--format', 'safetensors']).code).toBe(0)
    expect(files(d)).toEqual(
      [
        '.notes.tmp-999999999',
        'config.json',
        'model.safetensors',
        'optimizer.safetensors',
        'span-manifest.json',
        'special_tokens_map.json',
        'tokenizer_config.json',
        'trainer_state.json',
        'vocab.txt',
      ].sort(),
    )
  })

  it('a file of another user in the folder is left as it is', () => {
    const d = join(tmp, 'shared')
    mkdirSync(d)
    writeFileSync(join(d, 'theirs.txt'), 'theirs')
    chownSync(join(d, 'theirs.txt'), 65534, 65534)
    expect(span(['predict', 'squad', '--model', qa, '--data', data, '--backend', 'wasm', '-o', d]).code).toBe(0)
    expect(statSync(join(d, 'theirs.txt')).uid).toBe(65534)
    expect(readFileSync(join(d, 'theirs.txt'), 'utf8')).toBe('theirs')
  })

  it.skipIf(!canMount)('a mount point as the folder, and one inside it, stay mounted with their files', () => {
    const mp = join(tmp, 'mp')
    mkdirSync(mp)
    expect(mount('-t tmpfs -o size=4m tmpfs', mp)).toBe(true)
    writeFileSync(join(mp, 'on-the-mount.txt'), 'x')
    mkdirSync(join(mp, 'inner'))
    expect(mount('-t tmpfs -o size=64k tmpfs', join(mp, 'inner'))).toBe(true)
    writeFileSync(join(mp, 'inner', 'deep.txt'), 'y')
    const r = span(['export', '--model', ckpt, '--to', mp, '--format', 'safetensors'])
    expect(r.code, r.stderr).toBe(0)
    expect(sh(`mountpoint -q ${mp} && mountpoint -q ${mp}/inner`).status).toBe(0)
    expect(files(mp)).toContain('on-the-mount.txt')
    expect(files(mp)).toContain('model.safetensors')
    expect(files(join(mp, 'inner'))).toEqual(['deep.txt'])
  })

  it.skipIf(!canMount)('a read-only folder (a read-only bind mount) is refused in one line, its files untouched, nothing left', () => {
    const ro = join(tmp, 'ro')
    mkdirSync(ro)
    writeFileSync(join(ro, 'predictions.json'), '{"old": "kept"}')
    expect(mount(`--bind ${ro}`, ro)).toBe(true)
    expect(sh(`mount -o remount,ro,bind ${ro}`).status).toBe(0)
    const r = span(['predict', 'squad', '--model', qa, '--data', data, '--backend', 'wasm', '-o', ro])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^span predict squad: .*ro\/.*read-only file system \(EROFS\)\n$/)
    expect(files(ro)).toEqual(['predictions.json'])
    expect(readFileSync(join(ro, 'predictions.json'), 'utf8')).toBe('{"old": "kept"}')
    expect(readdirSync(tmp).filter((n) => n.startsWith('.ro.'))).toEqual([])
  })
})

describe('cause 4: two outputs with one path, or an output that is an input, are refused by real path', () => {
  const blocks = join(tmp, 'blocks.ndjson')
  beforeAll(() => {
    writeFileSync(join(tmp, 'text.txt'), 'the quick brown fox jumps over the lazy dog\n'.repeat(20))
    expect(span(['tokenize', 'text.txt', '-o', 'tokens.ndjson']).code).toBe(0)
    expect(span(['block', 'tokens.ndjson', '--len', '16', '-o', blocks]).code).toBe(0)
  })

  it('mask --write-unigram m -o m, spelled alike, through ./, or through a symbolic link (even a dangling one)', () => {
    symlinkSync('m2.ndjson', join(tmp, 'alias'))
    for (const [counts, out] of [
      ['m.ndjson', 'm.ndjson'],
      ['m.ndjson', './m.ndjson'],
      ['alias', 'm2.ndjson'],
    ]) {
      const r = span(['mask', blocks, '--write-unigram', counts, '-o', out])
      expect(r.code, `${counts} ${out}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toMatch(/^span mask: -o and --write-unigram name one file .*\n$/)
    }
    expect(existsSync(join(tmp, 'm.ndjson')) || existsSync(join(tmp, 'm2.ndjson'))).toBe(false)
    expect(lstatSync(join(tmp, 'alias')).isSymbolicLink()).toBe(true)
  })

  it('an output that is the input (same name, or a hard link to it) is refused and the input kept', () => {
    const before = readFileSync(join(tmp, 'tokens.ndjson'))
    sh(`ln ${tmp}/tokens.ndjson ${tmp}/hard.ndjson`)
    for (const out of ['tokens.ndjson', 'hard.ndjson']) {
      const r = span(['block', 'tokens.ndjson', '--len', '16', '-o', out])
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toMatch(/^span block: -o .* is also the input argument, an input.*\n$/)
    }
    expect(readFileSync(join(tmp, 'tokens.ndjson'))).toEqual(before)
  })

  it('a symbolic-link output is written through: the link stays, the file it names gets the output', () => {
    writeFileSync(join(tmp, 'target.ndjson'), 'old\n')
    symlinkSync('target.ndjson', join(tmp, 'out-link'))
    symlinkSync('made.ndjson', join(tmp, 'dangling'))
    for (const link of ['out-link', 'dangling']) expect(span(['block', 'tokens.ndjson', '--len', '16', '-o', link]).code).toBe(0)
    expect(lstatSync(join(tmp, 'out-link')).isSymbolicLink() && lstatSync(join(tmp, 'dangling')).isSymbolicLink()).toBe(true)
    expect(readFileSync(join(tmp, 'target.ndjson'), 'utf8')).toMatch(/^\{"span":"header"/)
    expect(readFileSync(join(tmp, 'made.ndjson'), 'utf8')).toMatch(/^\{"span":"header"/)
  })

  it('/dev/null given for two outputs is fine (devices are written in place, never renamed)', () => {
    expect(span(['mask', blocks, '--write-unigram', '/dev/null', '-o', '/dev/null']).code).toBe(0)
  })
})
