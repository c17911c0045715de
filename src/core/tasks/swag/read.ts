/**
 * SWAG multiple-choice examples: the CSV as distributed (header with `sent1`, `sent2`,
 * `ending0`..`ending3` and, except in the test split, `label`) or JSON lines with the same keys
 * (or `endings` as a list). As in BERT's SWAG runs (pytorch-pretrained-BERT run_swag.py), the
 * context is sent1 and each choice is `sent2 + " " + ending`.
 */
import {errorAt, errorIn} from '../../util/errors.js'
import {asObject, readJsonRecords, readTaskText} from '../common/records.js'

export interface SwagExample {
  id: string
  context: string
  start: string
  endings: string[]
  label: number | null
  line: number
}

/** RFC 4180 records with the line each starts on (quoted fields may hold commas, quotes, newlines). */
export function parseCsv(text: string, source: string): {fields: string[]; line: number}[] {
  const rows: {fields: string[]; line: number}[] = []
  let fields: string[] = []
  let field = ''
  let quoted = false
  let line = 1
  let start = 1
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (c === '"') quoted = false
      else {
        field += c
        if (c === '\n') line++
      }
      continue
    }
    if (c === '"' && field === '') quoted = true
    else if (c === ',') {
      fields.push(field)
      field = ''
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++
      fields.push(field)
      if (fields.length > 1 || fields[0] !== '') rows.push({fields, line: start})
      ;[fields, field] = [[], '']
      start = ++line
    } else field += c
  }
  if (quoted) throw errorAt(source, start, 'unterminated quoted field')
  if (field !== '' || fields.length > 0) rows.push({fields: [...fields, field], line: start})
  return rows
}

function labelOf(raw: unknown, n: number, source: string, line: number): number | null {
  if (raw === undefined || raw === '') return null
  const x = Number(raw)
  if (!Number.isInteger(x) || x < 0 || x >= n) throw errorAt(source, line, `label ${JSON.stringify(raw)} is not a choice number 0..${n - 1}`)
  return x
}

function fromObject(o: Record<string, unknown>, id: string, source: string, line: number, requireLabel: boolean): SwagExample {
  const str = (k: string) => {
    if (typeof o[k] !== 'string') throw errorAt(source, line, o[k] === undefined ? `missing field "${k}"` : `field "${k}" must be a string`)
    return o[k] as string
  }
  const endings = Array.isArray(o.endings) ? o.endings : [0, 1, 2, 3].filter((k) => `ending${k}` in o).map((k) => str(`ending${k}`))
  if (endings.length < 2 || !endings.every((e) => typeof e === 'string'))
    throw errorAt(source, line, 'expected at least two endings (ending0, ending1, ... or "endings")')
  const label = labelOf(o.label, endings.length, source, line)
  if (label === null && requireLabel) throw errorAt(source, line, 'missing field "label"')
  return {id, context: str('sent1'), start: typeof o.sent2 === 'string' ? o.sent2 : '', endings: endings as string[], label, line}
}

/** Reads a SWAG CSV (first line a header naming sent1) or JSON-lines file. */
export function readSwagFile(path: string, opts: {requireLabel: boolean}): SwagExample[] {
  const text = readTaskText(path)
  const first = text.trimStart()[0]
  if (first === '{' || first === '[')
    return readJsonRecords(path, text).map((r, i) => fromObject(asObject(r, path), String(i), path, r.line, opts.requireLabel))
  const rows = parseCsv(text, path)
  if (rows.length === 0) throw errorIn(path, `empty file`)
  const header = rows[0].fields
  if (!header.includes('sent1') || !header.includes('ending0')) throw errorAt(path, 1, 'not a SWAG CSV: the header has no sent1 and ending0 columns')
  return rows.slice(1).map((r) => {
    if (r.fields.length !== header.length) throw errorAt(path, r.line, `expected ${header.length} columns as in the header, got ${r.fields.length}`)
    const o = Object.fromEntries(header.map((h, k) => [h, r.fields[k]]))
    const id = o['video-id'] !== undefined ? `${o['video-id']}-${o['fold-ind'] ?? r.line}` : String(r.line)
    return fromObject(o, id, path, r.line, opts.requireLabel)
  })
}
