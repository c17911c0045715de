import {Flags} from '@oclif/core'
import {mkdir} from 'node:fs/promises'
import {join, resolve} from 'node:path'
import {SpanCommand} from '../base.js'
import {describePipeline, runPipeline, type Stage} from '../core/demo/pipeline.js'
import {DEFAULT_CORPUS, DEFAULT_VOCAB} from '../core/text/vocab.js'

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
  }

  private step(text: string): void {
    process.stderr.write(`\n$ ${text}\n`)
  }
}
