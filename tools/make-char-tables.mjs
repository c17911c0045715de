#!/usr/bin/env node
// Derives the character tables of src/core/text/tables/chars.ts from the reference tokenizer,
// Hugging Face `tokenizers` (the npm package, a devDependency), by running every code point
// 0..0x10FFFF (surrogates excepted) through its BertNormalizer and BertPreTokenizer:
//   - cased:   BertNormalizer{clean_text, handle_chinese_chars}            → removed / space / CJK
//   - uncased: BertNormalizer{clean_text, handle_chinese_chars, strip_accents, lowercase}
//   - BertPreTokenizer on "a" + c + "a"                                    → whitespace / punctuation
//   - its NFD on c and on U+0345 + c (U+0345 has the highest combining class, 240, so NFD moves
//     any c with 0 < ccc < 240 in front of it)                             → combining classes
// The last is for the uncased mode's canonical reordering: a combining mark that strip_accents
// keeps (one the reference does not count as Mn) can change places with another such mark.
// The tables are data about the oracle, not about Node's own Unicode tables (which differ).
// The script checks that the compact encoding reproduces every code point before writing.
//
// usage: node tools/make-char-tables.mjs [out.ts]   (default src/core/text/tables/chars.ts)
import {createRequire} from 'node:module'
import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const require = createRequire(import.meta.url)
const tk = require('tokenizers')
const version = require('tokenizers/package.json').version
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outPath = process.argv[2] ?? join(root, 'src/core/text/tables/chars.ts')

const cased = tk.bertNormalizer({cleanText: true, handleChineseChars: true, stripAccents: false, lowercase: false})
const uncased = tk.bertNormalizer({cleanText: true, handleChineseChars: true, stripAccents: true, lowercase: true})
const pre = tk.bertPreTokenizer()
const nfd = tk.nfdNormalizer()

const MAX = 0x110000
const isSurrogate = (c) => c >= 0xd800 && c < 0xe000
const HANGUL_FIRST = 0xac00
const HANGUL_LAST = 0xd7a3

/** Closed ranges [a, b] of the code points where pred holds, flattened. */
function ranges(pred) {
  const out = []
  let start = -1
  for (let c = 0; c <= MAX; c++) {
    const on = c < MAX && !isSurrogate(c) && pred(c)
    if (on && start < 0) start = c
    if (!on && start >= 0 && !(isSurrogate(c) && c < 0xdfff)) {
      out.push(start, c - 1)
      start = -1
    }
  }
  return out
}

function survey() {
  const removed = new Set(), space = new Set(), cjk = new Set(), ws = new Set(), punct = new Set()
  const umap = new Map() // code point → uncased output when it differs from the cased one
  for (let c = 0; c < MAX; c++) {
    if (isSurrogate(c)) continue
    const s = String.fromCodePoint(c)
    const a = cased.normalizeString(s)
    if (a === '') removed.add(c)
    else if (a === ' ') space.add(c)
    else if (a === ` ${s} `) cjk.add(c)
    else if (a !== s) throw new Error(`unexpected cased output for U+${c.toString(16)}: ${JSON.stringify(a)}`)
    const u = uncased.normalizeString(s)
    if (cjk.has(c) && !/^ .+ $/u.test(u)) throw new Error(`unexpected uncased CJK output for U+${c.toString(16)}`)
    if (u !== a) umap.set(c, cjk.has(c) ? u.slice(1, -1) : u)
    const n = pre.preTokenizeString(`a${s}a`).length
    if (n === 2) ws.add(c)
    else if (n === 3) punct.add(c)
  }
  return {removed, space, cjk, ws, punct, umap}
}

/** Hangul syllables decompose algorithmically (Unicode §3.12); checked against the oracle. */
function hangulNfd(c) {
  const s = c - HANGUL_FIRST
  const l = 0x1100 + Math.floor(s / 588), v = 0x1161 + Math.floor((s % 588) / 28), t = s % 28
  return String.fromCharCode(l, v) + (t ? String.fromCharCode(0x11a7 + t) : '')
}

