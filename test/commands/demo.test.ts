// `span demo` as a user runs it (bin/run.js; dist/ must be built), without QA: its default
// pre-training and era task (about 45 s of CPU on 2 cores), so that the test sees the table the
// README promises: the tiny model beating the majority class on held-out sentences at the demo's
// seed (73.0% at seed 1; 81.5% and 77.5% at seeds 2 and 3).
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {describePipeline} from '../../src/core/demo/pipeline.js'
import {dataStages, demoFiles, eraStages, pretrainStage, squadStages, type DemoOptions} from '../../src/core/demo/plan.js'

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
    const e = eraStages(f, OPTS)
    expect(e.finetune.join(' ')).toBe(
      'finetune glue --task sst2 --init /d/model --train /d/era-train.tsv --out /d/era-model --backend auto --max-len 64 --epochs 3 --batch-size 32 --lr 1e-3 --seed 1 --log-every 10',
    )
    expect(e.evaluate.join(' ')).toBe('eval glue --task sst2 --gold /d/era-dev.tsv --pred /d/era-pred.tsv --json')
    expect(Object.values(f).every((p) => p.startsWith('/d'))).toBe(true)
  })

  it('shows the inspect report, the curves and a results table, and keeps the metrics and charts in --dir', () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'span-demo-')), 'out')
    const r = spawnSync(process.execPath, [join(root, 'bin', 'run.js'), 'demo', '--dir', dir, '--qa-epochs', '0'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 600_000,
    })
    expect(r.status).toBe(0)
    expect(r.stderr).toContain(`$ span pretrain ${join(dir, 'pretrain-train.ndjson')} --preset tiny`)
    expect(r.stderr).toContain(`> ${join(dir, 'pretrain-metrics.ndjson')}\n`)
    expect(r.stdout).toContain('span length in words: observed vs theoretical')
    expect(r.stdout).toContain('\npre-training  (pretrain-metrics.ndjson; drawn to pretrain-curves.svg)\n  Loss\n')
    expect(r.stdout).toMatch(
      /\nresults\n {2}stage +run +result +time\n {2}pre-training \(MLM \+ SBO\) +tiny, 200 steps +loss [\d.]+, held-out [\d.]+ +[\dm .]+s\n {2}before or after 1910\? +3 epochs, \d+ steps +dev accuracy [\d.]+% \(majority class 50\.0%\) +[\dm .]+s\n {2}whole demo +[\dm .]+s\n/,
    )
    // pre-training's held-out masked tokens, between a uniform guess and token frequencies on the same targets
    expect(r.stdout).toMatch(
      /\npre-training, held out: the \d+ masked tokens of the 20 held-out examples after 200 steps\n +uniform guess +tiny model +token frequencies\n( +cross-entropy +accuracy){3}\n {2}masked tokens \(MLM head\)( +[\d.]+ +[\d.]+%){3}\n {2}from span boundaries \(SBO head\)( +[\d.]+ +[\d.]+%){3}\n/,
    )
    // the last table: what the model learned, beside the majority class it beats
    const last =
      /\n(what the tiny model learned: was a sentence spoken before 1910 or after\? \((\d+) sentences of the 1862 address, \2 of the end of the 2016 one; neither run saw them\)\n {4,}dev accuracy\n {2}majority class \(the trivial baseline\) +50\.0% +(\d+) of (\d+)\n {2}tiny model, pre-trained then fine-tuned +3 epochs +([\d.]+)% +(\d+) of \4\n.*\n.*\n)$/.exec(
        r.stdout,
      )
    expect(last).not.toBeNull()
    const [, , perEra, half, n, acc, right] = last!
    expect([Number(n), Number(half)]).toEqual([2 * Number(perEra), Number(perEra)])
    expect(Number(acc)).toBeGreaterThan(60) // beats the majority class's 50% by a margin at the demo's seed
    expect(Number(right)).toBe(Math.round((Number(acc) / 100) * Number(n)))
    expect(JSON.parse(readFileSync(join(dir, 'era-eval.json'), 'utf8')).acc).toBeCloseTo(Number(acc) / 100, 3)
    expect(r.stdout.indexOf('what the tiny model learned')).toBeGreaterThan(r.stdout.indexOf('pre-training, held out'))
    expect(r.stdout).toContain(`files in ${dir}: metrics pretrain-metrics.ndjson, era-metrics.ndjson; charts span-lengths.svg, pretrain-curves.svg;`)
    expect(r.stdout).not.toMatch(/^\{/m) // no metrics line on the terminal
    expect(r.stdout + r.stderr).not.toContain('SPEC')
    const metrics = readFileSync(join(dir, 'pretrain-metrics.ndjson'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(metrics.filter((m) => m.split === 'eval').map((m) => m.step)).toEqual([50, 100, 150, 200])
    expect(readFileSync(join(dir, 'pretrain-curves.svg'), 'utf8')).toContain('span demo: pre-training (tiny, MLM + SBO)')
    expect(existsSync(join(dir, 'squad-metrics.ndjson'))).toBe(false)
  })
})
