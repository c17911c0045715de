/**
 * CoNLL-2012 coreference files, read as the official scorer reads them and written back with
 * every column but the coreference one kept (docs/formats.md, "CoNLL-2012 coreference").
 *
 * Reading follows conll/reference-coreference-scorers v8.01 @f49f3f8a, lib/CorScorer.pm
 * (GetCoreference, GetFileNames): a document starts at `^#\s*begin document (.*)$` (the rest of
 * the line, e.g. `(105_persuasion_brat); part 0`, is its key) and ends at the first line holding
 * `#\s*end document`; blank (whitespace-only) lines are skipped (they end sentences); every other
 * line is one word, split on tabs only, its coreference cell the last non-empty field (Perl's
 * split drops trailing empty fields, so LitBank's empty 13th column reads column 12, `_`). Cells
 * are read as conll-cell.ts says; each cluster id keeps its own stack of openings. Clusters are
 * numbered in the order their ids first appear; each cluster's mentions are in the order they
 * were completed (their closing word), as the scorer holds them.
 *
 * Two layouts: `conll13` (CoNLL-2012, at least 5 columns: word in column 4, speaker in 10 where
 * there are 10, the same column count on every line of a sentence; LitBank has 13, OntoNotes 12+) and `ontogum3`
 * (`index<TAB>word<TAB>coref`, no sentence breaks). OntoGUM's headers carry no name
 * (`# begin document `); the file's name without `.conll` is taken as its name and key, and
 * writeConll puts it in the header so several documents can share one stream.
 * Lines outside documents are ignored, as the scorer ignores them; `\r` before `\n` is dropped.
 */
import {basename} from 'node:path'
import {errorAt, errorIn} from '../../util/errors.js'
import {readTaskText} from '../common/records.js'
import {encodeCells, parseCell} from './conll-cell.js'
import {conllInputs} from './conll-inputs.js'

export type ConllLayout = 'conll13' | 'ontogum3'
export type Mention = [number, number]

export interface ConllDoc {
  /** the key the official scorer uses: the header after `begin document `, or the file name for an empty one */
  key: string
  /** `105_persuasion_brat` from `(105_persuasion_brat); part 0`, else the whole key */
  name: string
  /** `0` from `...; part 0`, else '' */
  part: string
  /** the file it came from (`-` for stdin) */
  source: string
  /** 1-based line of the header in source */
  line: number
  /** every word, in document order */
  words: string[]
  /** sentence index of each word (ontogum3: all 0) */
  sentence: number[]
  /** per word, when the layout has a speaker column (10) with content (not `_`, `-`) somewhere */
  speaker?: (string | null)[]
  /** OntoNotes genre (`bc/cctv/...` → `bc`), GUM's file-name genre (`GUM_news_x` → `news`), else undefined */
  genre?: string
  /** gold mentions [firstWord, lastWord] (inclusive), by cluster, as the scorer holds them */
  clusters: Mention[][]
  layout: ConllLayout
  /** the document's lines (no `\n`), header to `#end document` inclusive, as read */
  lines: string[]
  /** index in `lines` of each word's line */
  tokenLines: number[]
  /** what a word with no mention had in its last column ('' in LitBank, `_` in OntoGUM) */
  noMention: string
}

const BEGIN = /^#\s*begin document (.*)$/
const END = /#\s*end document/
const BLANK = /^[ \t\n\r\f\v]*$/

/** The scorer's reading of one document's brackets, word by word. */
class Brackets {
  readonly clusters: Mention[][] = []
  private readonly index = new Map<string, number>()
  private readonly open: {word: number; line: number; id: string}[][] = []

  constructor(private readonly source: string) {}

  private id(key: string): number {
    let i = this.index.get(key)
    if (i === undefined) {
      i = this.index.size
      this.index.set(key, i)
      this.clusters.push([])
      this.open.push([])
    }
    return i
  }

