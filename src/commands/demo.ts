import {Flags} from '@oclif/core'
import {mkdir, readFile, writeFile} from 'node:fs/promises'
import {join, resolve} from 'node:path'
import {SpanCommand} from '../base.js'
import {describePipeline, runPipeline, type Stage} from '../core/demo/pipeline.js'
import {DEFAULT_CORPUS, DEFAULT_VOCAB, FIXTURES} from '../core/text/vocab.js'

const DEMO_HELD_OUT = 20 // masked examples kept out of pre-training, for its evaluation
const SQUAD_TRAIN = join(FIXTURES, 'squad-demo', 'train.json')
const SQUAD_DEV = join(FIXTURES, 'squad-demo', 'dev.json')

export default class Demo extends SpanCommand {
  static override summary = 'Run the whole pipeline on the embedded data and show what it made'
  static override description =
    'Tokenizes the embedded corpus (State of the Union addresses) with the embedded vocabulary, packs blocks, applies span masking and prints the inspect summary; ' +
    'pre-trains the tiny model briefly (MLM + SBO), fine-tunes it on the embedded SQuAD-format questions, predicts and scores them. ' +
    'Every step is a real `span` command (joined by pipes where the data flows); the commands are printed so you can run them yourself. ' +
    'The scores show the pipeline working end to end, not model quality: the model is tiny and trained for a few minutes.'
  static override examples = ['npx span demo', 'npx span demo --dir /tmp/demo --seed 7 --steps 400']
  static override flags = {
    dir: Flags.string({description: 'where the demo writes its files', default: 'span-demo'}),
    seed: Flags.integer({description: 'seed for masking', default: 1}),
    len: Flags.integer({description: 'block length', default: 128}),
    steps: Flags.integer({description: 'pre-training steps (batch 8)', default: 200, min: 1}),
    'qa-epochs': Flags.integer({description: 'fine-tuning epochs on the QA set (0 skips QA)', default: 3, min: 0}),
    backend: Flags.string({description: 'compute backend for training (see span doctor)', default: 'auto'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Demo)
    const dir = resolve(flags.dir)
    await mkdir(dir, {recursive: true})
    const train = join(dir, 'train.ndjson')
    const svg = join(dir, 'span-lengths.svg')
    await this.stage([
      ['tokenize', '--vocab', DEFAULT_VOCAB, DEFAULT_CORPUS],
      ['block', '--len', String(flags.len)],
      ['mask', '--scheme', 'span', '--p', '0.2', '--seed', String(flags.seed)],
    ], train)
    await this.stage([['inspect', train, '--svg', svg]])
    const model = await this.pretrain(dir, train, flags.steps, flags.backend)
    if (flags['qa-epochs'] > 0) await this.squad(dir, model, flags['qa-epochs'], flags.backend)
    this.step(`done: files in ${dir}`)
  }

  /** span pretrain on the masked examples, the last DEMO_HELD_OUT held out for evaluation. */
  private async pretrain(dir: string, masked: string, steps: number, backend: string): Promise<string> {
    const [header, ...examples] = (await readFile(masked, 'utf8')).trimEnd().split('\n')
    const train = join(dir, 'pretrain-train.ndjson')
    const heldOut = join(dir, 'pretrain-eval.ndjson')
    await writeFile(train, [header, ...examples.slice(0, -DEMO_HELD_OUT)].join('\n') + '\n')
    await writeFile(heldOut, [header, ...examples.slice(-DEMO_HELD_OUT)].join('\n') + '\n')
    const model = join(dir, 'model')
    const every = String(Math.max(1, Math.round(steps / 4)))
    await this.stage([['pretrain', train, '--preset', 'tiny', '--backend', backend, '--max-steps', String(steps), '--batch-size', '8',
      '--lr', '1e-3', '--warmup', String(Math.ceil(steps / 10)), '--log-every', every, '--eval', heldOut, '--eval-every', every, '--out', model]])
    return model
  }

  /** Fine-tune for extractive QA on the embedded questions, predict the held-out ones, score them. */
  private async squad(dir: string, model: string, epochs: number, backend: string): Promise<void> {
    const qa = join(dir, 'squad-model')
    const pred = join(dir, 'squad-pred')
    await this.stage([['finetune', 'squad', '--init', model, '--train', SQUAD_TRAIN, '--dev', SQUAD_DEV, '--out', qa, '--backend', backend,
      '--max-len', '128', '--doc-stride', '64', '--max-query-len', '32', '--epochs', String(epochs), '--batch-size', '16', '--lr', '1e-3', '--log-every', '10']])
    await this.stage([['predict', 'squad', '--model', qa, '--data', SQUAD_DEV, '-o', pred, '--backend', backend]])
    await this.stage([['eval', 'squad', '--data', SQUAD_DEV, '--pred', join(pred, 'predictions.json')]])
  }

  /** Prints a pipeline as a user would type it, runs it, and shows its output (or sends it to `out`). */
  private async stage(stages: Stage[], out?: string): Promise<void> {
    this.step(describePipeline(stages, out))
    const text = await runPipeline(stages, out)
    if (!out) process.stdout.write(text)
  }

  private step(text: string): void {
    process.stderr.write(`\n$ ${text}\n`)
  }
}
