// tools/check-spread.mjs (issue 36, cause 1): a spread argument over data fails `npm run lint`.
import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
// @ts-expect-error: a plain .mjs tool without types
import {spreadCalls} from '../../tools/check-spread.mjs'
import {maxOf, minOf, pushAll} from '../../src/core/util/arrays.js'

const found = (text: string, path = 'x.ts') => (spreadCalls(path, text) as [number, string][]).map(([line]) => line)

describe('check-spread', () => {
  it('finds spreads in the arguments of calls and new, in TypeScript and JavaScript', () => {
    expect(found('const m = Math.max(...xs)\nout.push(a, ...ids)\nconst s = String.fromCharCode(...codes)\n')).toEqual([1, 2, 3])
    expect(found('new Foo(...args)\nf(\n  1,\n  ...rest,\n)\n', 'x.mjs')).toEqual([1, 4])
  })

  it('leaves array and object literals alone, and a spread marked bounded', () => {
    expect(found('const a = [...xs]\nconst s = new Set([...xs])\nconst o = {...p}\nfunction f(...r: number[]) {}\n')).toEqual([])
    expect(found('// spread-ok: three tensors\nf(...t)\ng(...u) // spread-ok: a row\nh(...v) // spread-ok:\n')).toEqual([4])
  })

  it('passes on the code base (npm run lint runs it)', () => {
    const r = spawnSync(process.execPath, [join(import.meta.dirname, '..', '..', 'tools', 'check-spread.mjs')], {encoding: 'utf8'})
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
  })
})

describe('maxOf, minOf, pushAll over arrays past the call stack', () => {
  const big = Array.from({length: 300_000}, (_, i) => (i * 7919) % 300_007)
  it('agree with Math.max/min where those work and do not overflow where they do', () => {
    expect(() => Math.max(...big)).toThrow(RangeError)
    expect(maxOf(big)).toBe(big.reduce((m, x) => Math.max(m, x)))
    expect(minOf(big)).toBe(0)
    expect([maxOf([]), minOf([]), maxOf([], 1), maxOf([1, NaN]), minOf(new Set([3, 2]).values())]).toEqual([-Infinity, Infinity, 1, NaN, 2])
    expect(pushAll([1], big, [2]).length).toBe(300_002)
  })
})
