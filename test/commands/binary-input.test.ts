// Binary input, one detection for every command that reads raw text (issue 13, item 12): vocab,
// segment-ngrams, tokenize and fill share `--binary` (detect by default: refuse input whose first 8 KB
// are mostly NULs or malformed UTF-8, and UTF-16 by name; text: never refuse; refuse: at the first
// NUL). Text with scattered NULs, U+FFFD and control characters is read as BERT's _clean_text
// reads it: they are dropped, so the output equals that of the text without them.
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {pool, spanAsync} from '../helpers/spawn.js'
import {writeBlocks} from '../core/train/helpers.js'

const root = join(import.meta.dirname, '..', '..')
const tmp = mkdtempSync(join(tmpdir(), 'span-binary-'))

const span = (args: string[]) => spanAsync(args, tmp)

/** The jobs, two processes at a time (the machine is shared). */
const two = <T>(jobs: (() => Promise<T>)[]) => pool(jobs, 2)

const JUNK = ['\u0000', '\u0000\u0000\u0000', '\ufffd', '\u0001', '\u0007', '\u001b']

beforeAll(() => {
  const lines = readFileSync(join(root, 'fixtures', 'corpus.txt'), 'utf8')
    .split('\n')
    .slice(0, 400)
  writeFileSync(join(tmp, 'clean.txt'), lines.join('\n') + '\n')
  let x = 99
  const rand = (n: number) => ((x = (x * 1103515245 + 12345) % 2 ** 31) >>> 8) % n
  const dirty = lines.map((l) => {
    let s = l
    for (let k = rand(4); k > 0; k--) {
      const at = rand(s.length + 1)
      s = s.slice(0, at) + JUNK[rand(JUNK.length)] + s.slice(at)
    }
    return s
  })
  writeFileSync(join(tmp, 'nuls.txt'), dirty.join('\n') + '\n')
  expect(dirty.join('').split('\u0000').length).toBeGreaterThan(50)
  const blob = Buffer.alloc(4096)
  for (let i = 0; i < blob.length; i++) blob[i] = (i * 2654435761) >>> 24
  blob[0] = 0
  writeFileSync(join(tmp, 'blob.bin'), blob)
  writeFileSync(join(tmp, 'utf16.txt'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hello world\n', 'utf16le')]))
  writeFileSync(join(tmp, 'few-nuls.txt'), 'hello\u0000 world\nagain and again\n')
})

const COMMANDS: [string, string[]][] = [
  ['vocab', ['--size', '80']],
  ['segment-ngrams', ['--build', '--min-count', '2']],
  ['tokenize', []],
]

describe('--binary: one detection for every raw-text reader', () => {
  it('fill: the same refusals and the same flag; scattered NULs read as text', async () => {
    writeBlocks(join(tmp, 'blocks.ndjson'), 40, 1)
    const pre = await span([
      'pretrain',
      'blocks.ndjson',
      ...'--preset tiny --layers 1 --hidden 16 --heads 2 --batch-size 2 --backend wasm --max-steps 1 --out pre'.split(' '),
    ])
    expect(pre.code, pre.stderr).toBe(0)
    writeFileSync(join(tmp, 'masked-nuls.txt'), 'the \u0000[MASK] brown\u0000 fox\n')
    const fill = (args: string[]) => () => span(['fill', ...args, '--model', 'pre/checkpoint-1', '--backend', 'wasm'])
    const [nuls, blob, utf16, strict] = await two([
      fill(['masked-nuls.txt']),
      fill(['blob.bin']),
      fill(['utf16.txt']),
      fill(['masked-nuls.txt', '--binary', 'refuse']),
    ])
    expect(nuls.code, nuls.stderr).toBe(0)
    expect(JSON.parse(nuls.stdout).spans).toHaveLength(1)
    expect(blob.stderr).toMatch(
      /^span fill: blob\.bin:1: binary input \(\d+ NUL and \d+ malformed UTF-8 bytes in the first 4096\); --binary text reads it as text anyway\n$/,
    )
    expect(utf16.stderr).toMatch(/^span fill: utf16\.txt:1: UTF-16LE input \(byte-order mark\)/)
    expect(strict.stderr).toMatch(/^span fill: masked-nuls\.txt:1: binary input \(NUL byte\)/)
    for (const r of [blob, utf16, strict]) expect(r.code).toBe(1)
  }, 90_000)

  for (const [cmd, extra] of COMMANDS) {
    it(`${cmd}: scattered NULs dropped as _clean_text drops them; binary and UTF-16 refused by name; the flag forces either way`, async () => {
      const [clean, nuls, blob, blobText, utf16, strict] = await two([
        () => span([cmd, 'clean.txt', ...extra]),
        () => span([cmd, 'nuls.txt', ...extra]),
        () => span([cmd, 'blob.bin', ...extra]),
        () => span([cmd, 'blob.bin', '--binary', 'text', ...extra]),
        () => span([cmd, 'utf16.txt', ...extra]),
        () => span([cmd, 'few-nuls.txt', '--binary', 'refuse', ...extra]),
      ])
      expect(nuls.code, nuls.stderr).toBe(0)
      expect(clean.code).toBe(0)
      expect(nuls.stdout).toBe(clean.stdout.replace('clean.txt', 'nuls.txt')) // tokenize's header names its vocabulary, not the input
      expect(nuls.stdout.length).toBeGreaterThan(100)
      expect(blob.stderr).toMatch(
        new RegExp(
          `^span ${cmd}: blob\\.bin:1: binary input \\(\\d+ NUL and \\d+ malformed UTF-8 bytes in the first 4096\\); --binary text reads it as text anyway\\n$`,
        ),
      )
      expect(blob.code).toBe(1)
      expect(blobText.stderr).not.toMatch(/binary input/)
      expect(utf16.stderr).toMatch(new RegExp(`^span ${cmd}: utf16\\.txt:1: UTF-16LE input \\(byte-order mark\\); convert it to UTF-8`))
      expect(utf16.code).toBe(1)
      expect(strict.stderr).toMatch(new RegExp(`^span ${cmd}: few-nuls\\.txt:1: binary input \\(NUL byte\\)`))
      expect(strict.code).toBe(1)
    }, 60_000)
  }
})
