/**
 * The task `span demo` ends on (README.md, "span demo"): was a sentence of the embedded corpus
 * (one State of the Union address from each era, tools/make-fixtures.mjs) spoken before 1910 or
 * after? The addresses of 1790, 1801, 1823 and 1901 against those of 1913 to 2000 train it, as
 * many sentences of each; the dev set is as many sentences of the 1862 address (which fine-tuning
 * never sees) as of the 2016 address's end that the pre-training's held-out examples hold (which
 * neither run sees), so the majority class scores exactly 50%. Written as SST-2 TSV (sentence,
 * label: 0 before 1910, 1 after) for `span finetune glue`, `span predict glue`, `span eval glue`.
 */
import {readFile, writeFile} from 'node:fs/promises'
import {WordPieceTokenizer} from '../text/tokenizer.js'
import type {Vocab} from '../text/vocab.js'
import {Rng} from '../util/rng.js'

const EARLY = [0, 1, 2, 4] // 1790, 1801, 1823, 1901: the corpus's documents in order
const LATE = [5, 6, 7, 8, 9] // 1913, 1934, 1962, 1985, 2000
const EARLY_DEV = 3 // 1862; the late dev sentences are the end of the 2016 address (document 10)

/** A seeded Fisher-Yates shuffle of a copy of `a`. */
export function shuffled<T>(a: readonly T[], rng: Rng): T[] {
  const b = [...a]
  for (let i = b.length - 1; i > 0; i--) {
    const j = rng.int(i + 1)
    ;[b[i], b[j]] = [b[j], b[i]]
  }
  return b
}

/** How many of `lines`, counted from the end, fit in `tokens` tokens of `tok`. */
export function tailLines(lines: string[], tokens: number, tok: WordPieceTokenizer): number {
  let used = 0
  let k = 0
  for (; k < lines.length; k++) {
    used += tok.encodeInto(lines[lines.length - 1 - k])
    if (used > tokens) break
  }
  return k
}

/** Tokens of the held-out masked examples (without [CLS] and [SEP]): the end of the corpus that pre-training did not see. */
async function heldOutTokens(heldOutFile: string): Promise<number> {
  const records = (await readFile(heldOutFile, 'utf8'))
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as {span?: string; ids?: number[]})
  return records.filter((r) => r.span !== 'header').reduce((n, r) => n + (r.ids?.length ?? 2) - 2, 0)
}

const tsv = (rows: [string, number][]) => ['sentence\tlabel', ...rows.map(([s, l]) => `${s}\t${l}`)].join('\n') + '\n'

/** The documents of the corpus (blank lines apart), their non-empty lines without tabs. */
export function documents(text: string): string[][] {
  return text.split(/\n\s*\n/).map((d) =>
    d
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.length > 0 && !l.includes('\t')),
  )
}

/** Writes the era task's train and dev TSV; returns the number of dev sentences of each era (none also said in a training address). */
export async function writeEraTask(corpus: string, vocab: Vocab, heldOutFile: string, out: {train: string; dev: string}, seed: number): Promise<number> {
  const docs = documents(await readFile(corpus, 'utf8'))
  const rng = new Rng(seed)
  const [early, late] = [EARLY, LATE].map((ids) =>
    shuffled(
      ids.flatMap((i) => docs[i]),
      rng,
    ),
  )
  const n = Math.min(early.length, late.length)
  const label =
    (l: number) =>
    (s: string): [string, number] => [s, l]
  const train = shuffled([...early.slice(0, n).map(label(0)), ...late.slice(0, n).map(label(1))], rng)
  const said = new Set([...early, ...late]) // "Thank you." ends more than one address: not a held-out sentence
  const last = docs[docs.length - 1]
  const tail = last.slice(last.length - tailLines(last, await heldOutTokens(heldOutFile), new WordPieceTokenizer(vocab, {lowercase: false})))
  const [earlyDev, lateDev] = [docs[EARLY_DEV], tail].map((d) => d.filter((s) => !said.has(s)))
  const m = Math.min(earlyDev.length, lateDev.length)
  const dev = [...shuffled(earlyDev, rng).slice(0, m).map(label(0)), ...lateDev.slice(lateDev.length - m).map(label(1))]
  await writeFile(out.train, tsv(train))
  await writeFile(out.dev, tsv(dev))
  return m
}
