/**
 * Output of the SQuAD scorers: the exact text the official scripts print (Python's json.dumps,
 * floats as repr() writes them) and a readable table.
 */
import type {SquadV1Result, SquadV2Result} from './squad.js'

/** Python repr() of a float: shortest round-trip digits, '.0' on integers, exponent outside [1e-4, 1e16). */
export function pyFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN'
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity'
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0'
  const [mant, expPart] = Math.abs(x).toExponential().split('e')
  const digits = mant.replace('.', '')
  const exp = Number(expPart)
  const sign = x < 0 ? '-' : ''
  const decpt = exp + 1 // x = 0.digits × 10^decpt
  if (decpt <= -4 || decpt > 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits
    return `${sign}${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`
  }
  if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`
  if (decpt >= digits.length) return `${sign}${digits}${'0'.repeat(decpt - digits.length)}.0`
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`
}

/** Keys the official scripts write as Python ints (the counts); every other value is a float. */
const INT_KEYS = new Set(['total', 'HasAns_total', 'NoAns_total'])

function pyValue(key: string, v: number): string {
  return INT_KEYS.has(key) ? String(v) : pyFloat(v)
}

/** evaluate-v1.1.py's output line: print(json.dumps(evaluate(...))). */
export function formatV1Json(r: SquadV1Result): string {
  return `{"exact_match": ${pyFloat(r.exact_match)}, "f1": ${pyFloat(r.f1)}}\n`
}

/** evaluate-v2.0.py's output: print(json.dumps(out_eval, indent=2)). */
export function formatV2Json(r: SquadV2Result): string {
  const lines = Object.entries(r).map(([k, v]) => `  ${JSON.stringify(k)}: ${pyValue(k, v)}`)
  return `{\n${lines.join(',\n')}\n}\n`
}

const pct = (x: number) => x.toFixed(2).padStart(8)

/** A readable summary of a v1.1 result. */
export function formatV1Table(r: SquadV1Result, total: number): string {
  return `SQuAD v1.1  ${total} questions\n  exact match ${pct(r.exact_match)}\n  F1          ${pct(r.f1)}\n`
}

/** A readable summary of a v2.0 result: all / HasAns / NoAns rows, then the best thresholds. */
export function formatV2Table(r: SquadV2Result): string {
  const rows = [['all', ''], ['HasAns', 'HasAns_'], ['NoAns', 'NoAns_']].filter(([, p]) => r[`${p}total`] !== undefined)
  const out = [`SQuAD v2.0  ${r.total} questions`, `  ${''.padEnd(10)}${'exact'.padStart(8)} ${'F1'.padStart(8)} ${'total'.padStart(7)}`]
  for (const [name, p] of rows) out.push(`  ${name.padEnd(10)}${pct(r[`${p}exact`])} ${pct(r[`${p}f1`])} ${String(r[`${p}total`]).padStart(7)}`)
  if (r.best_exact !== undefined) {
    out.push(`  ${'best exact'.padEnd(10)}${pct(r.best_exact)}  at na-prob threshold ${pyFloat(r.best_exact_thresh)}`)
    out.push(`  ${'best F1'.padEnd(10)}${pct(r.best_f1)}  at na-prob threshold ${pyFloat(r.best_f1_thresh)}`)
  }
  return out.join('\n') + '\n'
}
