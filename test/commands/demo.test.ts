// `span demo` as a user runs it (bin/run.js; dist/ must be built), shortened: 2 pre-training
// steps and no QA, so it takes seconds. The full demo (README.md, "span demo") runs the same code.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {describePipeline} from '../../src/core/demo/pipeline.js'
import {dataStages, demoFiles, pretrainStage, squadStages, type DemoOptions} from '../../src/core/demo/plan.js'

const root = join(import.meta.dirname, '..', '..')
const OPTS: DemoOptions = {seed: 1, len: 128, steps: 200, epochs: 1, eraEpochs: 3, backend: 'auto'}

describe('span demo', () => {
  it('plans the commands the README shows, every file in its folder', () => {
    const f = demoFiles('/d')
    expect(describePipeline(dataStages(OPTS), f.masked)).toMatch(
      /^span tokenize --vocab \S+vocab\.txt \S+corpus\.txt \| span block --len 128 \| span mask --scheme span --p 0\.2 --seed 1 > \/d\/train\.ndjson$/,
    )
    expect(pretrainStage(f, OPTS).join(' ')).toBe(
      'pretrain /d/pretrain-train.ndjson --preset tiny --backend auto --max-steps 200 --batch-size 8 --lr 1e-3 --warmup 20 --log-every 50 --eval /d/pretrain-eval.ndjson --eval-every 50 --out /d/model',
    )
    const s = squadStages(f, OPTS)
    expect(s.finetune.slice(0, 4)).toEqual(['finetune', 'squad', '--init', '/d/model'])
    expect(s.evaluate.at(-1)).toBe('--json')
    expect(Object.values(f).every((p) => p.startsWith('/d'))).toBe(true)
  })

  it('shows the inspect report, the curves and a results table, and keeps the metrics and charts in --dir', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'span-demo-')), 'out')
    const r = spawnSync(process.execPath, [join(root, 'bin', 'run.js'), 'demo', '--dir', dir, '--steps', '2', '--qa-epochs', '0'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 300_000,
    })
    expect(r.status).toBe(0)
    expect(r.stderr).toContain(`$ span pretrain ${join(dir, 'pretrain-train.ndjson')} --preset tiny`)
    expect(r.stderr).toContain(`> ${join(dir, 'pretrain-metrics.ndjson')}\n`)
    expect(r.stdout).toContain('span length in words: observed vs theoretical')
    expect(r.stdout).toContain('\npre-training  (pretrain-metrics.ndjson; drawn to pretrain-curves.svg)\n  Loss\n')
    expect(r.stdout).toMatch(
      /\nresults\n {2}stage +run +result +time\n {2}pre-training \(MLM \+ SBO\) +tiny, 2 steps +loss [\d.]+, held-out [\d.]+ +[\d.]+s\n {2}whole demo +\S+\n/,
    )
    // the last table: what the model learned, between a uniform guess and token frequencies on the same held-out targets
    expect(r.stdout).toMatch(
      /\nwhat the tiny model learned in 2 steps: the \d+ masked tokens of the 20 held-out examples\n +uniform guess +tiny model +token frequencies\n( +cross-entropy +accuracy){3}\n {2}masked tokens \(MLM head\)( +[\d.]+ +[\d.]+%){3}\n {2}from span boundaries \(SBO head\)( +[\d.]+ +[\d.]+%){3}\n/,
    )
    expect(r.stdout.indexOf('what the tiny model learned')).toBeGreaterThan(r.stdout.indexOf('\nresults\n'))
    expect(r.stdout).toContain(`files in ${dir}: metrics pretrain-metrics.ndjson; charts span-lengths.svg, pretrain-curves.svg;`)
    expect(r.stdout).not.toMatch(/^\{/m) // no metrics line on the terminal
    expect(r.stdout + r.stderr).not.toContain('SPEC')
    const metrics = readFileSync(join(dir, 'pretrain-metrics.ndjson'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(metrics.filter((m) => m.split === 'eval').map((m) => m.step)).toEqual([1, 2])
    expect(readFileSync(join(dir, 'pretrain-curves.svg'), 'utf8')).toContain('span demo: pre-training (tiny, MLM + SBO)')
    expect(existsSync(join(dir, 'squad-metrics.ndjson'))).toBe(false)
  })
})
