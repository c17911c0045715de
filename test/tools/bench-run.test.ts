import {describe, expect, it} from 'vitest'
import {ROOT, runShell} from '../helpers/spawn.js'

// bench/run.js (`npm run bench -- NAME`): a benchmark's own name runs that one only (vs-torch is
// not vs-torch-gpu, which fails at once without a GPU), any other name every benchmark it begins.
const chosen = (names: string): string[] => {
  const r = runShell(`node bench/run.js --list ${names}`, {cwd: ROOT})
  expect(r.code, r.stderr).toBe(0)
  return r.stdout.trim().split('\n')
}

describe('bench/run.js name matching', () => {
  it('takes the exact name alone, with or without .mjs', () => {
    expect(chosen('vs-torch')).toEqual(['vs-torch.mjs'])
    expect(chosen('vs-torch.mjs')).toEqual(['vs-torch.mjs'])
    expect(chosen('vs-torch-gpu')).toEqual(['vs-torch-gpu.mjs'])
  })

  it('takes every benchmark a prefix begins, and several names', () => {
    // (benchmarks added later may join a prefix: only those that exist now are named)
    const coref = chosen('coref')
    expect(coref).toEqual(expect.arrayContaining(['coref-baseline.mjs', 'coref-learning.mjs', 'coref-memory.mjs']))
    expect(coref.every((f) => f.startsWith('coref'))).toBe(true)
    const two = chosen('vs- tokenize')
    expect(two).toEqual(expect.arrayContaining(['tokenize.mjs', 'vs-torch-gpu.mjs', 'vs-torch.mjs']))
    expect(two.every((f) => f.startsWith('vs-') || f === 'tokenize.mjs')).toBe(true)
  })

  it('exits 2 naming the benchmarks when nothing matches', () => {
    const r = runShell('node bench/run.js --list no-such-bench', {cwd: ROOT})
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/^no benchmark matches no-such-bench; have: /)
  })
})
