import {CJK, NONBREAK, PRE_PUNCT, PRE_WHITESPACE, REMOVED, REORDER, SPACE, SURVIVORS, UNCASED_DELTA, UNCASED_DROP, UNCASED_MULTI} from './tables/chars.js'
import {maxOf} from '../util/arrays.js'

/**
 * What BERT's BasicTokenizer does with one input code point, for the scanner in basic.ts. The
 * tables in tables/chars.ts come from the reference (HF BertNormalizer + BertPreTokenizer), so
 * this file only combines them; Node's own Unicode data is never consulted.
 */
export const enum Kind {
  Word = 0, // part of a word; its normalised code unit is map[c]
  Space = 1, // ends a word
  Punct = 2, // a word of its own: map[c]
  Removed = 3, // dropped (clean_text), does not end a word
  Cjk = 4, // a word of its own (handle_chinese_chars): map[c]
  Complex = 5, // normalises to several code points or an astral one: see CharTable.complex
}

/** Dense tables over the BMP for one mode (cased or uncased), plus a cache for astral code points. */
export interface CharTable {
  lowercase: boolean
  kind: Uint8Array // 65536 entries; high surrogates are Complex, lone low ones Removed
  map: Uint16Array // normalised code unit for Word / Punct / Cjk
  complex: Map<number, string> // normalised output (spaces included) of Complex code points
  /** Uncased: code points whose NFD holds a mark that may change places (see reorderUncased). */
  reorder: Map<number, string>
}

/** Is c inside one of the closed ranges [a0, b0, a1, b1, ...] (sorted)? Binary search. */
export function inRanges(r: readonly number[], c: number): boolean {
  let lo = 0
  let hi = r.length / 2 - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (c < r[2 * mid]) hi = mid - 1
    else if (c > r[2 * mid + 1]) lo = mid + 1
    else return true
  }
  return false
}

export const enum Pre {
  Other = 0,
  Whitespace = 1,
  Punct = 2,
}

/** The most UTF-16 code units one input code unit can normalise to (words only, spaces not kept). */
export const MAX_EXPANSION = maxOf(UNCASED_MULTI.filter((x): x is string => typeof x === 'string').map((x) => x.length), 3)

const preWs = new Set(PRE_WHITESPACE)
const spaceSet = new Set(SPACE)

/** BertPreTokenizer's class of a code point of the normalised text. */
export function preClass(c: number): Pre {
  if (preWs.has(c)) return Pre.Whitespace
  return inRanges(PRE_PUNCT, c) ? Pre.Punct : Pre.Other
}

let uncasedMap: Map<number, string> | null = null

/** strip_accents + lowercase of one code point (HF order: NFD, drop Mn, then lowercase). */
function uncasedOf(c: number): string | undefined {
  if (c >= 0xac00 && c <= 0xd7a3) return hangulNfd(c)
  if (!uncasedMap) uncasedMap = buildUncasedMap()
  return uncasedMap.get(c)
}

function buildUncasedMap(): Map<number, string> {
  const m = new Map<number, string>()
  for (let i = 0; i < UNCASED_DROP.length; i += 2) for (let c = UNCASED_DROP[i]; c <= UNCASED_DROP[i + 1]; c++) m.set(c, '')
  for (let i = 0; i < UNCASED_DELTA.length; i += 4) {
    const [a, b, stride, d] = [UNCASED_DELTA[i], UNCASED_DELTA[i + 1], UNCASED_DELTA[i + 2], UNCASED_DELTA[i + 3]]
    for (let c = a; c <= b; c += stride) m.set(c, String.fromCodePoint(c + d))
  }
  for (let i = 0; i < UNCASED_MULTI.length; i += 2) m.set(UNCASED_MULTI[i] as number, UNCASED_MULTI[i + 1] as string)
  return m
}

/** Canonical decomposition of a Hangul syllable (Unicode §3.12), as the reference's NFD does. */
function hangulNfd(c: number): string {
  const s = c - 0xac00
  const t = s % 28
  const lv = String.fromCharCode(0x1100 + Math.floor(s / 588), 0x1161 + Math.floor((s % 588) / 28))
  return t ? lv + String.fromCharCode(0x11a7 + t) : lv
}

/** Dropped by clean_text; lone surrogates reach the reference as U+FFFD, which it drops too. */
function isRemoved(c: number): boolean {
  return inRanges(REMOVED, c) || (c >= 0xd800 && c < 0xe000)
}

/**
 * The BertNormalizer output for one code point: '' (removed), ' ' (whitespace), the CJK char
 * padded with spaces, or its (uncased: accent-stripped, lower-cased) form.
 */
export function normalizeChar(c: number, lowercase: boolean): string {
  if (isRemoved(c)) return ''
  if (spaceSet.has(c)) return ' '
  const base = (lowercase ? uncasedOf(c) : undefined) ?? String.fromCodePoint(c)
  return inRanges(CJK, c) ? ` ${base} ` : base
}

const tables: Partial<Record<'cased' | 'uncased', CharTable>> = {}

export function charTable(lowercase: boolean): CharTable {
  const key = lowercase ? 'uncased' : 'cased'
  return (tables[key] ??= buildTable(lowercase))
}

/**
 * The BMP table: code points the uncased mapping leaves alone are classified straight from the
 * ranges; the others (and everything else in doubt) go through normalizeChar + kindOf.
 */
