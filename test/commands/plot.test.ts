// `span plot` in-process through oclif (dist/ and the manifest must be built).
import {runCommand} from '@oclif/test'
import {existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

const root = join(__dirname, '..', '..')
const tmp = mkdtempSync(join(tmpdir(), 'span-plot-cmd-'))
const run = (args: string[]) => runCommand(args, {root})

afterEach(() => {
  process.exitCode = undefined // a failing command sets it; the test runner must not inherit it
})

/** A fine-tuning run's metrics as span finetune squad writes them. */
const SQUAD = [
  {step: 10, epoch: 1, loss: 4.2, lr: 9e-4},
  {step: 24, epoch: 1, loss: 3.1, lr: 7e-4},
  {split: 'dev', epoch: 1, step: 24, exact: 5, f1: 12.5, best: true},
  {step: 40, epoch: 2, loss: 2.4, lr: 4e-4},
  {step: 48, epoch: 2, loss: 2.3, lr: 3e-4},
  {split: 'dev', epoch: 2, step: 48, exact: 10, f1: 20, best: true},
]
const metrics = join(tmp, 'metrics.ndjson')
writeFileSync(metrics, SQUAD.map((r) => JSON.stringify(r)).join('\n') + '\n')

describe('span plot (in-process)', () => {
  it('draws the loss and the dev scores as text on stdout', async () => {
    const {stdout, stderr, error} = await run(['plot', metrics, '--width', '30', '--height', '6'])
    expect(error).toBeUndefined()
    expect(stderr).toBe('')
    const lines = stdout.trimEnd().split('\n')
    expect(lines[0]).toBe('  Loss')
    expect(lines).toContain('  Evaluation (dev)')
    expect(lines).toContain('  • loss 2.3')
    expect(lines).toContain('  • dev exact 10   × dev f1 20')
    expect(lines.filter((l) => l.includes('┤') || l.includes('│'))).toHaveLength(12) // two panels of 6 rows
  })

  it('writes the SVG with --svg and nothing on stdout', async () => {
    const svg = join(tmp, 'curves.svg')
    const {stdout, stderr, error} = await run(['plot', metrics, '--svg', svg])
    expect([error, stdout, stderr]).toEqual([undefined, '', ''])
    const text = readFileSync(svg, 'utf8')
    expect(text).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n<svg /)
    expect(text).toContain('metrics.ndjson · 6 records · 3 curves · steps 10–48')
    expect(text.match(/<polyline /g)).toHaveLength(3)
    expect(readdirSync(tmp).filter((f) => f.includes('.tmp-'))).toEqual([])
  })

  it('stops at the first bad line with source:line, exit 1, and leaves no SVG', async () => {
    const bad = join(tmp, 'bad.ndjson')
    writeFileSync(bad, `${JSON.stringify(SQUAD[0])}\n${JSON.stringify(SQUAD[1])}\n{"step": 30, "loss": 2.9\n`)
    const svg = join(tmp, 'bad.svg')
    const {stdout, stderr} = await run(['plot', bad, '--svg', svg])
    expect(stdout).toBe('')
    expect(stderr).toMatch(new RegExp(`^span plot: ${bad.replace(/[.\\/]/g, '\\$&')}:3: invalid JSON: .*\\n$`))
    expect(process.exitCode).toBe(1)
    expect(existsSync(svg)).toBe(false)
  })

  it("refuses a file that is not a training run's metrics", async () => {
    const blocks = join(tmp, 'blocks.ndjson')
    writeFileSync(blocks, '{"span":"header","kind":"blocks"}\n{"doc":0,"ids":[2,5,3]}\n')
    const {stderr} = await run(['plot', blocks])
    expect(stderr).toBe(
      `span plot: ${blocks}:2: expected a metrics record with an integer "step" ≥ 0 (from span pretrain or span finetune), got a record without "step"\n`,
    )
    expect(process.exitCode).toBe(1)
  })

  it('refuses an --svg path it cannot write, and a missing input', async () => {
    const where = join(tmp, 'no', 'such', 'c.svg')
    const r = await run(['plot', metrics, '--svg', where])
    expect(r.stderr).toBe(`span plot: --svg ${where}: cannot write there (no such directory)\n`)
    expect(process.exitCode).toBe(1)
    process.exitCode = undefined
    const missing = await run(['plot', join(tmp, 'nothing.ndjson')])
    expect(missing.stderr).toBe(`span plot: ${join(tmp, 'nothing.ndjson')}: no such file\n`)
    expect(process.exitCode).toBe(1)
  })
})
