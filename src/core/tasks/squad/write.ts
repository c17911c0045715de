/**
 * The output files of run_squad's write_predictions: predictions.json ({id: text}),
 * nbest_predictions.json ({id: [entries]}) and, for v2.0, null_odds.json ({id: score diff}).
 * Each is written to a temporary name and renamed, so a file is either whole or absent.
 */
import {rename, rm, writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {fsyncPath} from '../../util/atomic.js'
import {outputTarget} from '../../util/target.js'
import type {NbestEntry, QuestionPrediction} from './decode.js'

/** Writes JSON (indent 4, as run_squad) to `path` through a temporary file in the same folder. */
export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  const target = await outputTarget(path, (base) => `${base}.tmp-${process.pid}`)
  const tmp = target.direct ? null : target.tmp
  try {
    await writeFile(tmp ?? target.path, JSON.stringify(value, null, 4) + '\n')
    if (!tmp) return
    await fsyncPath(tmp) // whole on disk before it takes the name
    await rename(tmp, target.path)
  } catch (err) {
    if (tmp) await rm(tmp, {force: true})
    throw err
  }
}

export interface SquadOutputs {
  predictions: Record<string, string>
  nbest: Record<string, NbestEntry[]>
  /** present when the predictions came from a v2.0 decoding */
  nullOdds?: Record<string, number>
}

/** Collects question predictions (in dataset order) into the three files' objects. */
export function collectOutputs(preds: QuestionPrediction[]): SquadOutputs {
  const out: SquadOutputs = {predictions: {}, nbest: {}}
  for (const p of preds) {
    out.predictions[p.qid] = p.text
    out.nbest[p.qid] = p.nbest
    if (p.nullOdds !== undefined) (out.nullOdds ??= {})[p.qid] = p.nullOdds
  }
  return out
}

/** Writes predictions.json, nbest_predictions.json and (v2.0) null_odds.json into `dir`; returns their paths. */
export async function writeSquadOutputs(dir: string, out: SquadOutputs): Promise<string[]> {
  const files: [string, unknown][] = [['predictions.json', out.predictions], ['nbest_predictions.json', out.nbest]]
  if (out.nullOdds) files.push(['null_odds.json', out.nullOdds])
  const paths = files.map(([name]) => join(dir, name))
  await Promise.all(files.map(([, value], i) => writeJsonAtomic(paths[i], value)))
  return paths
}
