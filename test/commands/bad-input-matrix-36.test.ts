// The bad-input matrix, its part that spans the families: issue 36's long, empty and inconsistent
// inputs (test/commands/issue36-cases.ts) on the matrix's checkpoints, and usage errors (exit 2)
// everywhere; and that the family files (bad-input-matrix-FAMILY.test.ts) together take every
// command of the table once. The table and the shared folder: test/helpers/bad-input-matrix.ts.
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {BIN, COMMANDS, FAMILIES, matrixFolder, shellTimed} from '../helpers/bad-input-matrix.js'
import {pool, spanAsync} from '../helpers/spawn.js'
import {jobs36, prepare36} from './issue36-cases.js'

let tmp = ''
beforeAll(() => {
  tmp = matrixFolder(false).tmp // no full disk among these cases
})
const run = (args: string[]) => spanAsync(args, tmp)

describe('the bad-input matrix', () => {
  it('its command families take every command of the table exactly once', () => {
    const cmds = Object.keys(COMMANDS)
    const taken = cmds.map((cmd) => Object.keys(FAMILIES).filter((f) => FAMILIES[f](cmd)))
    expect(taken.filter((fs) => fs.length !== 1)).toEqual([])
    expect(cmds.length).toBe(37)
  })

  it('issue 36: long, empty and inconsistent inputs, models of another task, contradictory flags', async () => {
    prepare36(tmp)
    const jobs = jobs36(`'${process.execPath}' '${BIN}'`, COMMANDS, tmp)
    const results = await pool(
      jobs.map((j) => () => shellTimed(j.line, 300_000, tmp)),
      2,
    )
    const bad = results.flatMap((r, i) => {
      const why = jobs[i].check(r)
      return why ? [`${jobs[i].name}: ${why}; exit ${r.code}, stderr ${JSON.stringify(r.stderr.slice(-300))}`] : []
    })
    expect(bad).toEqual([])
    console.log(`bad-input matrix, issue 36: ${jobs.length} cases`)
  }, 1_800_000)

  it("usage errors exit 2 everywhere, in one line: oclif's integer flags and span's own number flags alike", async () => {
    const cases = [
      ['mask', '--p', '1.5'],
      ['block', '--len', '1'],
      ['tokenize', '--bogus'],
      ['pretrain', '--lr', 'x', '--out', 'o'],
      ['mask', '--ratio', '2'],
      ['tag', '--model', 'ft-ner', '--batch-size', '0'],
    ]
    const rs = await pool(
      cases.map((a) => () => run(a)),
      2,
    )
    rs.forEach((r, i) => {
      expect(r.code, cases[i].join(' ')).toBe(2)
      expect(r.stderr).toMatch(new RegExp(`^span ${cases[i][0]}: (--\\S+: expected .*\\(--\\S+ .*\\)|unknown flag .*)\\n$`))
    })
    expect(existsSync(join(tmp, 'o'))).toBe(false)
  })
})
