// NUL bytes in text (issue 13): `span tokenize` reads text with NULs and drops them as BERT's
// _clean_text does (ids equal to the reference tokenizer, Hugging Face `tokenizers`, on a
// held-out text: fixtures/corpus.txt with NULs and other cleaned characters inserted), and
// refuses only input that looks binary (or UTF-16, by name); --binary forces either way.
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {DEFAULT_VOCAB, loadVocab} from '../../src/core/text/vocab.js'
import {oracle} from '../core/text/tokenizer-oracle.js'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'run.js')
const tmp = mkdtempSync(join(tmpdir(), 'span-nul-'))
const span = (args: string[]) => spawnSync('node', [bin, ...args], {cwd: root, encoding: 'utf8', maxBuffer: 1 << 28})

/** The corpus's first lines with NULs (alone, in runs, inside words, whole lines of them), U+FFFD and controls. */
function adversarialText(): string[] {
  const lines = readFileSync(join(root, 'fixtures', 'corpus.txt'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(0, 200)
  let x = 12345
  const rand = (n: number) => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) % n
  }
  const junk = ['\u0000', '\u0000\u0000\u0000', '\uFFFD', '\u0001', '\u0000\u00AD', 'a\u0000b', '\u0007\u0000 ']
  const out = lines.map((l) => {
    let s = l
    for (let k = rand(6); k > 0; k--) {
      const at = rand(s.length + 1)
      s = s.slice(0, at) + junk[rand(junk.length)] + s.slice(at)
    }
    return s
  })
  out.splice(7, 0, '\u0000\u0000\u0000', 'x\u0000y\u0000z')
  return out
}

describe('span tokenize: NUL bytes', () => {
  it('tokenizes text with NULs exactly as the reference tokenizer does (0 mismatches)', async () => {
    const lines = adversarialText()
    expect(lines.join('').split('\u0000').length - 1).toBeGreaterThan(100)
    const file = join(tmp, 'nul.txt')
    writeFileSync(file, lines.join('\n') + '\n')
    const r = span(['tokenize', file])
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    const got = r.stdout
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((l) => (JSON.parse(l) as {ids: number[]}).ids)
      .filter((ids) => ids.length > 0)
    const ref = await oracle(DEFAULT_VOCAB, !loadVocab(DEFAULT_VOCAB).cased)
    const want = (await ref.ids(lines)).filter((ids) => ids.length > 0)
    const mismatches = want.filter((ids, i) => ids.join(',') !== (got[i] ?? []).join(','))
    expect(got.length).toBe(want.length)
    expect(mismatches).toEqual([])
  })

  it('refuses binary input and UTF-16 by name; --binary text and --binary refuse force either way', () => {
    const bytes = Buffer.alloc(4096)
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 2654435761) >>> 24 // a binary blob: NULs and malformed UTF-8
    bytes[0] = 0
    const blob = join(tmp, 'blob.bin')
    writeFileSync(blob, bytes)
    const refused = span(['tokenize', blob])
    expect(refused.stderr).toMatch(
      /^span tokenize: .*blob\.bin:1: binary input \(\d+ NUL and \d+ malformed UTF-8 bytes in the first 4096\); --binary text reads it as text anyway\n$/,
    )
    expect(refused.status).toBe(1)
    expect(span(['tokenize', blob, '--binary', 'text']).status).toBe(0)
    const utf16 = join(tmp, 'utf16.txt')
    writeFileSync(utf16, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hello world\n', 'utf16le')]))
    const u = span(['tokenize', utf16])
    expect(u.stderr).toMatch(/utf16\.txt:1: UTF-16LE input \(byte-order mark\); convert it to UTF-8/)
    expect(u.status).toBe(1)
    const nul = join(tmp, 'few-nuls.txt')
    writeFileSync(nul, 'hello\u0000 world\nagain\n')
    expect(span(['tokenize', nul]).status).toBe(0)
    const strict = span(['tokenize', nul, '--binary', 'refuse'])
    expect(strict.stderr).toMatch(/few-nuls\.txt:1: binary input \(NUL byte\)/)
    expect(strict.status).toBe(1)
  })
})
