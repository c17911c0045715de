#!/usr/bin/env node
/**
 * The pre-training corpus of bench/coref-ontogum.mjs, as raw text for `span tokenize` (one sentence
 * per line, a blank line between documents): OntoGUM's TRAIN split (GUM's splits.md; its dev and
 * test documents are left out), LitBank's fold-0 TRAIN documents (another corpus: fiction), and
 * WikiText-2 valid + test (../shared/data/wikitext; an article per document, headings dropped,
 * `@,@`-style number splits joined back, `<unk>` dropped). Derived at run time, never committed.
 *
 *   npm run build && node bench/coref-corpus.mjs > corpus.txt
 */
import {readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const DATA = join(ROOT, '..', 'shared', 'data')
const {readConll} = await import('../dist/core/tasks/coref/conll.js')
const {sentenceIds} = await import('../dist/core/tasks/coref/sentences.js')

/** A CoNLL document as lines of sentences. */
function conllText(d) {
  const sid = sentenceIds(d.words, d.sentence)
  const lines = []
  d.words.forEach((w, i) => {
    if (i === 0 || sid[i] !== sid[i - 1]) lines.push([])
    lines.at(-1).push(w)
  })
  return lines.map((l) => l.join(' ')).join('\n')
}

/** WikiText-2 (tokenised v1) as articles: a top-level ` = Title = ` starts one. */
function wikiText(file) {
  const docs = []
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    if (/^ = [^=].* = $/.test(raw)) docs.push([])
    else if (raw.trim() === '' || /^ =/.test(raw) || docs.length === 0) continue
    else
      docs.at(-1).push(
        raw
          .replace(/ @(.)@ /g, '$1')
          .replace(/<unk>/g, '')
          .replace(/ +/g, ' ')
          .trim(),
      )
  }
  return docs.filter((d) => d.length > 0).map((d) => d.join('\n'))
}

export function corpusDocs() {
  const gum = readConll(join(DATA, 'coref', 'ontogum', 'conll'), {split: 'train'}).map(conllText)
  const lit = readConll(join(DATA, 'coref', 'litbank', 'tenfold_splits', '0', 'train.ids')).map(conllText)
  const wiki = ['valid', 'test'].flatMap((s) => wikiText(join(DATA, 'wikitext', `wikitext-2.${s}.txt`)))
  return {gum, lit, wiki}
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const {gum, lit, wiki} = corpusDocs()
  process.stderr.write(`coref-corpus: ${gum.length} OntoGUM train, ${lit.length} LitBank fold-0 train, ${wiki.length} WikiText-2 articles\n`)
  process.stdout.write([...gum, ...lit, ...wiki].join('\n\n') + '\n')
}
