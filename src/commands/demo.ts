import {Flags} from '@oclif/core'
import {existsSync} from 'node:fs'
import {mkdir, readFile, rm} from 'node:fs/promises'
import {basename, join, resolve} from 'node:path'
import {SpanCommand, print} from '../cli/base.js'
import {describePipeline, runPipeline, type Stage} from '../core/demo/pipeline.js'
import {DEMO_HELD_OUT, dataStages, demoFiles, eraStages, pretrainStage, splitHeldOut, squadStages, type DemoFiles, type DemoOptions} from '../core/demo/plan.js'
import {curvesSection, eraRow, eraTable, learnedTable, pretrainRow, resultsTable, squadRow, type DemoRow} from '../core/demo/report.js'
import {writeEraTask} from '../core/demo/era.js'
import {modelHeldOut, unigramBaseline} from '../core/demo/learned.js'
import {DEFAULT_CORPUS, DEFAULT_VOCAB, loadVocab} from '../core/text/vocab.js'
import {readCurvesFile, writeCurvesSvg} from '../core/plot/files.js'
import {RUN_MANIFEST} from '../core/train/run-dir.js'

export default class Demo extends SpanCommand {
  static override summary = 'Run the whole pipeline on the embedded data and show what it made'
  static override description =
    'Tokenizes the embedded corpus (State of the Union addresses) with the embedded vocabulary, packs blocks, applies span masking and prints the inspect summary; ' +
    'pre-trains the tiny model briefly (MLM + SBO), fine-tunes it on the embedded SQuAD-format questions, predicts and scores them (a check that the task pipeline runs end to end), ' +
    'fine-tunes it to tell whether a sentence was spoken before 1910 or after (a task it has to learn) and scores held-out sentences, ' +
    'then draws the loss and evaluation curves, a table of results, its held-out masked-token figures beside a unigram baseline, and last its accuracy on the era task beside the majority class. ' +
    'Every step is a real `span` command (joined by pipes where the data flows); the commands are printed so you can run them yourself. ' +
    'The metrics NDJSON of each run and its curves (SVG) stay in --dir. ' +
    'A model this small trained for a minute does not answer questions: SQuAD is there to show the pipeline; the last table shows what the model learned (README.md, "span demo").'
  static override examples = ['npx span demo', 'npx span demo --dir /tmp/demo --seed 7 --steps 400']
  static override flags = {
    dir: Flags.string({description: 'where the demo writes its files', default: 'span-demo'}),
    seed: Flags.integer({description: 'seed for masking', default: 1}),
    len: Flags.integer({description: 'block length', default: 128}),
    steps: Flags.integer({description: 'pre-training steps (batch 8)', default: 200, min: 1}),
    'qa-epochs': Flags.integer({description: 'fine-tuning epochs on the QA set (0 skips QA)', default: 1, min: 0}),
    'era-epochs': Flags.integer({description: 'fine-tuning epochs on the before-or-after-1910 task', default: 3, min: 1}),
    backend: Flags.string({description: 'compute backend for training (see span doctor)', default: 'auto'}),
  }

  private color = process.stdout.isTTY === true

  async run(): Promise<void> {
    const {flags} = await this.parse(Demo)
    const started = Date.now()
    const f = demoFiles(resolve(flags.dir))
    const o: DemoOptions = {seed: flags.seed, len: flags.len, steps: flags.steps, epochs: flags['qa-epochs'], eraEpochs: flags['era-epochs'], backend: flags.backend}
    await mkdir(f.dir, {recursive: true})
    for (const d of [f.model, f.qaModel, f.eraModel]) if (existsSync(join(d, RUN_MANIFEST))) await rm(d, {recursive: true}) // an earlier demo's runs: a new run takes only a new directory
    await this.stage(dataStages(o), f.masked)
    await this.stage([['inspect', f.masked, '--svg', f.spanSvg]])
    const rows: DemoRow[] = []
    const report: string[] = []
    await this.pretrain(f, o, rows, report)
    if (o.epochs > 0) await this.squad(f, o, rows, report)
    const era = await this.era(f, o, rows)
    const V = loadVocab(DEFAULT_VOCAB).tokens.length
    const mlm = learnedTable(await modelHeldOut(f.pretrainMetrics), await unigramBaseline(f.pretrainTrain, f.pretrainEval, V), DEMO_HELD_OUT, V)
    this.step(`done: files in ${f.dir}`)
    const total = (Date.now() - started) / 1000
    await this.say([...report, '', 'results', ...resultsTable(rows, total), '', ...mlm, '', ...this.files(f, o), '', ...era])
  }

