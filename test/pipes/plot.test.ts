// Real pipes: `span pretrain … | span plot`, bin/run.js processes joined by a shell (dist/ built).
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {writeBlocks} from '../core/train/helpers.js'

const root = join(__dirname, '..', '..')
const span = `node ${join(root, 'bin', 'run.js')}`
const tmp = mkdtempSync(join(tmpdir(), 'span-plot-pipe-'))
const train = join(tmp, 'train.ndjson')
const dev = join(tmp, 'dev.ndjson')
const TINY = '--preset tiny --layers 1 --hidden 16 --heads 2 --batch-size 2 --backend wasm --seed 4 --lr 1e-3'

function sh(script: string) {
  const r = spawnSync('bash', ['-c', `set -o pipefail; ${script}`], {cwd: tmp, encoding: 'utf8', maxBuffer: 1 << 26})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}

beforeAll(() => {
  writeBlocks(train, 16, 1)
  writeBlocks(dev, 4, 2)
})

describe('span pretrain | span plot', () => {
  it('draws the training and held-out losses of a real run, as text and as SVG', () => {
    const pretrain = `${span} pretrain ${train} ${TINY} --max-steps 6 --log-every 2 --eval ${dev} --eval-every 3 --out ${join(tmp, 'm')} 2>/dev/null`
    const text = sh(`${pretrain} | tee metrics.ndjson | ${span} plot --width 30 --height 5`)
    expect(text.stderr).toBe('')
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^ {2}Loss\n/)
    expect(text.stdout).toMatch(/\n {2}• loss [\d.]+ {3}× mlm_loss [\d.]+ {3}\+ sbo_loss [\d.]+ {3}o eval loss [\d.]+\n/)
    expect(text.stdout).toContain('\n  Evaluation (eval)\n')
    const svg = sh(`${span} plot --svg curves.svg < metrics.ndjson`)
    expect([svg.code, svg.stdout, svg.stderr]).toEqual([0, '', ''])
    const doc = readFileSync(join(tmp, 'curves.svg'), 'utf8')
    expect(doc).toContain('stdin · 6 records · 8 curves · steps 2–6')
  })

  it('fails with source:line and a non-zero status when the stream is cut mid-record', () => {
    const r = sh(`printf '{"step":1,"loss":2}\\n{"step":2,"lo' | ${span} plot`)
    expect(r.code).toBe(1)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^span plot: stdin:2: invalid JSON: .*\n$/)
  })
})