/**
 * The uncased mapping, compact: DROP ranges (output ""), DELTA runs [first, last, stride, delta]
 * of single-code-point outputs, and MULTI pairs for the rest; Hangul syllables are computed.
 */
function encodeMap(umap) {
  const drop = new Set(), single = [], multi = []
  for (const [c, u] of umap) {
    if (c >= HANGUL_FIRST && c <= HANGUL_LAST) {
      if (u !== hangulNfd(c)) throw new Error(`Hangul U+${c.toString(16)} is not the algorithmic NFD`)
      continue
    }
    if (u === '') drop.add(c)
    else if ([...u].length === 1) single.push([c, u.codePointAt(0) - c])
    else multi.push(c, u)
  }
  single.sort((x, y) => x[0] - y[0])
  const delta = []
  for (let i = 0; i < single.length; ) {
    const [c, d] = single[i]
    let j = i + 1, stride = 0
    if (j < single.length && single[j][1] === d && single[j][0] - c <= 2) stride = single[j][0] - c
    while (stride && j < single.length && single[j][1] === d && single[j][0] - single[j - 1][0] === stride) j++
    if (!stride) j = i + 1
    delta.push(c, single[j - 1][0], stride || 1, d)
    i = j
  }
  return {drop: ranges((c) => drop.has(c)), delta, multi}
}

/** Decodes the compact map again, so that the check below tests what is written. */
function decodeMap(enc) {
  const m = new Map()
  for (let i = 0; i < enc.drop.length; i += 2) for (let c = enc.drop[i]; c <= enc.drop[i + 1]; c++) m.set(c, '')
  for (let i = 0; i < enc.delta.length; i += 4) {
    const [a, b, stride, d] = enc.delta.slice(i, i + 4)
    for (let c = a; c <= b; c += stride) m.set(c, String.fromCodePoint(c + d))
  }
  for (let i = 0; i < enc.multi.length; i += 2) m.set(enc.multi[i], enc.multi[i + 1])
  for (let c = HANGUL_FIRST; c <= HANGUL_LAST; c++) m.set(c, hangulNfd(c))
  return m
}

/** Combining class > 0, by the reference's own NFD (see the header). */
const combining = (e) => e === '\u0345' || nfd.normalizeString(`\u0345${e}`) === `${e}\u0345`

/**
 * The uncased mode's canonical reordering: NONBREAK, the code points whose NFD is all combining
 * marks (they do not end a run of marks); SURVIVORS, the combining marks strip_accents keeps,
 * each with its rank among them (by combining class); REORDER, every code point whose NFD
 * contains a survivor, with that NFD.
 */
function reorderTables(s) {
  const nonbreak = new Set(), survivors = [], reorder = []
  for (let c = 0; c < MAX; c++) {
    if (isSurrogate(c) || s.removed.has(c)) continue
    const ch = String.fromCodePoint(c)
    const d = nfd.normalizeString(ch)
    if ([...d].every(combining)) nonbreak.add(c)
    if (d === ch && combining(ch) && uncased.normalizeString(ch) !== '') survivors.push(c)
  }
  const sset = new Set(survivors)
  for (let c = 0; c < MAX; c++) {
    if (isSurrogate(c) || s.removed.has(c)) continue
    const d = nfd.normalizeString(String.fromCodePoint(c))
    if ([...d].some((e) => sset.has(e.codePointAt(0)))) reorder.push(c, d)
  }
  const str = (c) => String.fromCodePoint(c)
  const above = (a, b) => nfd.normalizeString(str(a) + str(b)) === str(b) + str(a) // ccc(a) > ccc(b)
  const ranked = survivors.map((c) => [c, survivors.filter((b) => above(c, b)).length])
  return {nonbreak: ranges((c) => nonbreak.has(c)), survivors: ranked.flat(), reorder}
}

