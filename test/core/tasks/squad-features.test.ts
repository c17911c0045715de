import {join} from 'node:path'
import {expect, it} from 'vitest'
import {SHARED_DATA, describeShared, ifShared} from '../../helpers/shared-data.js'
import {SquadFeaturizer, answerWords, docSpans, improveAnswerSpan, isMaxContext, splitDoc, tokenizeDoc, type SquadExample} from '../../../src/core/tasks/squad/index.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {loadVocab} from '../../../src/core/text/vocab.js'

const describe = describeShared('vocab/bert-base-cased.txt', 'squad')

const DATA = SHARED_DATA
const vocab = ifShared(['vocab/bert-base-cased.txt'], () => loadVocab(join(DATA, 'vocab', 'bert-base-cased.txt')))
const tok = ifShared(['vocab/bert-base-cased.txt'], () => new WordPieceTokenizer(vocab, {lowercase: false}))

const example = (context: string, answer: string | null, question = 'Who founded Normandy?'): SquadExample => ({
  id: 'q1',
  title: 't',
  question,
  context,
  answers: answer === null ? [] : [{text: answer, start: Array.from(context.slice(0, context.indexOf(answer))).length}],
  isImpossible: answer === null,
})

describe('read_squad_examples: whitespace split and char_to_word_offset', () => {
  it('splits on space, tab, CR, LF and U+202F only, in code points', () => {
    const d = splitDoc(' 🙂a  b\u202fc\u00a0d\ne')
    expect(d.words).toEqual(['🙂a', 'b', 'c\u00a0d', 'e'])
    expect(d.charToWord).toEqual([-1, 0, 0, 0, 0, 1, 1, 2, 2, 2, 2, 3])
    expect([d.wordStart, d.wordEnd]).toEqual([[1, 5, 7, 11], [3, 6, 10, 12]])
  })

  it('finds the answer words, or null where run_squad cannot ("Could not find answer")', () => {
    const d = splitDoc('in the 10th and 11th centuries')
    expect(answerWords(d, {text: '10th and 11th', start: 7})).toEqual({first: 2, last: 4})
    expect(answerWords(d, {text: 'h and 1', start: 10})).toEqual({first: 2, last: 4})
    const nbsp = splitDoc('10\u00a0 km away')
    expect(answerWords(nbsp, {text: '10\u00a0 km', start: 0})).toBeNull() // whitespace_tokenize gives "10 km"
  })
})

describe('convert_examples_to_features', () => {
  it('sub-tokenizes the words with tok_to_orig_index and orig_to_tok_index', () => {
    const d = tokenizeDoc(splitDoc('Schrödinger (1887–1961) lived'), tok)
    expect(d.subTokens).toEqual(['Sc', '##hr', '##ö', '##ding', '##er', '(', '1887', '–', '1961', ')', 'lived'])
    expect(d.tokToOrig).toEqual([0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2])
    expect(d.origToTok).toEqual([0, 5, 10])
  })

  it('_improve_answer_span narrows "(1887–1961)" to the year asked for', () => {
    const d = tokenizeDoc(splitDoc('Schrödinger (1887–1961) lived'), tok)
    expect(improveAnswerSpan(d.subTokens, 5, 9, tok, '1887')).toEqual([6, 6])
    expect(improveAnswerSpan(d.subTokens, 5, 9, tok, 'absent')).toEqual([5, 9])
  })

  it('slides windows every doc_stride until the end is covered', () => {
    expect(docSpans(10, 4, 2)).toEqual([{start: 0, length: 4}, {start: 2, length: 4}, {start: 4, length: 4}, {start: 6, length: 4}])
    expect(docSpans(10, 4, 6)).toEqual([{start: 0, length: 4}, {start: 4, length: 4}, {start: 8, length: 2}])
    expect(docSpans(3, 4, 2)).toEqual([{start: 0, length: 3}])
    expect(docSpans(0, 4, 2)).toEqual([])
  })

  it('_check_is_max_context: "bought" has its best context in span C (the reference comment)', () => {
    // the(0) man(1) went(2) to(3) the(4) store(5) and(6) bought(7) a(8) gallon(9) of(10) milk(11)
    const spans = [{start: 0, length: 5}, {start: 3, length: 5}, {start: 6, length: 5}]
    expect([0, 1, 2].map((w) => isMaxContext(spans, w, 7))).toEqual([false, false, true])
    expect([0, 1, 2].map((w) => isMaxContext(spans, w, 4))).toEqual([false, true, false])
    expect([0, 1, 2].map((w) => isMaxContext(spans, w, 2))).toEqual([true, false, false])
  })

  it('lays out [CLS] question [SEP] window [SEP] with segment ids and the passage maps', () => {
    const fz = new SquadFeaturizer(tok)
    const [f] = fz.features(example('Rollo founded Normandy.', 'Rollo'), 7, true).features
    expect(f.tokens).toEqual(['[CLS]', 'Who', 'founded', 'Normandy', '?', '[SEP]', 'Roll', '##o', 'founded', 'Normandy', '.', '[SEP]'])
    expect(f.ids).toEqual(f.tokens.map((t) => vocab.ids.get(t)))
    expect(f.segments).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    expect(f.tokenToOrig).toEqual([-1, -1, -1, -1, -1, -1, 0, 0, 1, 2, 2, -1])
    expect(f.maxContext).toEqual([false, false, false, false, false, false, true, true, true, true, true, false])
    expect([f.exampleIndex, f.qid, f.window, f.docStart, f.docOffset, f.start, f.end]).toEqual([7, 'q1', 0, 0, 6, 6, 7])
  })

  it('cuts the question to maxQueryLen and keeps every window within maxLen', () => {
    const context = Array.from({length: 60}, (_, i) => `word${i}`).join(' ')
    const fz = new SquadFeaturizer(tok, {maxLen: 24, docStride: 5, maxQueryLen: 3})
    const {features} = fz.features(example(context, 'word42', 'Which of all these many words?'), 0, true)
    expect(features.length).toBeGreaterThan(3)
    for (const f of features) {
      expect(f.ids.length).toBeLessThanOrEqual(24)
      expect(f.tokens.slice(0, 5)).toEqual(['[CLS]', 'Which', 'of', 'all', '[SEP]'])
    }
    // windows that hold the answer label it; the others point at [CLS]
    const holding = features.filter((f) => f.start > 0)
    expect(holding.length).toBeGreaterThan(0)
    expect(holding.length).toBeLessThan(features.length)
    for (const f of holding) expect(f.tokens.slice(f.start, f.end + 1).join(' ').replaceAll(' ##', '')).toBe('word42')
    for (const f of features.filter((x) => x.start === 0)) expect(f.end).toBe(0)
  })

  it('labels unanswerable questions [CLS] everywhere, and skips answers run_squad cannot find', () => {
    const fz = new SquadFeaturizer(tok, {maxLen: 16, docStride: 3, maxQueryLen: 4})
    const r = fz.features(example('one two three four five six seven eight nine ten', null), 0, true)
    expect(r.features.length).toBeGreaterThan(1)
    expect(r.features.every((f) => f.start === 0 && f.end === 0)).toBe(true)
    expect(fz.features(example('10\u00a0 km away', '10\u00a0 km'), 0, true)).toEqual({features: [], answerNotFound: true})
    expect(fz.features(example('10\u00a0 km away', '10\u00a0 km'), 0, false).features).toHaveLength(1)
  })

  it('refuses windows with no room for the passage', () => {
    expect(() => new SquadFeaturizer(tok, {maxLen: 10, maxQueryLen: 64})).toThrow('leaves no room')
  })
})
