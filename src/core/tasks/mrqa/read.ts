/**
 * MRQA 2019 shared-task files (`.jsonl` or `.jsonl.gz`): a header line `{"header": ...}`, then
 * one context per line with `context` and `qas` (`qid`, `question`, `answers`,
 * `detected_answers` with inclusive `char_spans`). Questions become SQuAD examples so that the
 * SQuAD windows and decoding serve MRQA; the training answer is the earliest detected char span
 * (SpanBERT's run_mrqa.py read_mrqa_examples: sorted spans, the first).
 */
import {errorAt, errorIn} from '../../util/errors.js'
import {asObject, readJsonRecords, stringField} from '../common/records.js'
import type {SquadExample} from '../squad/dataset.js'
import type {MrqaQuestion} from '../../metrics/mrqa.js'

export interface MrqaFile {
  source: string
  header: Record<string, unknown> | null
  /** one per question; answers: [the earliest detected span] (none when the data has none) */
  examples: SquadExample[]
  /** the gold texts the official scorer compares with */
  gold: MrqaQuestion[]
}

/** Reads and checks an MRQA file; `needSpans`: every question must have a detected answer (training). */
export function readMrqaFile(path: string, opts: {needSpans: boolean}): MrqaFile {
  const records = readJsonRecords(path)
  let header: Record<string, unknown> | null = null
  const out: MrqaFile = {source: path, header, examples: [], gold: []}
  records.forEach((r, i) => {
    const o = asObject(r, path)
    if (i === 0 && 'header' in o) return void (out.header = header = o.header as Record<string, unknown>)
    const context = stringField(o, 'context', path, r.line)
    if (!Array.isArray(o.qas)) throw errorAt(path, r.line, 'missing list "qas" (not an MRQA file?)')
    const cps = [...context]
    o.qas.forEach((qa, q) => readQuestion(qa, q, cps, context, out, opts, path, r.line))
  })
  if (out.examples.length === 0) throw errorIn(path, `no questions in the file`)
  return out
}

function readQuestion(qa: unknown, q: number, cps: string[], context: string, out: MrqaFile, opts: {needSpans: boolean}, path: string, line: number): void {
  const where = `qas[${q}]`
  if (typeof qa !== 'object' || qa === null) throw errorAt(path, line, `${where} is not an object`)
  const o = qa as Record<string, unknown>
  const qid = stringField(o, 'qid', path, line)
  const question = stringField(o, 'question', path, line)
  if (!Array.isArray(o.answers) || !o.answers.every((a) => typeof a === 'string'))
    throw errorAt(path, line, `${where} (${qid}): "answers" must be a list of strings`)
  const spans = detectedSpans(o.detected_answers, cps.length, `${where} (${qid})`, path, line)
  if (opts.needSpans && spans.length === 0) throw errorAt(path, line, `${where} (${qid}): no detected_answers char span to train on`)
  const answers = spans.length > 0 ? [{text: cps.slice(spans[0][0], spans[0][1] + 1).join(''), start: spans[0][0]}] : []
  out.examples.push({id: qid, title: '', question, context, answers, isImpossible: false})
  out.gold.push({qid, answers: o.answers as string[]})
}

/** All detected char spans, checked against the context's length, sorted as Python sorts pairs. */
function detectedSpans(detected: unknown, n: number, where: string, path: string, line: number): [number, number][] {
  if (detected === undefined) return []
  if (!Array.isArray(detected)) throw errorAt(path, line, `${where}: "detected_answers" must be a list`)
  const spans: [number, number][] = []
  for (const d of detected) {
    const cs = (d as {char_spans?: unknown})?.char_spans
    if (!Array.isArray(cs)) throw errorAt(path, line, `${where}: a detected answer has no "char_spans" list`)
    for (const s of cs) {
      const ok = Array.isArray(s) && s.length === 2 && s.every((x) => Number.isInteger(x)) && s[0] >= 0 && s[0] <= s[1] && s[1] < n
      if (!ok) throw errorAt(path, line, `${where}: char span ${JSON.stringify(s)} is out of range for a context of ${n} characters`)
      spans.push([s[0], s[1]])
    }
  }
  return spans.sort((a, b) => a[0] - b[0] || a[1] - b[1])
}