function check(s, enc) {
  const m = decodeMap(enc)
  for (const [c, u] of s.umap) if (m.get(c) !== u) throw new Error(`map check failed at U+${c.toString(16)}`)
  for (const c of m.keys()) if (!s.umap.has(c)) throw new Error(`map check: extra U+${c.toString(16)}`)
}

/** A JSON string with everything outside printable ASCII as \\u escapes (marks are invisible otherwise). */
const quote = (x) => JSON.stringify(x).replace(/[^\x20-\x7e]/g, (u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, '0')}`)
const pairs = (a) => a.map((x, i) => (i % 2 ? quote(x) : `0x${x.toString(16)}`)).join(',')
const num = (a) => a.map((x) => (x < 0 ? `-0x${(-x).toString(16)}` : `0x${x.toString(16)}`)).join(',')

function render(s, enc, r) {
  const list = (set) => [...set].sort((a, b) => a - b)
  const multi = [pairs(enc.multi)]
  return `// GENERATED by tools/make-char-tables.mjs from the npm package tokenizers@${version} (Hugging Face,
// the reference BERT tokenizer): every code point 0..0x10FFFF run through its BertNormalizer
// (cased: clean_text + handle_chinese_chars; uncased: also strip_accents + lowercase), its
// BertPreTokenizer, and its NFD (combining classes, for the uncased mode's canonical reordering).
// Do not edit; re-run the script (node tools/make-char-tables.mjs). Ranges are closed [first, last] pairs.

/** Removed by clean_text (U+0000, U+FFFD, Cc/Cf/Co except \\t \\n \\r). */
export const REMOVED: readonly number[] = [${num(ranges((c) => s.removed.has(c)))}]
/** Turned into ' ' by clean_text (whitespace, \\t \\n \\r included). */
export const SPACE: readonly number[] = [${num(list(s.space))}]
/** CJK ideographs: surrounded by spaces (handle_chinese_chars). */
export const CJK: readonly number[] = [${num(ranges((c) => s.cjk.has(c)))}]
/** BertPreTokenizer: split on and dropped. */
export const PRE_WHITESPACE: readonly number[] = [${num(list(s.ws))}]
/** BertPreTokenizer: isolated (ASCII punctuation and Unicode P*). */
export const PRE_PUNCT: readonly number[] = [${num(ranges((c) => s.punct.has(c)))}]
/** Uncased (strip_accents + lowercase) output "" for these ranges. */
export const UNCASED_DROP: readonly number[] = [${num(enc.drop)}]
/** Uncased single-code-point outputs: [first, last, stride, delta] runs, output = c + delta. */
export const UNCASED_DELTA: readonly number[] = [${num(enc.delta)}]
/** Uncased outputs of more than one code point: code point, output. Hangul syllables are computed. */
export const UNCASED_MULTI: readonly (number | string)[] = [${multi.join(',')}]
/** Canonical reordering (uncased): code points whose NFD is all combining marks. */
export const NONBREAK: readonly number[] = [${num(r.nonbreak)}]
/** Canonical reordering: marks that strip_accents keeps, each with its rank by combining class. */
export const SURVIVORS: readonly number[] = [${num(r.survivors)}]
/** Canonical reordering: code points whose NFD holds a survivor, with that NFD. */
export const REORDER: readonly (number | string)[] = [${pairs(r.reorder)}]
`
}

const s = survey()
const enc = encodeMap(s.umap)
check(s, enc)
const r = reorderTables(s)
writeFileSync(outPath, render(s, enc, r))
console.error(`wrote ${outPath}: ${s.removed.size} removed, ${s.space.size} space, ${s.cjk.size} CJK, ${s.ws.size} whitespace, ${s.punct.size} punctuation, ${s.umap.size} uncased mappings (${enc.delta.length / 4} runs, ${enc.multi.length / 2} multi), ${r.survivors.length / 2} surviving marks, ${r.reorder.length / 2} code points to reorder`)
