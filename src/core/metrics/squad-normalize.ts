/**
 * normalize_answer of the official SQuAD scripts (evaluate-v1.1.py, evaluate-v2.0.py), with
 * Python 3's string semantics reproduced: str.lower(), string.punctuation (ASCII only),
 * re's Unicode `\b` for the articles, and str.split() on Python's Unicode whitespace.
 */

/** Python's `string.punctuation`: the 32 ASCII punctuation characters, nothing else. */
export const PY_PUNCTUATION = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~')

/**
 * The characters Python's str.split() (and str.isspace()) splits on: bidi class WS/B/S or
 * category Zs. Unlike JS `\s` it has U+001C–U+001F and U+0085, and not U+FEFF.
 */
export const PY_WHITESPACE = new Set(
  [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000].map((c) => String.fromCodePoint(c)),
)

/**
 * `\b(a|an|the)\b` with Python's Unicode word characters (str.isalnum() or `_`), which are
 * the letters and numbers of Unicode: JS's ASCII-only `\b` would not do. Checked code point by
 * code point against Python 3.11; they differ only on characters newer than its Unicode 14.
 */
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu

/** Python's str.split() with no argument: runs of Unicode whitespace, no empty pieces. */
export function pySplit(text: string): string[] {
  const out: string[] = []
  let cur = ''
  for (const ch of text) {
    if (PY_WHITESPACE.has(ch)) {
      if (cur) out.push(cur)
      cur = ''
    } else cur += ch
  }
  if (cur) out.push(cur)
  return out
}

/** remove_punc: drops string.punctuation only (‘ ’ “ ” – — « » stay). */
function removePunc(text: string): string {
  let out = ''
  for (const ch of text) if (!PY_PUNCTUATION.has(ch)) out += ch
  return out
}

/** normalize_answer: lower, remove_punc, remove_articles, white_space_fix (in that order). */
export function normalizeAnswer(s: string): string {
  const noArticles = removePunc(s.toLowerCase()).replace(ARTICLES, ' ')
  return pySplit(noArticles).join(' ')
}
