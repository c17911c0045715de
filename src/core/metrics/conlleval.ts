/**
 * The CoNLL chunk scorer `conlleval` (Perl, Erik Tjong Kim Sang, version 2004-01-26) as pure
 * functions: the same chunk semantics (IOB1, IOB2, IOE and the bracket tags, a chunk ends where
 * the type changes), `-X-` and empty lines as sentence boundaries, every other line a token
 * (so CoNLL-2003's `-DOCSTART-` lines count in the accuracy), and the same printed table.
 * Ported from the script's main loop, `endOfChunk` and `startOfChunk`; checked byte for byte
 * against the script's output in fixtures/ner/golden-conlleval.json (tools/make-ner-goldens.sh).
 */
import {cPercent} from './cformat.js'

const BOUNDARY = '-X-'

/** Counts over the whole input, as the script's globals hold them at the end. */
export interface ConllCounts {
  tokens: number
  correctTags: number
  foundCorrect: number
  foundGuessed: number
  correctChunk: number
  /** per chunk type: [correct, foundCorrect, foundGuessed] */
  types: Map<string, [number, number, number]>
}

/** Percentages as the script computes them (0 where a denominator is 0). */
export interface ConllScores {
  accuracy: number
  precision: number
  recall: number
  f1: number
  per_type: Record<string, {precision: number; recall: number; f1: number; found: number}>
}

/** Perl's `split(/ /, $line)`: every single space separates, trailing empty fields dropped. */
export function splitConllLine(line: string, delimiter = ' '): string[] {
  const fields = line.split(delimiter)
  while (fields.length > 0 && fields[fields.length - 1] === '') fields.pop()
  return fields
}

/** `^([^-]*)-(.*)$` then `$type ? $type : ""` (Perl: "0" is false). */
function splitTag(tag: string): [string, string] {
  const i = tag.indexOf('-')
  if (i < 0) return [tag, '']
  const type = tag.slice(i + 1)
  return [tag.slice(0, i), type === '0' ? '' : type]
}

/** endOfChunk: did a chunk end between the previous and the current word? */
export function endOfChunk(prevTag: string, tag: string, prevType: string, type: string): boolean {
  const pair = `${prevTag} ${tag}`
  if (['B B', 'B O', 'I B', 'I O', 'E E', 'E I', 'E O'].includes(pair)) return true
  if (prevTag !== 'O' && prevTag !== '.' && prevType !== type) return true
  return prevTag === ']' || prevTag === '['
}

/** startOfChunk: did a chunk start between the previous and the current word? */
export function startOfChunk(prevTag: string, tag: string, prevType: string, type: string): boolean {
  const pair = `${prevTag} ${tag}`
  if (['B B', 'I B', 'O B', 'O I', 'E E', 'E I', 'O E'].includes(pair)) return true
  if (tag !== 'O' && tag !== '.' && prevType !== type) return true
  return tag === '[' || tag === ']'
}

const bump = (m: Map<string, [number, number, number]>, type: string, slot: 0 | 1 | 2) => {
  const v = m.get(type) ?? [0, 0, 0]
  v[slot]++
  m.set(type, v)
}

/** The scorer's running state between lines. */
interface State {
  c: ConllCounts
  inCorrect: boolean
  lastCorrect: string
  lastGuessed: string
  lastCorrectType: string
  lastGuessedType: string
}

/** One line's fields (at least two: ... GOLD PRED); an empty list or a `-X-` first field is a boundary. */
function step(s: State, features: string[]): void {
  const boundary = features.length === 0 || features[0] === BOUNDARY
  const fs = boundary ? [BOUNDARY, 'O', 'O'] : features
  let [guessed, guessedType] = splitTag(fs[fs.length - 1])
  const [correct, correctType] = splitTag(fs[fs.length - 2])
  if (boundary) guessed = 'O'
  if (boundary) guessedType = ''
  const endC = endOfChunk(s.lastCorrect, correct, s.lastCorrectType, correctType)
  const endG = endOfChunk(s.lastGuessed, guessed, s.lastGuessedType, guessedType)
  if (s.inCorrect) {
    if (endC && endG && s.lastGuessedType === s.lastCorrectType) {
      s.inCorrect = false
      s.c.correctChunk++
      bump(s.c.types, s.lastCorrectType, 0)
    } else if (endC !== endG || guessedType !== correctType) s.inCorrect = false
  }
  const startC = startOfChunk(s.lastCorrect, correct, s.lastCorrectType, correctType)
  const startG = startOfChunk(s.lastGuessed, guessed, s.lastGuessedType, guessedType)
  if (startC && startG && guessedType === correctType) s.inCorrect = true
  if (startC) {
    s.c.foundCorrect++
    bump(s.c.types, correctType, 1)
  }
  if (startG) {
    s.c.foundGuessed++
    bump(s.c.types, guessedType, 2)
  }
  if (!boundary) {
    if (correct === guessed && guessedType === correctType) s.c.correctTags++
    s.c.tokens++
  }
  ;[s.lastGuessed, s.lastCorrect, s.lastGuessedType, s.lastCorrectType] = [guessed, correct, guessedType, correctType]
}

