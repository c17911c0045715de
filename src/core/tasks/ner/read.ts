/**
 * CoNLL-2003 files as distributed: `token POS chunk TAG` per line (any number of columns, the
 * tag last), `-DOCSTART-` lines between documents, blank lines between sentences. Tags are IOB1
 * (`I-` opens a chunk; `B-` only between two chunks of one type) or IOB2 (every chunk opens
 * with `B-`); the scheme is detected unless given. span trains on IOB2 tags and writes
 * predictions back in the file's scheme.
 */
import {errorAt, errorIn} from '../../util/errors.js'
import {readTaskText} from '../common/records.js'
import {LAST_COLUMN, type TagColumn, describeColumn, keptTag, tagIndex} from './tag-column.js'

export type TagScheme = 'iob1' | 'iob2'

/** One line of the file, as it was, with its fields. */
export interface ConllLine {
  text: string
  line: number
  kind: 'token' | 'docstart' | 'blank'
  fields: string[]
}

export interface ConllSentence {
  /** indices into the file's lines */
  lines: number[]
  words: string[]
  /** tags as in the file, or null when the file has only tokens */
  tags: string[] | null
}

export interface ConllFile {
  source: string
  lines: ConllLine[]
  sentences: ConllSentence[]
  /** fields per token line */
  width: number
  labeled: boolean
}

const TAG = /^(O|[BI]-\S+)$/

/** Splits a file into lines and sentences; every token line must have the first one's width. */
export function parseConll(text: string, source: string, opts: ConllReadOptions): ConllFile {
  const column = opts.column ?? LAST_COLUMN
  const raw = text.split('\n')
  if (raw[raw.length - 1] === '') raw.pop()
  const lines: ConllLine[] = []
  const sentences: ConllSentence[] = []
  let width = -1
  let cur: number[] = []
  const close = () => {
    if (cur.length > 0) sentences.push(sentenceOf(lines, cur, opts.labeled ? column : null))
    cur = []
  }
  raw.forEach((r, i) => {
    const t = r.endsWith('\r') ? r.slice(0, -1) : r
    const fields = t.trim() === '' ? [] : t.trim().split(/\s+/)
    const kind = fields.length === 0 ? 'blank' : fields[0] === '-DOCSTART-' ? 'docstart' : 'token'
    lines.push({text: t, line: i + 1, kind, fields})
    if (kind !== 'token') return close()
    if (width < 0) width = fields.length
    if (fields.length !== width) throw errorAt(source, i + 1, `expected ${width} columns as on the first token line, got ${fields.length}`)
    if (opts.labeled) checkTag(fields, column, source, i + 1)
    cur.push(lines.length - 1)
  })
  close()
  if (sentences.length === 0) throw errorIn(source, `no token lines (not a CoNLL file?)`)
  return {source, lines, sentences, width, labeled: opts.labeled}
}

/** A labelled token line has an IOB tag in the tag column (--tag-column; the last by default). */
function checkTag(fields: string[], column: TagColumn, source: string, line: number): void {
  const at = tagIndex(column, fields.length)
  if (at < 0)
    throw errorAt(
      source,
      line,
      column.index === 'last'
        ? 'expected a tag in the last column (token ... TAG)'
        : `no ${describeColumn(column)} (--tag-column): the line has ${fields.length} columns`,
    )
  const where = column.index === 'last' ? '' : ` in ${describeColumn(column)}`
  if (!TAG.test(fields[at])) throw errorAt(source, line, `not an IOB tag${where}: ${JSON.stringify(fields[at])} (expected O, B-TYPE or I-TYPE)`)
}

function sentenceOf(lines: ConllLine[], idx: number[], column: TagColumn | null): ConllSentence {
  const words = idx.map((i) => lines[i].fields[0])
  const tags = column ? idx.map((i) => keptTag(column, lines[i].fields[tagIndex(column, lines[i].fields.length)])) : null
  return {lines: idx, words, tags}
}

/**
 * conlleval's rows of a labelled file, `token GOLD PRED` per line: GOLD the tag read from the tag
 * column (a -DOCSTART- line: O, as conlleval counts it), PRED from `pred` (line index → tag; O when
 * absent); blank lines stay empty.
 */
export function goldRows(file: ConllFile, pred: (line: number) => string | undefined): string[][] {
  const gold = new Map<number, string>()
  for (const s of file.sentences) s.lines.forEach((li, w) => gold.set(li, s.tags?.[w] ?? 'O'))
  return file.lines.map((l, i) => (l.kind === 'blank' ? [] : [l.fields[0], gold.get(i) ?? 'O', pred(i) ?? 'O']))
}

/** `labeled`: token lines carry tags, read from `column` (default: the last, every type). */
export interface ConllReadOptions {
  labeled: boolean
  column?: TagColumn
}

/** Reads a CoNLL file from disk (see parseConll). */
export function readConllFile(path: string, opts: ConllReadOptions): ConllFile {
  return parseConll(readTaskText(path), path, opts)
}

const typeOf = (tag: string) => (tag === 'O' ? null : tag.slice(2))

/** IOB1 when some `I-` opens a chunk (after O, at a sentence start or after another type), else IOB2. */
export function detectScheme(sentences: (string[] | null)[]): TagScheme {
  for (const tags of sentences) {
    if (!tags) continue
    for (let i = 0; i < tags.length; i++) if (tags[i].startsWith('I-') && (i === 0 || typeOf(tags[i - 1]) !== typeOf(tags[i]))) return 'iob1'
  }
  return 'iob2'
}

/** Tags of one sentence in IOB2 (from either scheme: an `I-` that opens a chunk becomes `B-`). */
export function toIob2(tags: string[]): string[] {
  return tags.map((t, i) => (t.startsWith('I-') && (i === 0 || typeOf(tags[i - 1]) !== typeOf(t)) ? `B-${t.slice(2)}` : t))
}

/** IOB2 tags in IOB1: `B-` stays only where the previous tag has the same type. */
export function fromIob2(tags: string[]): string[] {
  return tags.map((t, i) => (t.startsWith('B-') && !(i > 0 && typeOf(tags[i - 1]) === typeOf(t)) ? `I-${t.slice(2)}` : t))
}

/** Tags in the given scheme from IOB2 ones (repairing an `I-` that opens a chunk). */
export function inScheme(iob2: string[], scheme: TagScheme): string[] {
  const fixed = toIob2(iob2)
  return scheme === 'iob2' ? fixed : fromIob2(fixed)
}

/** The IOB2 label list of training data: O first, then B-/I- of each type, types sorted. */
/** Every tag type of a dev file must be one the training file has: the first other is an error at its line. */
export function checkTagTypes(f: ConllFile, labels: readonly string[], trainSource: string): void {
  for (const s of f.sentences)
    (s.tags ?? []).forEach((t, w) => {
      if (t !== 'O' && !labels.includes(`I-${t.slice(2)}`))
        throw errorAt(f.source, f.lines[s.lines[w]].line, `tag type ${t.slice(2)} does not occur in ${trainSource}`)
    })
}

export function nerLabels(sentences: ConllSentence[]): string[] {
  const types = new Set<string>()
  for (const s of sentences) for (const t of s.tags ?? []) if (t !== 'O') types.add(t.slice(2))
  return ['O', ...[...types].sort().flatMap((t) => [`B-${t}`, `I-${t}`])]
}
