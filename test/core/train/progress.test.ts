import {describe, expect, it} from 'vitest'
import {LONG_RUN_HINT, speedNote} from '../../../src/core/train/progress.js'

describe('speedNote', () => {
  it('says the time of 1000 steps once, from the second step when the first was quick', () => {
    const lines: string[] = []
    const note = speedNote((l) => lines.push(l), 100, 'backend native')
    note.step(0.5)
    expect(lines).toEqual([])
    note.step(0.5)
    note.step(0.5)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/^1000 steps take about .* measured on step 2 of this run\); the 100 steps to go about /)
  })

  it('adds what a first run that ends today looks like when the steps left outlast a day (base on a CPU)', () => {
    const lines: string[] = []
    const note = speedNote((l) => lines.push(l), 2_400_000, 'backend native')
    note.step(300) // a slow first step is measured at once
    expect(lines).toEqual([expect.stringMatching(/the 2,400,000 steps to go about/), LONG_RUN_HINT])
    expect(LONG_RUN_HINT).toMatch(/--preset tiny --max-steps 2000/)
  })

  it('says nothing more for a run of less than a day', () => {
    const lines: string[] = []
    const note = speedNote((l) => lines.push(l), 1000, 'backend native')
    note.step(30)
    expect(lines).toHaveLength(1)
  })
})
