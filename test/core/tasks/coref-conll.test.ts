// The CoNLL-2012 coreference reader and writer: both layouts, the scorer's bracket rules, inputs and splits, bad input.
import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {encodeCells, parseCell} from '../../../src/core/tasks/coref/conll-cell.js'
import {parseConll, readConll, writeConll} from '../../../src/core/tasks/coref/conll.js'
import {describeShared, sharedPath} from '../../helpers/shared-data.js'

const row = (doc: string, i: number, word: string, coref: string, speaker = '_') =>
  [doc, '0', String(i), word, '_', '_', '_', '_', '_', speaker, '_', '_', coref].join('\t')

// LitBank's layout: 13 columns, an empty last column for no mention, a blank line after each sentence
const LIT = [
  '#begin document (tale_brat); part 0',
  row('tale_brat', 0, 'Sir', '(0'),
  row('tale_brat', 1, 'Walter', '0)'),
  row('tale_brat', 2, 'saw', ''),
  row('tale_brat', 3, 'his', '(1|(0)'),
  row('tale_brat', 4, 'dog', '1)'),
  '',
  row('tale_brat', 0, 'It', '(1)'),
  row('tale_brat', 1, 'ran', ''),
  '',
  '#end document',
].join('\n')

// OntoGUM's layout: no name, index/word/coref, no sentence breaks, no separators
const GUM = ['# begin document ', '0\tNASA\t(1)', '1\tsaw\t_', '2\tits\t(7(1)', '3\tmoon\t7)', '4\tit\t(1)', '# end document', ''].join('\n')

