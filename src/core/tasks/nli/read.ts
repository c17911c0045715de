/**
 * NLI pairs: SNLI / MultiNLI JSON lines as distributed (`sentence1`, `sentence2`, `gold_label`;
 * rows labelled `-`, where annotators did not agree, are dropped as the papers do) and the
 * `premise` / `hypothesis` / `label` form (shared data's nli/). Three classes.
 */
import {errorAt} from '../../stream/errors.js'
import {asObject, readJsonRecords, stringField} from '../common/records.js'

export const NLI_LABELS = ['entailment', 'neutral', 'contradiction'] as const

export interface NliExample {
  id: string
  premise: string
  hypothesis: string
  /** index in NLI_LABELS, or null when the file has no labels */
  label: number | null
  line: number
}

export interface NliFile {
  examples: NliExample[]
  /** rows dropped for the label `-` */
  dropped: number
}

/** Reads an NLI file; `requireLabel`: every kept row must have one of the three labels. */
export function readNliFile(path: string, opts: {requireLabel: boolean}): NliFile {
  const out: NliFile = {examples: [], dropped: 0}
  readJsonRecords(path).forEach((r, i) => {
    const o = asObject(r, path)
    const snli = 'sentence1' in o
    const premise = stringField(o, snli ? 'sentence1' : 'premise', path, r.line)
    const hypothesis = stringField(o, snli ? 'sentence2' : 'hypothesis', path, r.line)
    const key = snli ? 'gold_label' : 'label'
    const raw = o[key]
    if (raw === '-') return void out.dropped++
    if (raw === undefined && opts.requireLabel) throw errorAt(path, r.line, `missing field "${key}"`)
    const label = raw === undefined ? null : NLI_LABELS.indexOf(raw as (typeof NLI_LABELS)[number])
    if (label === -1) throw errorAt(path, r.line, `unknown label ${JSON.stringify(raw)} (expected ${NLI_LABELS.join(', ')} or -)`)
    const id = typeof o.pairID === 'string' ? o.pairID : typeof o.id === 'string' ? o.id : String(i)
    out.examples.push({id, premise, hypothesis, label, line: r.line})
  })
  return out
}
