import {writeFileSync} from 'node:fs'
import {Writable} from 'node:stream'
import {Rng} from '../../../src/core/data/rng.js'
import {LineWriter} from '../../../src/core/stream/writer.js'
import {DEFAULT_VOCAB, loadVocab} from '../../../src/core/text/vocab.js'

export const fixtureVocab = loadVocab(DEFAULT_VOCAB)

/** A stream header for the fixture vocabulary. */
export function header(kind: string): string {
  const v = fixtureVocab
  return JSON.stringify({span: 'header', kind, vocab: v.info, cased: v.cased, special: v.special, history: []})
}

/** `count` blocks of 12–27 random non-special ids between [CLS] and [SEP]; with pairs, segments and next. */
export function writeBlocks(path: string, count: number, seed: number, pairs = false): void {
  const rng = new Rng(seed)
  const {cls, sep} = fixtureVocab.special
  const lines = [header('blocks')]
  for (let i = 0; i < count; i++) {
    const n = 12 + rng.int(16)
    const ids = [cls, ...Array.from({length: n}, () => 5 + rng.int(fixtureVocab.tokens.length - 5)), sep]
    if (!pairs) {
      lines.push(JSON.stringify({doc: i, ids}))
      continue
    }
    const cut = 1 + Math.floor(ids.length / 2)
    const withSep = [...ids.slice(0, cut), sep, ...ids.slice(cut)]
    const segments = withSep.map((_, t) => (t <= cut ? 0 : 1))
    lines.push(JSON.stringify({ids: withSep, segments, next: rng.int(2) === 0}))
  }
  writeFileSync(path, lines.join('\n') + '\n')
}

/** A LineWriter that keeps the records it is given. */
export function memoryWriter(): {writer: LineWriter; records: () => Record<string, unknown>[]} {
  const chunks: string[] = []
  const sink = new Writable({write(chunk, _enc, cb) {
    chunks.push(String(chunk))
    cb()
  }})
  const writer = new LineWriter(sink)
  return {writer, records: () => chunks.join('').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l))}
}
