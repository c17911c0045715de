import {writeFileSync} from 'node:fs'
import {Writable} from 'node:stream'
import {Rng} from '../../../src/core/data/rng.js'
import {LineWriter} from '../../../src/core/stream/writer.js'
import {DEFAULT_VOCAB, loadVocab} from '../../../src/core/text/vocab.js'
import type {FinetuneSettings} from '../../../src/core/train/finetune-config.js'

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

/** A progress bar that draws nothing, for finetune()'s io. */
export const quietProgress = {start: (): void => {}, update: (): void => {}, stop: (): void => {}}

/**
 * The fine-tuning settings the loop's tests share: a seeded cpu run from `init: 'test'` over
 * in-memory splits, lr 1e-3 with a tenth warmed up, weight decay 0.01, clipping at 1, two epochs
 * of batch 2, a log record every step; `own` gives the task and what the test sets itself.
 */
export function tinySettings<T extends Partial<FinetuneSettings> & {task: string}>(out: string, own: T): FinetuneSettings & T {
  return {
    init: 'test',
    train: 'mem',
    dev: 'mem',
    out,
    cased: false,
    'max-len': 32,
    lr: 1e-3,
    'warmup-proportion': 0.1,
    'weight-decay': 0.01,
    clip: 1,
    epochs: 2,
    'batch-size': 2,
    accumulate: 1,
    seed: 1,
    backend: 'cpu',
    'log-every': 1,
    ...own,
  }
}
