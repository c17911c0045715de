// --tag-column / --tag-types: which CoNLL column a token classifier learns, and conlleval on that column (issue 33: the NP chunker).
import {describe, expect, it} from 'vitest'
import {conllCount, conllScores} from '../../../src/core/metrics/conlleval.js'
import {conllRows} from '../../../src/core/tasks/ner/evaluate.js'
import {detectScheme, nerLabels, parseConll} from '../../../src/core/tasks/ner/read.js'
import {parseTagColumn} from '../../../src/core/tasks/ner/tag-column.js'
import {rowsWithPredictions} from '../../../src/core/tasks/ner/train.js'

// CoNLL-2003's layout: token POS chunk NER (chunks IOB1: B- only between two chunks of one type)
const GOLD = [
  '-DOCSTART- -X- -X- O',
  '',
  'EU NNP I-NP I-ORG',
  'rejects VBZ I-VP O',
  'German JJ I-NP I-MISC',
  'call NN I-NP O',
  'to TO I-PP O',
  'the DT I-NP O',
  'man NN I-NP O',
  'he PRP B-NP O',
  '',
].join('\n')

const chunk = parseTagColumn('chunk', 'NP')

describe('--tag-column and --tag-types', () => {
  it('parses names, numbers and type lists; refuses the token column, other words and empty lists', () => {
    expect(parseTagColumn(undefined, undefined)).toEqual({index: 'last', types: null})
    expect(parseTagColumn('CHUNK', undefined)).toEqual({index: 2, types: null})
    expect(parseTagColumn('2', ' NP, VP ')).toEqual({index: 1, types: new Set(['NP', 'VP'])})
    expect(() => parseTagColumn('1', undefined)).toThrow(/--tag-column must be .* got "1"/)
    expect(() => parseTagColumn('chunks', undefined)).toThrow(/--tag-column must be/)
    expect(() => parseTagColumn('3.5', undefined)).toThrow(/--tag-column must be/)
    expect(() => parseTagColumn('chunk', ' , ')).toThrow(/--tag-types must be comma-separated chunk types/)
    expect(() => parseTagColumn('chunk', 'B-NP')).toThrow(/--tag-types must be/)
  })

  it('reads the chunk column; types not kept read as O, and chunk boundaries survive', () => {
    const all = parseConll(GOLD, 'g', {labeled: true, column: parseTagColumn('chunk', undefined)})
    expect(all.sentences[0].tags).toEqual(['I-NP', 'I-VP', 'I-NP', 'I-NP', 'I-PP', 'I-NP', 'I-NP', 'B-NP'])
    expect(nerLabels(all.sentences)).toEqual(['O', 'B-NP', 'I-NP', 'B-PP', 'I-PP', 'B-VP', 'I-VP'])
    const np = parseConll(GOLD, 'g', {labeled: true, column: chunk})
    expect(np.sentences[0].tags).toEqual(['I-NP', 'O', 'I-NP', 'I-NP', 'O', 'I-NP', 'I-NP', 'B-NP'])
    expect(nerLabels(np.sentences)).toEqual(['O', 'B-NP', 'I-NP'])
    expect(detectScheme(np.sentences.map((s) => s.tags))).toBe('iob1')
    // the default is the last column, as before
    expect(parseConll(GOLD, 'g', {labeled: true}).sentences[0].tags).toEqual(['I-ORG', 'O', 'I-MISC', 'O', 'O', 'O', 'O', 'O'])
  })

  it('refuses a column the lines lack and a column of non-tags, with source:line', () => {
    expect(() => parseConll(GOLD, 'g.conll', {labeled: true, column: parseTagColumn('5', undefined)})).toThrow(
      /^g\.conll:3: no column 5 \(--tag-column\): the line has 4 columns$/,
    )
    expect(() => parseConll(GOLD, 'g.conll', {labeled: true, column: parseTagColumn('pos', undefined)})).toThrow(
      /^g\.conll:3: not an IOB tag in column 2 \(pos\): "NNP"/,
    )
  })

  it('scores NP chunks on the chunk column (conlleval), both in training and in eval ner', () => {
    const gold = parseConll(GOLD, 'g', {labeled: true, column: chunk})
    // four NP chunks in gold: [EU] [German call] [the man] [he]; four predicted, three of them right
    const pred = ['I-NP', 'O', 'I-NP', 'O', 'O', 'I-NP', 'I-NP', 'B-NP']
    const s = conllScores(conllCount(rowsWithPredictions(gold, [pred])))
    expect([s.precision, s.recall]).toEqual([75, 75]) // [EU] [the man] [he] right, [German] wrong; [German call] missed
    expect(Object.keys(s.per_type)).toEqual(['NP'])
    // eval ner: span predict ner's output (the gold layout, PRED appended) against the chunk column
    const predFile = GOLD.split('\n')
      .map((l, i) => (l === '' ? l : `${l} ${i === 0 ? 'O' : pred[i - 2]}`))
      .join('\n')
    const rows = conllRows(gold, parseConll(predFile, 'p', {labeled: false}))
    expect(conllScores(conllCount(rows))).toEqual(s)
    // token GOLD PRED: GOLD must be the chunk column's (NP-only) tag, not the NER one
    const three = ['EU I-NP I-NP', 'rejects O O', 'German I-NP I-NP', 'call I-NP O', 'to O O', 'the I-NP I-NP', 'man I-NP I-NP', 'he B-NP B-NP'].join('\n')
    expect(conllScores(conllCount(conllRows(gold, parseConll(three, 'p', {labeled: false})))).precision).toBe(75)
    expect(() => conllRows(gold, parseConll(three.replace('rejects O O', 'rejects I-VP O'), 'p', {labeled: false}))).toThrow(
      /^p:2: gold column "I-VP" differs from g:4 \("O"\)/,
    )
  })
})
