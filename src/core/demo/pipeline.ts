import {spawn} from 'node:child_process'
import {createWriteStream} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {SpanError} from '../stream/errors.js'

/** bin/run.js of this installation: the demo runs the real commands, as a user would. */
export const RUN_JS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bin', 'run.js')

/** A stage of a pipeline: the span sub-command and its arguments. */
export type Stage = string[]

/** Shows a pipeline the way a user would type it. */
export function describePipeline(stages: Stage[], out?: string): string {
  const quote = (a: string) => (/^[\w./=,:-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)
  const text = stages.map((s) => ['span', ...s].map(quote).join(' ')).join(' | ')
  return out ? `${text} > ${out}` : text
}

/**
 * Runs `span a | span b | …` as real processes joined by pipes, stdout of the last into `out`
 * (a file) or collected and returned. stderr of every stage goes to ours.
 */
export async function runPipeline(stages: Stage[], out?: string): Promise<string> {
  const procs = stages.map((args) => spawn(process.execPath, [RUN_JS, ...args], {stdio: ['pipe', 'pipe', 'inherit']}))
  procs[0].stdin.end()
  for (let i = 1; i < procs.length; i++) procs[i - 1].stdout.pipe(procs[i].stdin)
  const last = procs.at(-1)!
  const chunks: Buffer[] = []
  const file = out ? last.stdout.pipe(createWriteStream(out)) : null
  if (!file) last.stdout.on('data', (c: Buffer) => chunks.push(c))
  const written = file ? new Promise<void>((resolve, reject) => file.on('close', resolve).on('error', reject)) : Promise.resolve()
  const codes = await Promise.all(procs.map((p) => new Promise<number>((resolve) => p.on('close', (code) => resolve(code ?? 1)))))
  await written // the file is complete before anyone reads it
  const failed = codes.findIndex((c) => c !== 0)
  if (failed >= 0) throw new SpanError(`demo: \`span ${stages[failed][0]}\` failed (exit ${codes[failed]})`)
  return Buffer.concat(chunks).toString('utf8')
}
