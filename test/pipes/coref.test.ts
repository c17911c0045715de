// `span eval coref` as real bin/run.js processes in bash pipes (build first: npm run build):
// predictions from stdin (cat pred.conll | span eval coref --gold G --pred -) give the file's
// numbers; bad input in the pipe is one source:line line on stderr, exit 1; | head exits quietly.
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {BIN, ROOT, runShell} from '../helpers/spawn.js'

const span = `${process.execPath} ${BIN}`
const CASES = join(ROOT, 'fixtures', 'coref', 'cases')
const sh = (script: string) => runShell(`set -o pipefail; ${script}`, {cwd: CASES, timeout: 60_000})

describe('span eval coref in pipes', () => {
  it('reads the predictions from stdin as from the file', () => {
    const piped = sh(`cat random.response.conll | ${span} eval coref --gold random.key.conll --pred -`)
    const direct = sh(`${span} eval coref --gold random.key.conll --pred random.response.conll`)
    expect([piped.code, piped.stderr]).toEqual([0, ''])
    expect(piped.stdout).toBe(direct.stdout)
    expect(piped.stdout).toMatch(/\nCoNLL-2012 F1 \(mean of MUC, B-cubed and CEAFe F1\): [0-9.]+%\n$/)
  })

  it('--json from a pipe of several OntoGUM-layout documents', () => {
    const r = sh(`cat ontogum.response.conll | ${span} eval coref --gold ontogum.key.conll --pred - --json`)
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(JSON.parse(r.stdout)).toMatchObject({documents: 2, missing_documents: 0})
  })

  it('a bad line in the piped predictions: stdin:LINE, exit 1, nothing on stdout', () => {
    const r = sh(
      `sed 's/^d\\t0\\t4\\tdog\\t\\(.*\\)\\t1)$/d\\t0\\t4\\tdog\\t\\1\\t9)/' identical.response.conll | ${span} eval coref --gold identical.key.conll --pred -`,
    )
    expect([r.code, r.stdout]).toEqual([1, ''])
    expect(r.stderr).toBe("span eval coref: stdin:6: a mention of cluster 9 closes here ('9)') but none of cluster 9 is open\n")
  })

  it('| head ends quietly', () => {
    const r = sh(`${span} eval coref --gold random.key.conll --pred random.response.conll | head -2`)
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toBe('\nMETRIC muc:\n')
  })
})
