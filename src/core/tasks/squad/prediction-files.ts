/**
 * The files `span eval squad` scores: predictions.json ({id: text}) and a v2.0 na-prob file
 * ({id: number}, e.g. null_odds.json), read into Maps in file order.
 */
import {errorIn} from '../../util/errors.js'
import {objectKeysInFileOrder, parseJsonText, readTextFile} from './json.js'

/** A JSON file holding one object, with its keys in file order. */
function readObjectFile(path: string, what: string): {obj: Record<string, unknown>; keys: string[]} {
  const text = readTextFile(path, 'predictions')
  const json = parseJsonText(text, path)
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw errorIn(path, `${what} must be one JSON object {"question id": ...}`)
  return {obj: json as Record<string, unknown>, keys: objectKeysInFileOrder(text.replace(/^\ufeff/, ''))}
}

/** predictions.json: every value a string (the answer, "" for no answer). */
export function readPredictionsFile(path: string): Map<string, string> {
  const {obj, keys} = readObjectFile(path, 'predictions')
  const out = new Map<string, string>()
  for (const k of keys) {
    const v = obj[k]
    if (typeof v !== 'string') throw errorIn(path, `the prediction for ${k} is not a string (${JSON.stringify(v)})`)
    out.set(k, v)
  }
  return out
}

/** A na-prob file: every value a number; the order is the file's (find_best_thresh's ties depend on it). */
export function readNaProbsFile(path: string): Map<string, number> {
  const {obj, keys} = readObjectFile(path, 'na-probs')
  const out = new Map<string, number>()
  for (const k of keys) {
    const v = obj[k]
    if (typeof v !== 'number') throw errorIn(path, `the na-prob of ${k} is not a number (${JSON.stringify(v)})`)
    out.set(k, v)
  }
  return out
}

/** Dataset ids without a prediction, and predicted ids the dataset does not have (both in order). */
export function matchIds(questionIds: string[], keys: Iterable<string>): {missing: string[]; unknown: string[]} {
  const asked = new Set(questionIds)
  const given = new Set(keys)
  return {missing: [...asked].filter((id) => !given.has(id)), unknown: [...given].filter((id) => !asked.has(id))}
}

/** "what: N (e.g. a, b, c, …)" for warnings. */
export function describeIds(ids: string[], what: string, shown = 3): string {
  const eg = ids.slice(0, shown).join(', ') + (ids.length > shown ? ', …' : '')
  return `${what}: ${ids.length} (e.g. ${eg})`
}