  /** Writes the era task (era.ts), fine-tunes on it, predicts and scores its dev set; returns the last table. */
  private async era(f: DemoFiles, o: DemoOptions, rows: DemoRow[]): Promise<string[]> {
    const t = Date.now()
    const perEra = await writeEraTask(DEFAULT_CORPUS, loadVocab(DEFAULT_VOCAB), f.pretrainEval, {train: f.eraTrain, dev: f.eraDev}, o.seed)
    const s = eraStages(f, o)
    await this.stage([s.finetune], f.eraMetrics)
    await this.stage([s.predict])
    await this.stage([s.evaluate], f.eraEval)
    const {acc} = JSON.parse(await readFile(f.eraEval, 'utf8')) as {acc: number}
    rows.push(eraRow(await readCurvesFile(f.eraMetrics), o.eraEpochs, acc, (Date.now() - t) / 1000))
    return eraTable(perEra, acc, o.eraEpochs)
  }

  /** Pre-trains, keeping its metrics in a file and drawing them; adds its row and curves to the report. */
  private async pretrain(f: DemoFiles, o: DemoOptions, rows: DemoRow[], report: string[]): Promise<void> {
    const t = Date.now()
    await splitHeldOut(f)
    await this.stage([pretrainStage(f, o)], f.pretrainMetrics)
    const curves = await readCurvesFile(f.pretrainMetrics)
    await writeCurvesSvg(f.pretrainSvg, curves, 'span demo: pre-training (tiny, MLM + SBO)')
    rows.push(pretrainRow(curves, 'tiny', (Date.now() - t) / 1000))
    report.push(...curvesSection('pre-training', curves, {metrics: basename(f.pretrainMetrics), svg: basename(f.pretrainSvg)}, this.color)) // spread-ok: a few lines
  }

  /** Fine-tunes on the QA set, predicts and scores the dev questions; adds its row and curves to the report. */
  private async squad(f: DemoFiles, o: DemoOptions, rows: DemoRow[], report: string[]): Promise<void> {
    const t = Date.now()
    const s = squadStages(f, o)
    await this.stage([s.finetune], f.squadMetrics)
    await this.stage([s.predict])
    await this.stage([s.evaluate], f.squadEval)
    const scores = JSON.parse(await readFile(f.squadEval, 'utf8')) as {exact_match: number; f1: number}
    const curves = await readCurvesFile(f.squadMetrics)
    await writeCurvesSvg(f.squadSvg, curves, 'span demo: SQuAD fine-tuning')
    rows.push(squadRow(curves, o.epochs, scores, (Date.now() - t) / 1000))
    report.push(...curvesSection('SQuAD fine-tuning', curves, {metrics: basename(f.squadMetrics), svg: basename(f.squadSvg)}, this.color)) // spread-ok: a few lines
  }

  private files(f: DemoFiles, o: DemoOptions): string[] {
    const metrics = [f.pretrainMetrics, ...(o.epochs > 0 ? [f.squadMetrics] : []), f.eraMetrics].map((p) => basename(p)).join(', ')
    const charts = [f.spanSvg, f.pretrainSvg, ...(o.epochs > 0 ? [f.squadSvg] : [])].map((p) => basename(p)).join(', ')
    return [
      `files in ${f.dir}: metrics ${metrics}; charts ${charts}; redraw with \`span plot FILE [--svg OUT]\`.`,
      'SQuAD checks the pipeline; what the tiny model learned in its minute is the table below (README.md, "span demo").',
    ]
  }

  /** Prints a pipeline as a user would type it, runs it, and shows its output (or sends it to `out`). */
  private async stage(stages: Stage[], out?: string): Promise<void> {
    this.step(describePipeline(stages, out))
    const text = await runPipeline(stages, out)
    if (!out) await print(text)
  }

  private async say(lines: string[]): Promise<void> {
    await print(lines.join('\n') + '\n')
  }

  private step(text: string): void {
    process.stderr.write(`\n$ ${text}\n`)
  }
}
