// CoNLL reading, tag schemes, first-sub-token labels with windows, and the three prediction forms of eval ner.
import {describe, expect, it} from 'vitest'
import {conllCount, conllTable} from '../../../src/core/metrics/conlleval.js'
import {conllRows} from '../../../src/core/tasks/ner/evaluate.js'
import {nerFeatures} from '../../../src/core/tasks/ner/features.js'
import {detectScheme, fromIob2, inScheme, nerLabels, parseConll, toIob2} from '../../../src/core/tasks/ner/read.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {fixtureVocab} from '../train/helpers.js'

const GOLD =
  '-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\nGerman JJ I-NP I-MISC\ncall NN I-NP O\n\nPeter NNP I-NP I-PER\nBlackburn NNP I-NP I-PER\n'

describe('CoNLL files', () => {
  it('splits documents, sentences and tokens, and detects IOB1', () => {
    const f = parseConll(GOLD, 'g', {labeled: true})
    expect(f.sentences.map((s) => s.words)).toEqual([
      ['EU', 'rejects', 'German', 'call'],
      ['Peter', 'Blackburn'],
    ])
    expect(f.lines.map((l) => l.kind)).toEqual(['docstart', 'blank', 'token', 'token', 'token', 'token', 'blank', 'token', 'token'])
    expect(detectScheme(f.sentences.map((s) => s.tags))).toBe('iob1')
    expect(detectScheme([['B-PER', 'I-PER', 'O', 'B-LOC']])).toBe('iob2')
    expect(nerLabels(f.sentences)).toEqual(['O', 'B-MISC', 'I-MISC', 'B-ORG', 'I-ORG', 'B-PER', 'I-PER'])
  })

  it('converts between IOB1 and IOB2 (B- between two chunks of one type survives)', () => {
    const iob1 = ['I-PER', 'I-PER', 'B-PER', 'O', 'I-LOC', 'I-ORG']
    const iob2 = ['B-PER', 'I-PER', 'B-PER', 'O', 'B-LOC', 'B-ORG']
    expect(toIob2(iob1)).toEqual(iob2)
    expect(fromIob2(iob2)).toEqual(iob1)
    expect(inScheme(['O', 'I-PER'], 'iob2')).toEqual(['O', 'B-PER']) // a chunk opened by I- is repaired
  })

  it.each([
    ['a column fewer', 'EU NNP I-NP I-ORG\nrejects VBZ O\n', /g:2: expected 4 columns as on the first token line, got 3/],
    ['a tag that is not IOB', 'EU NNP I-NP I-ORG\nrejects VBZ I-VP X-ORG\n', /g:2: not an IOB tag: "X-ORG"/],
    ['no tokens', '-DOCSTART- -X- O O\n\n', /g: no token lines/],
  ])('refuses %s with source:line', (_, text, re) => {
    expect(() => parseConll(text, 'g', {labeled: true})).toThrow(re)
  })
})

describe('NER features', () => {
  const tok = new WordPieceTokenizer(fixtureVocab, {lowercase: !fixtureVocab.cased})
  it('labels each word on its first sub-token only', () => {
    const words = ['Blackburn', 'rejects', 'it']
    const [f] = nerFeatures(words, [5, 0, 0], 0, tok, 64, 8)
    const n = words.map((w) => tok.encode(w).length)
    expect(f.ids.length).toBe(n.reduce((a, b) => a + b) + 2)
    const labelled = [...f.labels].map((l, i) => [i, l]).filter(([, l]) => l >= 0)
    expect(labelled).toEqual([
      [1, 5],
      [1 + n[0], 0],
      [1 + n[0] + n[1], 0],
    ])
    expect([...f.words].filter((w) => w >= 0)).toEqual([0, 1, 2])
  })

  it('windows a long sentence with a stride; every word labelled in exactly one window', () => {
    const words = Array.from({length: 30}, (_, i) => ['the', 'man', 'walked'][i % 3])
    const fs = nerFeatures(
      words,
      words.map(() => 0),
      3,
      tok,
      12,
      4,
    )
    expect(fs.length).toBeGreaterThan(3)
    expect(fs.every((f) => f.ids.length <= 12 && f.sentence === 3)).toBe(true)
    const seen = fs.flatMap((f) => [...f.words].filter((w) => w >= 0)).sort((a, b) => a - b)
    expect(seen).toEqual(words.map((_, i) => i))
  })
})

describe('eval ner: the three prediction forms give conlleval the same rows', () => {
  const gold = parseConll(GOLD, 'g', {labeled: true})
  const layoutText =
    '-DOCSTART- -X- O O O\n\nEU NNP I-NP I-ORG I-ORG\nrejects VBZ I-VP O O\nGerman JJ I-NP I-MISC I-LOC\ncall NN I-NP O O\n\nPeter NNP I-NP I-PER I-PER\nBlackburn NNP I-NP I-PER I-PER\n'
  const conllText = 'EU I-ORG I-ORG\nrejects O O\nGerman I-MISC I-LOC\ncall O O\n\nPeter I-PER I-PER\nBlackburn I-PER I-PER\n'
  const twoText = 'EU I-ORG\nrejects O\nGerman I-LOC\ncall O\n\nPeter I-PER\nBlackburn I-PER\n'
  it('gold layout + PRED, token GOLD PRED and token PRED (without -DOCSTART-)', () => {
    const [layout, conll, two] = [layoutText, conllText, twoText].map((t) => parseConll(t, 'p', {labeled: false}))
    const tables = [layout, conll, two].map((p) => conllTable(conllCount(conllRows(gold, p))))
    expect(tables[1]).toBe(tables[0])
    expect(tables[2]).toBe(tables[0])
    expect(tables[0]).toContain('processed 7 tokens with 3 phrases; found: 3 phrases; correct: 2.')
  })

  it('refuses a token that differs from the gold file, and a gold column that differs', () => {
    expect(() => conllRows(gold, parseConll('EU O\nrejects O\nGerman O\ncall O\nPeter O\nBlackburn O\nX O\n', 'p', {labeled: false}))).toThrow(
      /p: 7 token lines for 6/,
    )
    expect(() => conllRows(gold, parseConll('EU O\nrejects O\nGerman O\ncall O\nPeter O\nSmith O\n', 'p', {labeled: false}))).toThrow(
      /p:6: token "Smith" where g:9 has "Blackburn"/,
    )
    expect(() =>
      conllRows(gold, parseConll('EU I-LOC O\nrejects O O\nGerman I-MISC O\ncall O O\nPeter I-PER O\nBlackburn I-PER O\n', 'p', {labeled: false})),
    ).toThrow(/p:1: gold column "I-LOC" differs/)
  })
})
