import {Flags} from '@oclif/core'
import {mkdir, readFile, writeFile} from 'node:fs/promises'
import {join, resolve} from 'node:path'
import {SpanCommand} from '../base.js'
import {describePipeline, runPipeline, type Stage} from '../core/demo/pipeline.js'
import {DEFAULT_CORPUS, DEFAULT_VOCAB} from '../core/text/vocab.js'

/** The demo's pre-training stage: ~1–2 minutes with the wasm backend on a 2-core CPU. */
const DEMO_PRETRAIN_STEPS = 20
const DEMO_HELD_OUT = 20

export default class Demo extends SpanCommand {
  static override summary = 'Run the whole pipeline on the embedded data and show what it made'
  static override description =
    'Tokenizes the embedded corpus (State of the Union addresses) with the embedded vocabulary, packs blocks, applies span masking, and prints the inspect summary. Every step is a real `span` command joined by pipes; the commands are printed so you can run them yourself.'
  static override examples = ['npx span demo', 'npx span demo --dir /tmp/demo --seed 7']
  static override flags = {
    dir: Flags.string({description: 'where the demo writes its files', default: 'span-demo'}),
    seed: Flags.integer({description: 'seed for masking', default: 1}),
    len: Flags.integer({description: 'block length', default: 128}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Demo)
    const dir = resolve(flags.dir)
    await mkdir(dir, {recursive: true})
    const train = join(dir, 'train.ndjson')
    const svg = join(dir, 'span-lengths.svg')
    const prep: Stage[] = [
      ['tokenize', '--vocab', DEFAULT_VOCAB, DEFAULT_CORPUS],
      ['block', '--len', String(flags.len)],
      ['mask', '--scheme', 'span', '--p', '0.2', '--seed', String(flags.seed)],
    ]
    this.step(describePipeline(prep, train))
    await runPipeline(prep, train)
    const inspect: Stage[] = [['inspect', train, '--svg', svg]]
    this.step(describePipeline(inspect))
    process.stdout.write(await runPipeline(inspect))
    this.step(`done: ${train}, ${svg}`)
    await this.pretrainStage(dir, train)
  }

  /**
   * Appended stage (span pretrain): a short pre-training run of the tiny preset on the masked
   * examples just made (wasm backend; about 1–2 minutes on a 2-core CPU), the last
   * DEMO_HELD_OUT of them held out for the evaluation at the end.
   */
  private async pretrainStage(dir: string, masked: string): Promise<void> {
    const [header, ...examples] = (await readFile(masked, 'utf8')).trimEnd().split('\n')
    const train = join(dir, 'pretrain-train.ndjson')
    const heldOut = join(dir, 'pretrain-eval.ndjson')
    await writeFile(train, [header, ...examples.slice(0, -DEMO_HELD_OUT)].join('\n') + '\n')
    await writeFile(heldOut, [header, ...examples.slice(-DEMO_HELD_OUT)].join('\n') + '\n')
    const steps = String(DEMO_PRETRAIN_STEPS)
    const model = join(dir, 'model')
    const stage: Stage[] = [['pretrain', train, '--preset', 'tiny', '--backend', 'wasm', '--max-steps', steps, '--batch-size', '8',
      '--lr', '2e-3', '--warmup', '2', '--log-every', '5', '--eval', heldOut, '--eval-every', steps, '--out', model]]
    this.step(describePipeline(stage))
    process.stdout.write(await runPipeline(stage))
    this.step(`done: ${model}`)
  }

  private step(text: string): void {
    process.stderr.write(`\n$ ${text}\n`)
  }
}