function buildTable(lowercase: boolean): CharTable {
  const t: CharTable = {lowercase, kind: new Uint8Array(0x10000), map: new Uint16Array(0x10000), complex: new Map(), reorder: new Map()}
  for (let c = 0; c < 0x10000; c++) t.map[c] = c
  const fill = (ranges: readonly number[], k: Kind) => {
    for (let i = 0; i < ranges.length; i += 2) t.kind.fill(k, ranges[i], Math.min(ranges[i + 1], 0xffff) + 1)
  }
  fill(PRE_PUNCT, Kind.Punct)
  for (const c of PRE_WHITESPACE) if (c < 0x10000) t.kind[c] = Kind.Space
  fill(CJK, Kind.Cjk)
  for (const c of SPACE) if (c < 0x10000) t.kind[c] = Kind.Space
  fill(REMOVED, Kind.Removed)
  t.kind.fill(Kind.Complex, 0xd800, 0xdc00) // a pair is decoded by the scanner
  t.kind.fill(Kind.Removed, 0xdc00, 0xe000) // a lone low surrogate
  if (lowercase) for (const c of uncasedKeys()) if (c < 0x10000 && t.kind[c] !== Kind.Removed && t.kind[c] !== Kind.Space) classify(t, c, c, normalizeChar(c, true))
  if (lowercase) markReorder(t)
  return t
}

/** Uncased: the code points of REORDER go the Complex way, where the scanner notices them. */
function markReorder(t: CharTable): void {
  for (let i = 0; i < REORDER.length; i += 2) {
    const c = REORDER[i] as number
    t.reorder.set(c, REORDER[i + 1] as string)
    if (c < 0x10000 && t.kind[c] !== Kind.Complex) {
      t.kind[c] = Kind.Complex
      t.complex.set(c, normalizeChar(c, true))
    }
  }
}

const survivorRank = new Map<number, number>()
for (let i = 0; i < SURVIVORS.length; i += 2) survivorRank.set(SURVIVORS[i], SURVIVORS[i + 1])

/**
 * The uncased BertNormalizer output of a whole line, for lines with a combining mark that
 * strip_accents keeps (the reference's "is Mn" data is older than its NFD data, so some marks
 * survive). NFD puts each run of combining marks in order of combining class, so two such marks
 * in one run can change places; the per-character tables cannot see that. Here: a run of marks
 * goes on until a code point whose NFD holds a starter; the surviving marks of a run are written,
 * sorted by class (stably), just before that starter.
 */
export function reorderUncased(t: CharTable, text: string): string {
  const out: string[] = []
  let run: [number, number, string][] = [] // rank, position, text
  const flush = () => {
    run.sort((a, b) => a[0] - b[0] || a[1] - b[1])
    for (const r of run) out.push(r[2])
    run = []
  }
  for (const ch of text) {
    const c = ch.codePointAt(0) as number
    const d = t.reorder.get(c)
    if (d === undefined) {
      if (isRemoved(c) || inRanges(NONBREAK, c)) continue // clean_text drops it before NFD / marks only, all Mn
      flush() // a starter, even one strip_accents then drops (an Mn of class 0)
      out.push(normalizeChar(c, true))
      continue
    }
    for (const e of d) {
      const rank = survivorRank.get(e.codePointAt(0) as number)
      if (rank !== undefined) run.push([rank, run.length, normalizeChar(e.codePointAt(0) as number, true)])
      else if (!inRanges(NONBREAK, e.codePointAt(0) as number)) {
        flush()
        out.push(normalizeChar(e.codePointAt(0) as number, true))
      }
    }
  }
  flush()
  return out.join('')
}

/** The code points that strip_accents + lowercase change. */
function uncasedKeys(): number[] {
  if (!uncasedMap) uncasedMap = buildUncasedMap()
  const keys = [...uncasedMap.keys()]
  for (let c = 0xac00; c <= 0xd7a3; c++) keys.push(c)
  return keys
}

/** Sets kind/map of slot `slot` (a BMP code unit) for code point c whose normalised form is `out`. */
function classify(t: CharTable, slot: number, c: number, out: string): void {
  const k = kindOf(c, out)
  t.kind[slot] = k
  if (k === Kind.Complex) t.complex.set(c, out)
  else if (k !== Kind.Space && k !== Kind.Removed) t.map[slot] = (k === Kind.Cjk ? out.charCodeAt(1) : out.charCodeAt(0))
}

function kindOf(c: number, out: string): Kind {
  if (out === '') return Kind.Removed
  if (out === ' ') return Kind.Space
  if (inRanges(CJK, c)) return out.length === 3 && preClass(out.charCodeAt(1)) === Pre.Other ? Kind.Cjk : Kind.Complex
  if (out.length !== 1) return Kind.Complex
  const p = preClass(out.charCodeAt(0))
  return p === Pre.Whitespace ? Kind.Space : p === Pre.Punct ? Kind.Punct : Kind.Word
}

/** The normalised output of an astral code point (cached per table). */
export function astralOut(t: CharTable, cp: number): string {
  let out = t.complex.get(cp)
  if (out === undefined) {
    out = normalizeChar(cp, t.lowercase)
    t.complex.set(cp, out)
  }
  return out
}
