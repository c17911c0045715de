/**
 * SQuAD v1.1 / v2.0 datasets (the `{"version", "data": [{"title", "paragraphs": [{"context",
 * "qas": [...]}]}]}` files) read into flat examples, as run_squad's read_squad_examples does.
 * Offsets are Python's: code points of the context, not UTF-16 units.
 */
import {errorIn, SpanError} from '../../util/errors.js'
import {readJsonFile} from './json.js'

export type SquadVersion = '1.1' | '2.0'

/** One gold answer: its text and where it starts in the context (in code points). */
export interface SquadAnswer {
  text: string
  start: number
}

export interface SquadExample {
  id: string
  title: string
  question: string
  context: string
  /** gold answers; [] for an unanswerable v2.0 question */
  answers: SquadAnswer[]
  isImpossible: boolean
}

export interface SquadDataset {
  source: string
  /** the `version` field as written, or null */
  declaredVersion: string | null
  /** from `version`, else from the presence of `is_impossible` */
  version: SquadVersion
  examples: SquadExample[]
}

export interface ReadOptions {
  /** check that every answer's text is at its answer_start in the context (feature building needs it) */
  checkOffsets?: boolean
}

/** Reads and validates a SQuAD file; every problem is a one-line SpanError naming the file. */
export function readSquadFile(path: string, opts: ReadOptions = {}): SquadDataset {
  return parseSquad(readJsonFile(path), path, opts)
}

/** Validates parsed SQuAD JSON (see readSquadFile). */
export function parseSquad(json: unknown, source: string, opts: ReadOptions = {}): SquadDataset {
  const ctx: Ctx = {bad: (where, what) => errorIn(source, `not a SQuAD dataset: ${where} ${what}`), sawImpossible: false}
  if (!isObject(json)) throw ctx.bad('the top level', 'is not an object')
  if (!Array.isArray(json.data)) throw ctx.bad('the top level', 'has no "data" list')
  const examples: SquadExample[] = []
  json.data.forEach((article, a) => {
    if (!isObject(article) || !Array.isArray(article.paragraphs)) throw ctx.bad(`data[${a}]`, 'has no "paragraphs" list')
    const title = typeof article.title === 'string' ? article.title : ''
    article.paragraphs.forEach((p, i) => {
      for (const ex of readParagraph(p, `data[${a}].paragraphs[${i}]`, title, ctx)) examples.push(ex) // no spread: any number of questions
    })
  })
  if (examples.length === 0) throw errorIn(source, `no questions in the dataset`)
  if (opts.checkOffsets) for (const ex of examples) checkAnswerOffsets(ex, source)
  const declared = typeof json.version === 'string' ? json.version : null
  if (declared !== null && /^v?\d+(\.\d+)*$/i.test(declared) && !/^v?(1\.0|1\.1|2\.0)$/i.test(declared)) {
    throw errorIn(source, `"version" is ${JSON.stringify(declared)}; span reads SQuAD v1.1 and v2.0 only`)
  }
  return {source, declaredVersion: declared, version: detectVersion(declared, ctx.sawImpossible), examples}
}

/** "1.1" → v1.1; "v2.0"/"2.0" → v2.0; otherwise v2.0 iff some question has `is_impossible`. */
export function detectVersion(declared: string | null, sawImpossible: boolean): SquadVersion {
  const v = declared?.replace(/^v/i, '')
  if (v === '1.1' || v === '1.0') return '1.1'
  if (v === '2.0') return '2.0'
  return sawImpossible ? '2.0' : '1.1'
}

/** While reading: how to word a shape error, and whether some question has `is_impossible`. */
interface Ctx {
  bad: (where: string, what: string) => SpanError
  sawImpossible: boolean
}

function readParagraph(p: unknown, where: string, title: string, ctx: Ctx): SquadExample[] {
  if (!isObject(p)) throw ctx.bad(where, 'is not an object')
  if (typeof p.context !== 'string') throw ctx.bad(where, 'has no "context" string')
  if (!Array.isArray(p.qas)) throw ctx.bad(where, 'has no "qas" list')
  const context = p.context
  return p.qas.map((qa, j) => readQuestion(qa, `${where}.qas[${j}]`, title, context, ctx))
}

function readQuestion(qa: unknown, where: string, title: string, context: string, ctx: Ctx): SquadExample {
  const bad = ctx.bad
  if (!isObject(qa)) throw bad(where, 'is not an object')
  if (typeof qa.id !== 'string') throw bad(where, 'has no "id" string')
  if (typeof qa.question !== 'string') throw bad(`${where} (question ${qa.id})`, 'has no "question" string')
  if (!Array.isArray(qa.answers)) throw bad(`${where} (question ${qa.id})`, 'has no "answers" list')
  if (qa.is_impossible !== undefined && typeof qa.is_impossible !== 'boolean') throw bad(`${where} (question ${qa.id})`, '"is_impossible" is not a boolean')
  const answers = qa.answers.map((a, k): SquadAnswer => {
    if (!isObject(a) || typeof a.text !== 'string') throw bad(`${where}.answers[${k}] (question ${qa.id})`, 'has no "text" string')
    if (!Number.isInteger(a.answer_start) || (a.answer_start as number) < 0) throw bad(`${where}.answers[${k}] (question ${qa.id})`, 'has no "answer_start" integer ≥ 0')
    return {text: a.text, start: a.answer_start as number}
  })
  if (qa.is_impossible !== undefined) ctx.sawImpossible = true
  return {id: qa.id, title, question: qa.question, context, answers, isImpossible: qa.is_impossible === true}
}

/** Each answer's text must be the context's code points [answer_start, answer_start + len(text)). */
export function checkAnswerOffsets(ex: SquadExample, source: string): void {
  const chars = Array.from(ex.context)
  ex.answers.forEach((a, k) => {
    const len = Array.from(a.text).length
    const found = chars.slice(a.start, a.start + len).join('')
    if (found !== a.text) {
      throw errorIn(source, `question ${ex.id}: answer ${k} ${JSON.stringify(a.text)} is not at answer_start ${a.start} of its context (found ${JSON.stringify(found)})`)
    }
  })
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x)
}
