#!/usr/bin/env node
/**
 * The string-match baseline of issue 23 for `span eval coref`: in every document, every maximal run
 * of capitalised words and every pronoun is a mention, and mentions with the same lower-cased text
 * form one cluster (a text seen once is no mention). Writes the input as CoNLL-2012 with its
 * coreference column replaced (the reader and writer of `span predict coref`), so
 *
 *   npm run build && node bench/coref-baseline.mjs DATA [SPLIT] | node bin/run.js eval coref --gold DATA --pred -
 *
 * DATA is what `predict coref --data` takes (a .conll file, a folder with SPLIT, a LitBank .ids list).
 */
import {readConll, writeConll} from '../dist/core/tasks/coref/conll.js'

export const PRONOUNS = new Set(
  (
    'i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself she her hers herself ' +
    'it its itself they them their theirs themselves'
  ).split(' '),
)

const capitalised = (w) => /^\p{Lu}/u.test(w)

/** The baseline's clusters of one document's words: [[first, last], ...] per cluster. */
export function stringMatchClusters(words) {
  const byText = new Map()
  const add = (s, e) => {
    const text = words
      .slice(s, e + 1)
      .join(' ')
      .toLowerCase()
    byText.set(text, [...(byText.get(text) ?? []), [s, e]])
  }
  for (let w = 0; w < words.length;) {
    if (PRONOUNS.has(words[w].toLowerCase())) add(w, w++)
    else if (capitalised(words[w])) {
      let e = w
      while (e + 1 < words.length && capitalised(words[e + 1]) && !PRONOUNS.has(words[e + 1].toLowerCase())) e++
      add(w, e)
      w = e + 1
    } else w++
  }
  return [...byText.values()].filter((c) => c.length > 1)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [data, split] = process.argv.slice(2)
  if (!data) {
    process.stderr.write('usage: node bench/coref-baseline.mjs DATA [SPLIT] > pred.conll\n')
    process.exit(2)
  }
  for (const d of readConll(data, split ? {split} : {})) process.stdout.write(writeConll(d, stringMatchClusters(d.words)))
}
