// `span vocab` reads a raw-text line of any length in pieces (long-line.ts rawPieces, cut where
// BERT's BasicTokenizer cannot join words): the corpus as one line of about 1 MB (4 pieces or
// more) gives the vocabulary the corpus gives line by line, cased and uncased, with accents,
// combining marks and CJK in the text.
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {ROOT, runSpan} from '../helpers/spawn.js'
import {PIECE_BYTES} from '../../src/core/text/long-line.js'

const dir = mkdtempSync(join(tmpdir(), 'span-vocab-long-'))
const lines = readFileSync(join(ROOT, 'fixtures', 'corpus.txt'), 'utf8').split('\n')
const extra = ['Café naïve Ångström', 'cafe\u0301 re\u0301sume\u0301', '中国的首都是北京。', 'ÉCOLE École'] // precomposed, combining, CJK
const text = [...lines, ...lines.map((l, i) => `${l} ${extra[i % extra.length]}`), ...lines].filter((l) => l.trim() !== '')
writeFileSync(join(dir, 'lines.txt'), text.join('\n') + '\n')
writeFileSync(join(dir, 'one.txt'), text.join(' ') + '\n')

describe('span vocab on one long line', () => {
  it('the line is longer than several pieces', () => {
    expect(Buffer.byteLength(text.join(' '))).toBeGreaterThan(3 * PIECE_BYTES)
  })

  for (const casing of ['--cased', '--uncased']) {
    it(`${casing}: the same vocabulary as the same words on many lines`, () => {
      const many = runSpan(['vocab', '--size', '2000', casing, 'lines.txt'], {cwd: dir})
      const one = runSpan(['vocab', '--size', '2000', casing, 'one.txt'], {cwd: dir})
      expect([many.code, one.code]).toEqual([0, 0])
      expect(one.stdout.split('\n').length).toBeGreaterThan(1000)
      expect(one.stdout).toBe(many.stdout)
      expect(one.stderr).toBe(many.stderr)
    })
  }
})