describe('CoNLL-2012 reader', () => {
  it('reads LitBank 13-column documents with empty last columns', () => {
    const [d] = parseConll(LIT + '\n', 'lit.conll')
    expect(d).toMatchObject({key: '(tale_brat); part 0', name: 'tale_brat', part: '0', layout: 'conll13', noMention: '', line: 1})
    expect(d?.words).toEqual(['Sir', 'Walter', 'saw', 'his', 'dog', 'It', 'ran'])
    expect(d?.sentence).toEqual([0, 0, 0, 0, 0, 1, 1])
    expect(d?.clusters).toEqual([
      [
        [0, 1],
        [3, 3],
      ],
      [
        [3, 4],
        [5, 5],
      ],
    ])
    expect(d?.speaker).toBeUndefined()
    expect(d?.genre).toBeUndefined()
  })

  it('reads OntoGUM 3-column documents, naming them after the file', () => {
    const [d] = parseConll(GUM, '/x/GUM_news_moon.conll')
    expect(d).toMatchObject({key: 'GUM_news_moon', name: 'GUM_news_moon', part: '', genre: 'news', layout: 'ontogum3', noMention: '_'})
    expect(d?.sentence).toEqual([0, 0, 0, 0, 0])
    expect(d?.clusters).toEqual([
      [
        [0, 0],
        [2, 2],
        [4, 4],
      ],
      [[2, 3]],
    ])
  })

  it('takes speakers and OntoNotes genres where the file has them', () => {
    const text = [
      '#begin document (bc/cctv/00/cctv_0000); part 000',
      row('bc', 0, 'Hi', '(0)', 'Ann'),
      row('bc', 1, 'you', '(1)', 'Ann'),
      '',
      row('bc', 0, 'Yes', '-', 'Bob'),
      '#end document',
    ].join('\n')
    const [d] = parseConll(text, 'on.conll')
    expect(d?.genre).toBe('bc')
    expect(d?.speaker).toEqual(['Ann', 'Ann', 'Bob'])
    expect(d?.noMention).toBe('-')
  })

  it('reads cells exactly as CorScorer.pm does', () => {
    expect(parseCell('(7(3)')).toEqual({singles: ['3'], opens: ['7'], closes: []})
    expect(parseCell('16)(3)')).toEqual({singles: ['3'], opens: [], closes: ['16']})
    expect(parseCell('(2|(1)')).toEqual({singles: ['1'], opens: ['2'], closes: []})
    expect(parseCell('(1(2)3)')).toEqual({singles: ['2', '13'], opens: [], closes: []}) // removing (2) leaves (13)
    expect(parseCell('(4+1)|5)')).toEqual({singles: [], opens: [], closes: ['5']})
    expect(parseCell('_')).toEqual({singles: [], opens: [], closes: []})
    expect(parseCell('-')).toEqual({singles: [], opens: [], closes: []})
  })

  it('reads an empty last column as the column before it, as Perl split does (LitBank: `_`)', () => {
    // the official scorer reads 3 mentions here: the word (2) is taken as the coreference cell
    const text = ['#begin document d', '0\tA\t(1)', '1\t(2)\t', '2\tB\t(1)', '#end document'].join('\n')
    expect(parseConll(text, 's')[0]?.clusters).toEqual([
      [
        [0, 0],
        [2, 2],
      ],
      [[1, 1]],
    ])
  })

  it('keeps one stack per cluster id and treats ids as strings', () => {
    const text = ['#begin document d', '0\ta\t(1|(01', '1\tb\t(1', '2\tc\t1)', '3\td\t1)|01)', '#end document'].join('\n')
    expect(parseConll(text, 's')[0]?.clusters).toEqual([
      [
        [1, 2],
        [0, 3],
      ],
      [[0, 3]],
    ])
  })

  it('writes cells that read back the same, without separators too', () => {
    const clusters: [number, number][][] = [
      [[0, 2]],
      [[2, 4]],
      [
        [2, 2],
        [1, 2],
      ],
    ]
    expect(encodeCells(5, clusters, '', '_')).toEqual(['(0', '(2', '2)0)(1(2)', '_', '1)'])
    const [d] = parseConll(GUM, 'GUM_news_moon.conll')
    const back = parseConll(writeConll(d!, clusters), 'x')[0]!
    expect(back.key).toBe('GUM_news_moon')
    expect(back.clusters.flat().sort()).toEqual(clusters.flat().sort())
  })

  it('writes every other column and line back as read', () => {
    const [d] = parseConll(LIT, 'lit.conll')
    expect(writeConll(d!, d!.clusters)).toBe(LIT + '\n')
    const none = writeConll(d!, []).split('\n')
    expect(none.filter((l) => l.includes('\t')).every((l) => l.endsWith('\t'))).toBe(true)
    expect(writeConll(parseConll(GUM, 'GUM_news_moon.conll')[0]!, [])).toBe(
      GUM.replace(/\t[^\t\n]*\n/g, '\t_\n').replace('document \n', 'document GUM_news_moon\n'),
    )
  })
})

describe('CoNLL-2012 bad input', () => {
  const bad = (text: string) => () => parseConll(text, 'f.conll')
  it('names the line of a closing bracket with no opening', () => {
    expect(bad('#begin document d\n0\ta\t_\n1\tb\t3)\n#end document\n')).toThrow(/^f\.conll:3: a mention of cluster 3 closes here/)
  })
  it('names the line of a mention left open', () => {
    expect(bad('#begin document d\n0\ta\t(3\n1\tb\t_\n#end document\n')).toThrow(
      /^f\.conll:2: a mention of cluster 3 opens here and is still open at '#end document' \(line 4\)/,
    )
  })
  it('names a line with the wrong column count', () => {
    expect(bad(LIT.replace('saw\t_\t_\t_\t_\t_\t_\t_\t_\t', 'saw\t_\t_\t_\t_\t_\t_\t_\t_'))).toThrow(
      /^f\.conll:4: 12 tab-separated columns where this sentence has 13/,
    )
    expect(bad('#begin document d\n0\ta\t_\n1\tb\n#end document\n')).toThrow(/^f\.conll:3: 2 tab-separated columns where this document has 3/)
    expect(bad('#begin document d\n0\ta b\t_\t_\n#end document\n')).toThrow(/^f\.conll:2: 4 tab-separated columns; expected 3/)
  })
  it('names a document without #end document', () => {
    expect(bad('#begin document d\n0\ta\t_\n')).toThrow(/^f\.conll:1: document 'd' has no '#end document' line/)
    expect(bad('#begin document d\n0\ta\t_\n#begin document e\n0\ta\t_\n#end document\n')).toThrow(/^f\.conll:1: document 'd' has no '#end document' before/)
  })
  it('refuses a file without documents', () => {
    expect(bad('0\ta\t_\n')).toThrow(/^f\.conll: no '#begin document' line/)
  })
})

