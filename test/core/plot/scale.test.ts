import {describe, expect, it} from 'vitest'
import {niceAxis, shortNumber, tickLabel} from '../../../src/core/plot/scale.js'

describe('niceAxis', () => {
  it('widens a range to round ticks', () => {
    expect(niceAxis(0.37, 9.8, 5)).toEqual({min: 0, max: 10, step: 2, ticks: [0, 2, 4, 6, 8, 10]})
    expect(niceAxis(6.4, 15.4, 4).ticks).toEqual([5, 7.5, 10, 12.5, 15, 17.5])
    expect(niceAxis(0.0288, 0.0589, 5).ticks).toEqual([0.02, 0.03, 0.04, 0.05, 0.06])
  })

  it('gives steps of at least 1 on an integer axis, and a span to a single value', () => {
    expect(niceAxis(1, 3, 8, true)).toMatchObject({min: 1, max: 3, step: 1})
    expect(niceAxis(7, 7, 4, true)).toMatchObject({min: 6, max: 8})
    expect(niceAxis(2, 2, 4)).toMatchObject({min: 1.8, max: 2.2})
    expect(niceAxis(0, 0, 4)).toMatchObject({min: -1, max: 1})
  })
})

describe('labels', () => {
  it('shows as many decimals as the step needs', () => {
    expect([tickLabel(0.25, 0.25), tickLabel(0.5, 0.25), tickLabel(7.5, 2.5), tickLabel(0.4, 0.2), tickLabel(2000, 500), tickLabel(0.06, 0.01)]).toEqual([
      '0.25',
      '0.50',
      '7.5',
      '0.4',
      '2,000',
      '0.06',
    ])
  })

  it('writes values to 4 significant figures', () => {
    expect([shortNumber(12.8599), shortNumber(0.038236), shortNumber(0), shortNumber(1e-5), shortNumber(3)]).toEqual(['12.86', '0.03824', '0', '1.00e-5', '3'])
  })
})
