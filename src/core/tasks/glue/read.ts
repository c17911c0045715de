/**
 * Readers of GLUE task files (train/dev with labels, test without), one example per row.
 * Errors are one line, `file:line: ...` (docs/formats.md#conventions).
 */
import {errorAt} from '../../stream/errors.js'
import {readLines, type Line, type Source} from '../../stream/lines.js'
import {labelProblem, type GlueTask} from './tasks.js'

export interface GlueExample {
  /** The file's index/id column when it has one, else the 0-based row number among data rows. */
  index: string
  a: string
  b: string | null
  /** The label string as in the file (the score text for STS-B); null in test files. */
  label: string | null
  line: number
}

/** Where the fields of a row are; -1 for absent. */
interface Layout {
  width: number
  index: number
  a: number
  b: number
  label: number
}

/** CoLA train/dev: no header; source, label, original mark, sentence. */
const COLA_RAW: Layout = {width: 4, index: -1, a: 3, b: -1, label: 1}

const BOM = '\uFEFF'

/** The examples of a task file, with every row's width and label checked. */
export async function* readGlue(src: Source, task: GlueTask): AsyncGenerator<GlueExample> {
  let layout: Layout | null = null
  let row = 0
  for await (const line of readLines(src)) {
    const text = line.no === 1 && line.text.startsWith(BOM) ? line.text.slice(1) : line.text
    if (layout === null) {
      layout = task.name === 'CoLA' && text !== 'index\tsentence' ? COLA_RAW : headerLayout(task, text, src.name)
      if (layout !== COLA_RAW) continue
    }
    yield toExample(task, layout, {text, no: line.no}, row++, src.name)
  }
  if (layout === null) throw errorAt(src.name, 1, `empty ${task.name} file`)
}

/** Finds the task's columns in a header line; a test file is one without the label column. */
export function headerLayout(task: GlueTask, text: string, source: string): Layout {
  const names = text.split('\t')
  const find = (name: string | null) => (name === null ? -1 : names.indexOf(name))
  const missing = [task.a, task.b].filter((n): n is string => n !== null && find(n) < 0)
  if (missing.length > 0) {
    const want = missing.map((n) => JSON.stringify(n)).join(' and ')
    throw errorAt(source, 1, `not a ${task.name} file: the header has no ${want} column (got ${JSON.stringify(text.slice(0, 120))})`)
  }
  const index = task.index.map(find).find((i) => i >= 0) ?? -1
  // MNLI's label1..label5 precede gold_label: the label is found by name, the last match.
  const label = names.lastIndexOf(task.label)
  return {width: names.length, index, a: find(task.a), b: find(task.b), label}
}

function toExample(task: GlueTask, layout: Layout, line: Line, row: number, source: string): GlueExample {
  const f = line.text.split('\t')
  if (f.length !== layout.width) {
    throw errorAt(source, line.no, `expected ${layout.width} tab-separated columns for ${task.name}, got ${f.length}`)
  }
  const label = layout.label >= 0 ? f[layout.label] : null
  if (label !== null) {
    const problem = labelProblem(task, label)
    if (problem) throw errorAt(source, line.no, problem)
  }
  const index = layout.index >= 0 ? f[layout.index] : String(row)
  if (index === '') throw errorAt(source, line.no, 'empty index')
  return {index, a: f[layout.a], b: layout.b >= 0 ? f[layout.b] : null, label, line: line.no}
}

/** All examples of a file, and whether it has labels (train/dev) or not (test). */
export async function readGlueFile(src: Source, task: GlueTask): Promise<{examples: GlueExample[]; labeled: boolean}> {
  const examples: GlueExample[] = []
  for await (const ex of readGlue(src, task)) examples.push(ex)
  return {examples, labeled: examples.length > 0 && examples[0].label !== null}
}
