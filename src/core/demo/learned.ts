/**
 * What `span demo`'s tiny model learned in its minute, beside the trivial baseline it has to beat
 * (README.md, "span demo"): on the held-out masked examples, the pre-training evaluation's MLM and
 * SBO cross-entropy and accuracy (the last {"split":"eval"} record of its metrics), against a
 * unigram model of the training text, which knows each token's frequency and nothing of its
 * context: its cross-entropy on the same targets (add-one smoothed counts over the vocabulary) and
 * its accuracy (always the most frequent token). The SBO targets are those the model scores
 * (model/batch.ts addSboTargets): spans with both outside boundaries inside the block.
 */
import {readFile} from 'node:fs/promises'

/** One head's held-out figures: mean cross-entropy (nats) and top-1 accuracy over `targets`. */
export interface HeldOut {
  crossEntropy: number
  accuracy: number
  targets: number
}

interface Masked {
  ids: number[]
  targets: [number, number][]
  spans: [number, number, string][]
}

async function readMasked(path: string): Promise<Masked[]> {
  const lines = (await readFile(path, 'utf8')).trimEnd().split('\n')
  return lines.map((l) => JSON.parse(l) as Masked & {span?: string}).filter((r) => r.span !== 'header')
}

/** The original ids of a masked example without its [CLS] and [SEP]. */
function originalTokens(ex: Masked): number[] {
  const ids = [...ex.ids]
  for (const [p, id] of ex.targets) ids[p] = id
  return ids.slice(1, -1)
}

/** The SBO targets of an example: the first maxTargets tokens of spans whose boundaries lie inside the block. */
export function sboTargets(ex: Masked, maxTargets = 15): number[] {
  const orig = new Map(ex.targets)
  const n = ex.ids.length
  const out: number[] = []
  for (const [s, e] of ex.spans) {
    if (s - 1 < 1 || e + 1 > n - 2) continue
    for (let i = s; i <= e && i - s < maxTargets; i++) out.push(orig.get(i) as number)
  }
  return out
}

/** A unigram model's figures on `targets`: counts from training tokens, add-one smoothed over vocabSize. */
export function unigramOn(counts: Map<number, number>, total: number, vocabSize: number, targets: number[]): HeldOut {
  let top = -1
  let topCount = -1
  for (const [id, c] of counts) if (c > topCount || (c === topCount && id < top)) [top, topCount] = [id, c]
  let nll = 0
  let hits = 0
  for (const t of targets) {
    nll -= Math.log(((counts.get(t) ?? 0) + 1) / (total + vocabSize))
    if (t === top) hits++
  }
  const n = Math.max(1, targets.length)
  return {crossEntropy: nll / n, accuracy: hits / n, targets: targets.length}
}

/** The unigram baseline of the held-out MLM and SBO targets, counted on the training examples. */
export async function unigramBaseline(trainFile: string, heldOutFile: string, vocabSize: number): Promise<{mlm: HeldOut; sbo: HeldOut}> {
  const counts = new Map<number, number>()
  let total = 0
  for (const ex of await readMasked(trainFile)) {
    for (const id of originalTokens(ex)) counts.set(id, (counts.get(id) ?? 0) + 1)
    total += ex.ids.length - 2
  }
  const held = await readMasked(heldOutFile)
  const mlm = held.flatMap((ex) => ex.targets.map(([, id]) => id))
  return {
    mlm: unigramOn(counts, total, vocabSize, mlm),
    sbo: unigramOn(
      counts,
      total,
      vocabSize,
      held.flatMap((ex) => sboTargets(ex)),
    ),
  }
}

/** The model's held-out figures from the last evaluation record of its metrics NDJSON. */
export async function modelHeldOut(metricsFile: string): Promise<{mlm: HeldOut; sbo: HeldOut | null; step: number}> {
  const evals = (await readFile(metricsFile, 'utf8'))
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, number | string>)
    .filter((r) => r.split === 'eval')
  const last = evals.at(-1)
  if (!last) throw new Error(`${metricsFile}: no evaluation record`)
  const head = (k: 'mlm' | 'sbo'): HeldOut | null =>
    typeof last[`${k}_loss`] === 'number'
      ? {crossEntropy: last[`${k}_loss`] as number, accuracy: last[`${k}_acc`] as number, targets: Number(last.targets)}
      : null
  return {mlm: head('mlm') as HeldOut, sbo: head('sbo'), step: Number(last.step)}
}