/** Thrown for the script's own input errors (it prints a message and exits 1). */
export class ConllFormatError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message)
  }
}

/**
 * The main loop over lines (each already split into fields). Every line must have as many
 * fields as the first non-empty one, and at least two.
 */
export function conllCount(rows: Iterable<string[]>): ConllCounts {
  const s: State = {
    c: {tokens: 0, correctTags: 0, foundCorrect: 0, foundGuessed: 0, correctChunk: 0, types: new Map()},
    inCorrect: false,
    lastCorrect: 'O',
    lastGuessed: 'O',
    lastCorrectType: '',
    lastGuessedType: '',
  }
  let nFeatures = -1
  let lineNo = 0
  for (const features of rows) {
    lineNo++
    if (nFeatures < 0)
      nFeatures = features.length - 1 // $#features: an empty first line sets nothing
    else if (nFeatures !== features.length - 1 && features.length !== 0)
      throw new ConllFormatError(lineNo, `unexpected number of features: ${features.length} (${nFeatures + 1})`)
    if (features.length > 0 && features[0] !== BOUNDARY && features.length < 2)
      throw new ConllFormatError(lineNo, `unexpected number of features in line ${features.join(' ')}`)
    step(s, features)
  }
  if (s.inCorrect) {
    s.c.correctChunk++
    bump(s.c.types, s.lastCorrectType, 0)
  }
  return s.c
}

const ratio = (a: number, b: number) => (b > 0 ? (100 * a) / b : 0)
const fb1 = (p: number, r: number) => (p + r > 0 ? (2 * p * r) / (p + r) : 0)

/** The script's sorted type list: Perl `sort` of both key lists, with its dedup quirk ("" repeats). */
export function sortedTypes(c: ConllCounts): string[] {
  const keys: string[] = []
  for (const [t, v] of c.types) {
    if (v[1] > 0) keys.push(t)
    if (v[2] > 0) keys.push(t)
  }
  keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const out: string[] = []
  let last: string | undefined
  for (const k of keys) {
    if (!last || last === '0' || last !== k) out.push(k)
    last = k
  }
  return out
}

/** Overall and per-type percentages exactly as printed (before rounding). */
export function conllScores(c: ConllCounts): ConllScores {
  const precision = ratio(c.correctChunk, c.foundGuessed)
  const recall = ratio(c.correctChunk, c.foundCorrect)
  const perType: ConllScores['per_type'] = {}
  for (const t of sortedTypes(c)) {
    const [ok, gold, found] = c.types.get(t) ?? [0, 0, 0]
    const p = ratio(ok, found)
    const r = ratio(ok, gold)
    perType[t] = {precision: p, recall: r, f1: fb1(p, r), found}
  }
  return {accuracy: ratio(c.correctTags, c.tokens), precision, recall, f1: fb1(precision, recall), per_type: perType}
}

/** The script's stdout (no -l): the summary lines, then one line per type (`%17s` pads bytes: Perl sees bytes). */
export function conllTable(c: ConllCounts): string {
  const s = conllScores(c)
  const out = [`processed ${c.tokens} tokens with ${c.foundCorrect} phrases; found: ${c.foundGuessed} phrases; correct: ${c.correctChunk}.\n`]
  if (c.tokens > 0)
    out.push(`accuracy: ${cPercent(s.accuracy)}%; precision: ${cPercent(s.precision)}%; recall: ${cPercent(s.recall)}%; FB1: ${cPercent(s.f1)}\n`)
  for (const t of sortedTypes(c)) {
    const v = s.per_type[t]
    out.push(
      `${' '.repeat(Math.max(0, 17 - Buffer.byteLength(t)))}${t}: precision: ${cPercent(v.precision)}%; recall: ${cPercent(v.recall)}%; FB1: ${cPercent(v.f1)}  ${v.found}\n`,
    )
  }
  return out.join('')
}
