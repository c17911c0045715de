import {Args, Flags} from '@oclif/core'
import {SpanCommand, VERSION, ioFlags} from '../base.js'
import {BlockPacker} from '../core/data/block.js'
import {toTokenRecord} from '../core/data/records.js'
import {SpanError, nextHeader, openSource, openStage} from '../core/stream/index.js'

export default class Block extends SpanCommand {
  static override summary = 'Pack token records into [CLS] … [SEP] blocks of at most --len tokens'
  static override description = 'Whole lines of one document are packed while they fit (SpanBERT appendix A); blocks never cross documents.'
  static override examples = ['cat wiki.txt | span tokenize | span block --len 512 > blocks.ndjson']
  static override args = {file: Args.string({description: 'input file (instead of --input)', ignoreStdin: true})}
  static override flags = {
    ...ioFlags,
    len: Flags.integer({description: 'maximum block length in tokens, [CLS] and [SEP] included', default: 512, min: 3}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Block)
    const src = await openSource(args.file ?? flags.input)
    const input = await openStage(src, ['tokens'])
    const special = input.header?.special
    if (!special) throw new SpanError(`${src.name}: no header record with the special-token ids (pipe from span tokenize)`)
    const vocabSize = input.header?.vocab?.size ?? null
    const header = nextHeader(input.header, 'blocks', {stage: 'block', version: VERSION, flags: {len: flags.len}})
    const packer = new BlockPacker(flags.len, special.cls, special.sep)
    await this.withOutput(flags.output, async (w) => {
      await w.record(header)
      for await (const rec of input.records) {
        for (const b of packer.push(toTokenRecord(rec, vocabSize, src.name))) await w.record(b)
      }
      for (const b of packer.finish()) await w.record(b)
    })
  }
}