  /** A word's cell (CorScorer.pm order: one-word mentions, openings, closings). */
  add(cell: string, word: number, line: number): boolean {
    const {singles, opens, closes} = parseCell(cell)
    for (const s of singles) this.clusters[this.id(s)]?.push([word, word])
    for (const s of opens) this.open[this.id(s)]?.push({word, line, id: s})
    for (const s of closes) {
      const i = this.id(s)
      const start = this.open[i]?.pop()
      if (start === undefined) throw errorAt(this.source, line, `a mention of cluster ${s} closes here ('${cell}') but none of cluster ${s} is open`)
      this.clusters[i]?.push([start.word, word])
    }
    return singles.length + opens.length + closes.length > 0
  }

  /** Every mention closed by `#end document` on line `end`. */
  finish(end: number): void {
    const left = this.open.flat().sort((a, b) => a.line - b.line)[0]
    if (left === undefined) return
    throw errorAt(this.source, left.line, `a mention of cluster ${left.id} opens here and is still open at '#end document' (line ${end})`)
  }
}

/** Perl's split(/\t/, $line)[-1]: the last field that is not empty (trailing empty fields dropped). */
function scorerCell(fields: string[]): string {
  for (let i = fields.length - 1; i >= 0; i--) if (fields[i] !== '') return fields[i] as string
  return ''
}

function layoutOf(fields: string[], source: string, line: number): ConllLayout {
  if (fields.length === 3) return 'ontogum3'
  if (fields.length >= 5) return 'conll13'
  throw errorAt(
    source,
    line,
    `${fields.length} tab-separated columns; expected 3 (OntoGUM: index, word, coreference) or at least 5 (CoNLL-2012: document, part, index, word, ..., coreference)`,
  )
}

function nameParts(key: string, source: string, layout: ConllLayout): {key: string; name: string; part: string; genre?: string} {
  const m = /^\((.*)\); part (.*)$/.exec(key)
  const name = m ? (m[1] as string) : key === '' && source !== '-' ? basename(source).replace(/\.conll$/, '') : key
  const genre = layout === 'ontogum3' ? /^GUM_([a-z]+)_/.exec(name)?.[1] : /^([a-z]{2})\//.exec(name)?.[1]
  return {key: key === '' ? name : key, name, part: m ? (m[2] as string) : '', ...(genre === undefined ? {} : {genre})}
}

interface Body {
  words: string[]
  sentence: number[]
  speakers: (string | null)[]
  tokenLines: number[]
  layout: ConllLayout | null
  noMention: string | null
}

/** One word line: layout and column count checked, word, speaker and brackets taken. */
function addWord(b: Body, brackets: Brackets, fields: string[], at: {line: number; index: number; sent: number; width: number}, source: string): number {
  b.layout ??= layoutOf(fields, source, at.line)
  if (b.layout === 'conll13' && at.width < 0 && layoutOf(fields, source, at.line) !== 'conll13')
    throw errorAt(source, at.line, `${fields.length} tab-separated columns where the document's first line has at least 5`)
  const width = b.layout === 'ontogum3' ? 3 : at.width < 0 ? fields.length : at.width
  if (fields.length !== width)
    throw errorAt(source, at.line, `${fields.length} tab-separated columns where this ${b.layout === 'ontogum3' ? 'document' : 'sentence'} has ${width}`)
  const w = b.words.length
  b.words.push(fields[b.layout === 'ontogum3' ? 1 : 3] as string)
  b.sentence.push(at.sent)
  const speaker = b.layout === 'conll13' && fields.length > 10 ? (fields[9] as string) : '_'
  b.speakers.push(speaker === '_' || speaker === '-' || speaker === '' ? null : speaker)
  b.tokenLines.push(at.index)
  if (!brackets.add(scorerCell(fields), w, at.line)) b.noMention ??= fields[fields.length - 1] as string
  return width
}

