import {Args, Flags} from '@oclif/core'
import {SpanCommand, VERSION, ioFlags} from '../cli/base.js'
import {BlockPacker, writeBlock, writePairBlock} from '../core/data/block.js'
import {NdjsonBytes} from '../core/stream/ndjson-bytes.js'
import {PAIR_POOL_TOKENS, PairMaker, type PairBlock} from '../core/data/pairs.js'
import {toTokenRecord, type TokenRecord} from '../core/data/records.js'
import {Rng} from '../core/data/rng.js'
import {SpanError, UsageError, nextHeader, openSource, openStage} from '../core/stream/index.js'

const CHUNK = 1 << 16 // bytes of output gathered before one write

export default class Block extends SpanCommand {
  static override summary = 'Pack token records into [CLS] … [SEP] blocks of at most --len tokens'
  static override description = [
  'Whole lines of one document are packed while they fit (SpanBERT appendix A); blocks never cross documents.',
  'Tags (docs/formats.md#tags) travel with their line, re-based to the block; a tag that a block edge cuts (only where a line longer than --len − 2 is split) is dropped, and stderr says how many. --pairs blocks carry no tags (counted as dropped).',
  'With --pairs (the NSP baseline, BERT appendix A.2): [CLS] A [SEP] B [SEP] blocks with segment ids and a "next" label; half the time B is the text that follows A, otherwise a random stretch of another document, drawn from the last --pair-pool tokens of documents seen (a stream cannot hold the corpus); the longer side is truncated from the front or back at random to fit --len.',
  ].join('\n\n')
  static override examples = [
    'cat wiki.txt | span tokenize | span block --len 512 > blocks.ndjson',
    'cat wiki.txt | span tokenize | span block --len 128 --pairs --seed 1 > pairs.ndjson',
  ]
  static override args = {file: Args.string({description: 'input file (instead of --input)', ignoreStdin: true})}
  static override flags = {
    ...ioFlags,
    len: Flags.integer({description: 'maximum block length in tokens, [CLS] and [SEP] included', default: 512, min: 3}),
    pairs: Flags.boolean({description: 'two-segment blocks with a next-sentence label (NSP baseline)', default: false}),
    seed: Flags.integer({description: 'seed of the random generator (--pairs)', default: 12345}),
    'pair-pool': Flags.integer({description: 'tokens of recent documents kept to draw random second segments from (--pairs)', default: PAIR_POOL_TOKENS, min: 1}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Block)
    if (flags.pairs && flags.len < 5) throw new UsageError(`--len must be at least 5 with --pairs, got ${flags.len}`)
    const src = await openSource(args.file ?? flags.input)
    const input = await openStage(src, ['tokens'])
    const special = input.header?.special
    if (!special) throw new SpanError(`${src.name}: no header record with the special-token ids (pipe from span tokenize)`)
    const vocabSize = input.header?.vocab?.size ?? null
    const headerFlags = flags.pairs ? {len: flags.len, pairs: true, seed: flags.seed, pairPool: flags['pair-pool']} : {len: flags.len}
    const header = nextHeader(input.header, 'blocks', {stage: 'block', version: VERSION, flags: headerFlags})
    const out = new NdjsonBytes()
    const packer = new BlockPacker(flags.len, special.cls, special.sep)
    const stage = flags.pairs ? pairStage(new PairMaker(flags.len, special.cls, special.sep, new Rng(flags.seed), flags['pair-pool']), out) : plainStage(packer, out)
    await this.withOutput(flags.output, async (w) => {
      await w.record(header)
      for await (const rec of input.records) {
        stage.push(toTokenRecord(rec, vocabSize, src.name))
        if (out.length >= CHUNK) await w.raw(out.take())
      }
      stage.finish()
      await w.raw(out.take())
    })
    const dropped = packer.droppedTags + stage.tagsIgnored
    if (dropped > 0) process.stderr.write(`span block: ${dropped} tags dropped (${flags.pairs ? 'pair blocks carry no tags' : 'cut by a block edge'}), ${packer.keptTags} kept\n`)
  }
}

/** A block maker writing NDJSON bytes. */
interface Stage {
  push(rec: TokenRecord): void
  finish(): void
  tagsIgnored: number // tags the stage does not carry (pair blocks)
}

function plainStage(packer: BlockPacker, out: NdjsonBytes): Stage {
  const write = (blocks: ReturnType<BlockPacker['finish']>) => blocks.forEach((b) => writeBlock(out, b))
  return {push: (rec) => write(packer.push(rec)), finish: () => write(packer.finish()), tagsIgnored: 0}
}

function pairStage(maker: PairMaker, out: NdjsonBytes): Stage {
  const write = (pairs: PairBlock[]) => pairs.forEach((b) => writePairBlock(out, b))
  const stage: Stage = {
    push: (rec) => {
      stage.tagsIgnored += rec.tags?.length ?? 0
      write(maker.push(rec))
    },
    finish: () => write(maker.finish()),
    tagsIgnored: 0,
  }
  return stage
}
