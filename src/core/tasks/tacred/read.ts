/**
 * TACRED-style relation examples: TACRED's JSON list as distributed, or JSON lines (SemEval-2010
 * Task 8 in TACRED's keys). Fields `token` (list of words), `subj_start`, `subj_end`,
 * `obj_start`, `obj_end` (inclusive word indices), optional `subj_type`/`obj_type`, and
 * `relation` (required for training and as gold). PTB brackets (-LRB- ...) become the
 * characters, as SpanBERT's run_tacred.py `convert_token` does.
 */
import {errorAt} from '../../stream/errors.js'
import {asObject, indexField, readJsonRecords, stringField} from '../common/records.js'

export interface RelationExample {
  id: string
  tokens: string[]
  subj: [number, number]
  obj: [number, number]
  /** null when the data has no types (SemEval): untyped markers */
  subjType: string | null
  objType: string | null
  relation: string | null
  line: number
}

const PTB = new Map([
  ['-lrb-', '('],
  ['-rrb-', ')'],
  ['-lsb-', '['],
  ['-rsb-', ']'],
  ['-lcb-', '{'],
  ['-rcb-', '}'],
])

/** run_tacred.py convert_token. */
export const convertToken = (t: string): string => PTB.get(t.toLowerCase()) ?? t

export interface RelationReadOptions {
  /** every record must carry `relation` */
  requireLabel: boolean
  /** labels the model knows: any other is an error at its line */
  labels?: readonly string[]
}

/** Reads and checks every record of a TACRED/SemEval file. */
export function readRelationFile(path: string, opts: RelationReadOptions): RelationExample[] {
  const known = opts.labels ? new Set(opts.labels) : null
  return readJsonRecords(path).map((r, i) => {
    const o = asObject(r, path)
    const tokens = o.token ?? o.tokens
    if (tokens === undefined) throw errorAt(path, r.line, 'missing field "token"')
    if (!Array.isArray(tokens) || tokens.length === 0 || !tokens.every((t) => typeof t === 'string'))
      throw errorAt(path, r.line, 'field "token" must be a non-empty list of strings')
    const span = (a: string, b: string): [number, number] => {
      const s = indexField(o, a, path, r.line)
      const e = indexField(o, b, path, r.line)
      if (s > e || e >= tokens.length) throw errorAt(path, r.line, `span ${a}..${b} = ${s}..${e} is out of range for ${tokens.length} tokens`)
      return [s, e]
    }
    const relation = o.relation === undefined ? null : stringField(o, 'relation', path, r.line)
    if (relation === null && opts.requireLabel) throw errorAt(path, r.line, 'missing field "relation"')
    if (relation !== null && known && !known.has(relation))
      throw errorAt(path, r.line, `unknown relation ${JSON.stringify(relation)} (the model knows ${known.size} labels)`)
    const type = (k: string) => (o[k] === undefined ? null : stringField(o, k, path, r.line))
    const id = typeof o.id === 'string' ? o.id : String(i)
    return {
      id,
      tokens: (tokens as string[]).map(convertToken),
      subj: span('subj_start', 'subj_end'),
      obj: span('obj_start', 'obj_end'),
      subjType: type('subj_type'),
      objType: type('obj_type'),
      relation,
      line: r.line,
    }
  })
}

/** The label list of training data as SpanBERT orders it: the negative label first, then the rest sorted. */
export function relationLabels(examples: RelationExample[], negative: string): string[] {
  const rest = new Set(examples.map((e) => e.relation as string))
  rest.delete(negative)
  return [negative, ...[...rest].sort()]
}