/** The document whose header is lines[start]; returns it and the index after its end line. */
function parseDoc(lines: string[], start: number, key: string, source: string): [ConllDoc, number] {
  const b: Body = {words: [], sentence: [], speakers: [], tokenLines: [], layout: null, noMention: null}
  const brackets = new Brackets(source)
  const at = {line: 0, index: 0, sent: 0, width: -1}
  let inSentence = false
  for (let j = start + 1; j < lines.length; j++) {
    const l = lines[j] as string
    if (BLANK.test(l)) {
      if (inSentence) [at.sent, at.width, inSentence] = [at.sent + 1, -1, false]
      continue
    }
    if (END.test(l)) {
      brackets.finish(j + 1)
      const doc = makeDoc(b, brackets, lines.slice(start, j + 1), {key, source, line: start + 1})
      return [doc, j + 1]
    }
    if (BEGIN.test(l)) throw errorAt(source, start + 1, `document '${key}' has no '#end document' before the next '#begin document' (line ${j + 1})`)
    Object.assign(at, {line: j + 1, index: j - start})
    at.width = addWord(b, brackets, l.split('\t'), at, source)
    inSentence = true
  }
  throw errorAt(source, start + 1, `document '${key}' has no '#end document' line`)
}

function makeDoc(b: Body, brackets: Brackets, lines: string[], at: {key: string; source: string; line: number}): ConllDoc {
  const layout = b.layout ?? 'conll13'
  const ids = nameParts(at.key, at.source, layout)
  return {
    ...ids,
    source: at.source,
    line: at.line,
    words: b.words,
    sentence: b.sentence,
    ...(b.speakers.some((s) => s !== null) ? {speaker: b.speakers} : {}),
    clusters: brackets.clusters,
    layout,
    lines,
    tokenLines: b.tokenLines,
    noMention: b.noMention ?? '_',
  }
}

/** Every document of one CoNLL-2012 text (at least one); `source` names it in errors. */
export function parseConll(text: string, source: string): ConllDoc[] {
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
  if (lines.at(-1) === '') lines.pop()
  const docs: ConllDoc[] = []
  for (let i = 0; i < lines.length;) {
    const m = BEGIN.exec(lines[i] as string)
    if (m === null) {
      i++
      continue
    }
    const [doc, next] = parseDoc(lines, i, m[1] as string, source)
    docs.push(doc)
    i = next
  }
  if (docs.length === 0) throw errorIn(source, "no '#begin document' line: not CoNLL-2012 coreference data")
  return docs
}

/**
 * The documents of an input, synchronously: `-` (stdin), a `.conll` file, a folder of them, a
 * LitBank `.ids` list, or a folder with `split` (GUM: train/dev/test from splits.md; LitBank:
 * `K/NAME`, e.g. `0/dev`); see conll-inputs.ts. Errors are SpanErrors naming `source:line`.
 */
export function readConll(path: string, opts: {split?: string} = {}): ConllDoc[] {
  return conllInputs(path, opts.split).flatMap((f) => parseConll(readTaskText(f), f))
}

/**
 * The document as read, with its last column replaced by `predicted` (ids = cluster indices;
 * a word in no mention gets what the input had there), the header given the document's name
 * when it had none (OntoGUM), `\n` after every line. Both layouts.
 */
export function writeConll(doc: ConllDoc, predicted: readonly (readonly [number, number])[][]): string {
  const cells = encodeCells(doc.words.length, predicted, doc.layout === 'ontogum3' ? '' : '|', doc.noMention)
  const out = doc.lines.slice()
  const header = BEGIN.exec(out[0] as string)
  if (header && header[1] === '' && doc.name !== '') out[0] += doc.name
  doc.tokenLines.forEach((li, w) => {
    const fields = (out[li] as string).split('\t')
    fields[fields.length - 1] = cells[w] as string
    out[li] = fields.join('\t')
  })
  return out.join('\n') + '\n'
}