describe('CoNLL-2012 inputs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'coref-in-'))
  const gum = join(dir, 'gum')
  mkdirSync(join(gum, 'conll'), {recursive: true})
  for (const n of ['GUM_news_a', 'GUM_news_b', 'GUM_bio_c']) writeFileSync(join(gum, 'conll', `${n}.conll`), GUM)
  writeFileSync(join(gum, 'splits.md'), '# Splits\n\n## dev\n\n  * GUM_news_b\n  * GUM_reddit_gone\n\n## test\n\n  * GUM_bio_c\n')
  const lit = join(dir, 'lit')
  mkdirSync(join(lit, 'conll'), {recursive: true})
  mkdirSync(join(lit, 'tenfold_splits', '0'), {recursive: true})
  writeFileSync(join(lit, 'conll', 'tale_brat.conll'), LIT)
  writeFileSync(join(lit, 'tenfold_splits', '0', 'dev.ids'), 'tale_brat.tsv\n')

  it('reads a folder, a GUM split and a LitBank id list', () => {
    expect(readConll(join(gum, 'conll')).map((d) => d.key)).toEqual(['GUM_bio_c', 'GUM_news_a', 'GUM_news_b'])
    expect(readConll(join(gum, 'conll'), {split: 'dev'}).map((d) => d.key)).toEqual(['GUM_news_b'])
    expect(readConll(join(gum, 'conll'), {split: 'train'}).map((d) => d.key)).toEqual(['GUM_news_a'])
    expect(readConll(join(lit, 'tenfold_splits', '0', 'dev.ids')).map((d) => d.key)).toEqual(['(tale_brat); part 0'])
    expect(readConll(join(lit, 'conll'), {split: '0/dev'}).map((d) => d.name)).toEqual(['tale_brat'])
  })
  it('says what is wrong with a split', () => {
    expect(() => readConll(join(gum, 'conll'), {split: 'nope'})).toThrow(/no split 'nope' \(it has train, dev, test\)/)
    expect(() => readConll(join(lit, 'conll'), {split: 'dev'})).toThrow(/LitBank splits are FOLD\/NAME/)
    expect(() => readConll(join(gum, 'conll', 'GUM_news_a.conll'), {split: 'dev'})).toThrow(/a split selects files of a folder/)
    expect(() => readConll(join(dir, 'absent.conll'))).toThrow(/absent\.conll: file not found/)
  })
})

describeShared('coref/litbank/conll', 'coref/ontogum/conll')('CoNLL-2012 on the shared data', () => {
  it('counts what data/SOURCES.md counts', () => {
    const count = (docs: ReturnType<typeof readConll>) => [
      docs.length,
      docs.reduce((n, d) => n + d.words.length, 0),
      docs.reduce((n, d) => n + d.clusters.flat().length, 0),
      docs.reduce((n, d) => n + d.clusters.length, 0),
    ]
    expect(count(readConll(sharedPath('coref/litbank/conll')))).toEqual([100, 210532, 29103, 7927])
    expect(count(readConll(sharedPath('coref/ontogum/conll')))).toEqual([237, 233926, 30719, 7026])
    expect(count(readConll(sharedPath('coref/litbank/tenfold_splits/0/dev.ids')))[2]).toBe(3053)
    expect(count(readConll(sharedPath('coref/ontogum/conll'), {split: 'dev'}))).toEqual([30, 28119, 3818, 857])
    expect(count(readConll(sharedPath('coref/ontogum/conll'), {split: 'train'}))).toEqual([177, 177410, 23320, 5311])
    expect(count(readConll(sharedPath('coref/ontogum/conll'), {split: 'test'}))).toEqual([30, 28397, 3581, 858])
  })
})
