// The demo's own SQuAD set (fixtures/squad-demo, made by tools/make-demo-squad.mjs from hand-written
// questions over fixtures/corpus.txt): well-formed v1.1 with exact offsets, dev paragraphs disjoint
// from train's, unique ids, and every answer's token span mapping back to its gold text through the
// featurizer with the embedded cased vocabulary, at the default windows and at the demo's 128-token ones.
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {SquadFeaturizer, readSquadFile, spanText, type SquadDataset} from '../../../src/core/tasks/squad/index.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {DEFAULT_CORPUS, DEFAULT_VOCAB, loadVocab} from '../../../src/core/text/vocab.js'

const DIR = join(__dirname, '..', '..', '..', 'fixtures', 'squad-demo')
const train = readSquadFile(join(DIR, 'train.json'), {checkOffsets: true})
const dev = readSquadFile(join(DIR, 'dev.json'), {checkOffsets: true})
const tok = new WordPieceTokenizer(loadVocab(DEFAULT_VOCAB), {lowercase: false})
const basic = (t: string) => tok.basic(t)

/** Answers whose label maps back to something other than the gold text (or that have no label). */
function unmapped(ds: SquadDataset, windows: {maxLen?: number; docStride?: number} = {}): string[] {
  const fz = new SquadFeaturizer(tok, windows)
  const bad: string[] = []
  ds.examples.forEach((ex, i) => {
    const [a] = ex.answers
    const {features, answerNotFound} = fz.features(ex, i, true)
    const holding = features.filter((f) => f.start > 0)
    if (answerNotFound || holding.length === 0) return void bad.push(`${ex.id} ${JSON.stringify(a.text)}: no label`)
    for (const f of holding) {
      const text = spanText(fz.doc(ex.context), f, f.start, f.end, basic).text
      if (text !== a.text) bad.push(`${ex.id} ${JSON.stringify(a.text)} → ${JSON.stringify(text)}`)
    }
  })
  return bad
}

describe('fixtures/squad-demo', () => {
  it('is SQuAD v1.1 with one answer per question, every offset exact', () => {
    for (const ds of [train, dev]) {
      expect(ds.declaredVersion).toBe('1.1')
      expect(ds.version).toBe('1.1')
      expect(ds.examples.every((ex) => ex.answers.length === 1 && !ex.isImpossible)).toBe(true)
    }
    expect(train.examples.length).toBe(156)
    expect(dev.examples.length).toBe(42)
  })

  it('covers all 11 addresses in both splits', () => {
    for (const ds of [train, dev]) expect(new Set(ds.examples.map((ex) => ex.title)).size).toBe(11)
  })

  it('has unique ids across both splits', () => {
    const ids = [...train.examples, ...dev.examples].map((ex) => ex.id)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('keeps dev paragraphs disjoint from train paragraphs, down to the sentence', () => {
    const sentences = (ds: SquadDataset) => new Set(ds.examples.map((ex) => ex.context))
    const trainContexts = sentences(train)
    const devContexts = sentences(dev)
    expect([...devContexts].filter((c) => trainContexts.has(c))).toEqual([])
    // every context is whole corpus lines, and no corpus line is in both splits
    const corpus = new Set(readFileSync(DEFAULT_CORPUS, 'utf8').split('\n').filter((l) => l.trim() !== ''))
    const linesOf = (contexts: Set<string>) => {
      const out = new Set<string>()
      for (const c of contexts) for (const l of corpus) if (c.includes(l)) out.add(l)
      return out
    }
    const trainLines = linesOf(trainContexts)
    expect([...linesOf(devContexts)].filter((l) => trainLines.has(l) && l.length > 40)).toEqual([])
  })

  it('maps every answer back to its gold text through the featurizer (embedded cased vocabulary)', () => {
    for (const ds of [train, dev]) {
      expect(unmapped(ds)).toEqual([])
      expect(unmapped(ds, {maxLen: 128, docStride: 64})).toEqual([])
    }
  })
})
