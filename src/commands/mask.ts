import {Args, Flags} from '@oclif/core'
import {SpanCommand, VERSION, ioFlags, numberFlag} from '../cli/base.js'
import {MASK_SCHEMES, Masker, TAGGED_SCHEMES, maskVocab, type MaskOptions, type MaskScheme} from '../core/data/mask.js'
import {NdjsonBytes} from '../core/stream/ndjson-bytes.js'
import {checkNotMasked, toBlockRecord} from '../core/data/mask-io.js'
import {MaskStream, UNIGRAM_PREFIX, resolveVocab} from '../core/data/mask-stream.js'
import {Rng} from '../core/data/rng.js'
import {Unigram, formatUnigramFile, readUnigramFile} from '../core/data/unigram.js'
import {SpanError, nextHeader, openSource, openStage, type Header, type StageInput} from '../core/stream/index.js'
import type {Vocab} from '../core/text/vocab.js'

const CHUNK = 1 << 16 // bytes of output gathered before one write

export default class Mask extends SpanCommand {
  static override summary = 'Mask blocks for pre-training: SpanBERT span masking, or BERT subword / whole-word masking'
  static override description = [
  'Reads blocks (span block), writes masked examples {ids, targets, spans}; n is the number of maskable tokens of a block (all but [CLS], [SEP], [PAD], [UNK], [MASK], which are never masked and never drawn as replacements).',
  '--scheme span (SpanBERT §3.1): spans of whole words, lengths ~ Geo(--p) clipped at --max-span, until exactly ceil(--ratio·n) tokens are masked; one 80/10/10 decision per merged span. --scheme subword (BERT): ceil(ratio·n) random tokens, 80/10/10 per token. --scheme whole-word: whole words in random order, the last one cut at the budget so that exactly ceil(ratio·n) tokens are masked, 80/10/10 per token.',
  '--scheme entity and --scheme noun-phrase (SpanBERT §5; reference NERSpanMaskingScheme) read the blocks\' tags (span tag, docs/formats.md#tags): with probability --tagged-prob a draw masks a whole tagged span (NP tags for noun-phrase, every other label for entity, or --tag-labels), else a geometric span (--fill span, the reference) or one whole word (--fill whole-word, the paper), until exactly ceil(ratio·n) tokens; each span gains a fourth element, the tag\'s label or "random".',
  'Random replacements come from the unigram distribution of the data: by default estimated from the input itself (the first --unigram-prefix tokens are counted before any block is masked, and the counts keep growing as blocks stream through); or fixed by --unigram FILE, a counts file with one integer per line, line i the count of vocabulary id i, as --write-unigram writes it.',
  ].join('\n\n')
  static override examples = [
    'span tokenize wiki.txt | span block --len 512 | span mask --p 0.2 > train.ndjson',
    'span tokenize wiki.txt | span tag --model ner-run | span block | span mask --scheme entity --tagged-prob 0.5',
    'span mask blocks.ndjson --write-unigram counts.txt > /dev/null; span mask blocks.ndjson --unigram counts.txt',
  ]
  static override args = {file: Args.string({description: 'input file (instead of --input)', ignoreStdin: true})}
  static override flags = {
    ...ioFlags,
    scheme: Flags.string({description: 'masking scheme', options: [...MASK_SCHEMES], default: 'span'}),
    p: numberFlag('geometric span-length parameter (span scheme)', {default: 0.2, min: 1e-9, max: 1}),
    'max-span': Flags.integer({description: 'longest span, in words (span scheme)', default: 10, min: 1}),
    ratio: numberFlag('share of each block\'s maskable tokens to mask', {default: 0.15, min: 0, max: 1}),
    'tagged-prob': numberFlag('entity, noun-phrase: chance that a draw masks a whole tagged span', {default: 0.5, min: 0, max: 1}),
    'tag-labels': Flags.string({description: 'entity, noun-phrase: comma-separated tag labels to mask (default: NP for noun-phrase, all others for entity)'}),
    fill: Flags.string({description: 'entity, noun-phrase: the other draws, geometric spans (the reference code) or single whole words (the paper)', options: ['span', 'whole-word'], default: 'span'}),
    seed: Flags.integer({description: 'seed of the random generator', default: 12345}),
    vocab: Flags.string({description: 'vocabulary file (default: the one the header names; required without a header)'}),
    unigram: Flags.string({description: 'counts file for random replacements (default: estimated from the input)', exclusive: ['write-unigram']}),
    'unigram-prefix': Flags.integer({description: 'tokens counted before the first block is masked', default: UNIGRAM_PREFIX, min: 0}),
    'write-unigram': Flags.string({description: 'write the token counts of the input to this file at the end'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Mask)
    const src = await openSource(args.file ?? flags.input)
    const input = await openStage(src, ['blocks'])
    const first = await input.records.next()
    const entry = {stage: 'mask', version: VERSION, flags: this.headerFlags(flags)}
    if (first.done && !input.header && !flags.vocab) {
      await this.withOutput(flags.output, (w) => w.record(nextHeader(null, 'masked', entry)))
      return
    }
    if (!first.done && !input.header) checkNotMasked(first.value, src.name) // before asking for --vocab
    const vocab = resolveVocab(input.header, flags.vocab, src.name)
    const mv = maskVocab(vocab.tokens, vocab.special)
    const unigram = new Unigram(mv.special, flags.unigram ? readUnigramFile(flags.unigram, vocab.tokens.length) : undefined)
    if (flags.unigram && unigram.total === 0) throw new SpanError(`${flags.unigram}: no counts for any non-special token`)
    const opts = {...maskFlags(flags), scheme: flags.scheme as MaskScheme}
    const out = new NdjsonBytes()
    const masker = new Masker(opts, mv, unigram)
    const stream = new MaskStream(masker, new Rng(flags.seed), unigram, !flags.unigram, out, flags['unigram-prefix'])
    const header = nextHeader(input.header, 'masked', entry, vocabPatch(input.header, vocab))
    await this.withOutputs([flags.output, flags['write-unigram']], async ([w, counts]) => {
      await w.record(header)
      if (!first.done) stream.push(this.block(first.value.value, first.value.line, input, vocab))
      for await (const rec of input.records) {
        stream.push(this.block(rec.value, rec.line, input, vocab))
        if (out.length >= CHUNK) await w.raw(out.take())
      }
      stream.finish()
      await w.raw(out.take())
      if (counts) await counts.raw(formatUnigramFile(unigram.counts)) // lands with the output, or neither does
    })
    if (TAGGED_SCHEMES.includes(opts.scheme)) reportDraws(masker.draws, opts.scheme)
  }

  private block(value: Record<string, unknown>, line: number, input: StageInput, vocab: Vocab) {
    return toBlockRecord({value, line}, vocab.tokens.length, vocab.special.cls, vocab.special.sep, input.source)
  }

  private headerFlags(f: MaskFlagValues & {scheme: string; seed: number; unigram?: string; 'unigram-prefix': number}) {
    const unigram = f.unigram ?? `input (first ${f['unigram-prefix']} tokens, then running counts)`
    const tagged = TAGGED_SCHEMES.includes(f.scheme as MaskScheme) ? {taggedProb: f['tagged-prob'], tagLabels: f['tag-labels'] ?? null, fill: f.fill} : {}
    return {scheme: f.scheme, p: f.p, maxSpan: f['max-span'], ratio: f.ratio, seed: f.seed, unigram, ...tagged}
  }
}

interface MaskFlagValues {
  p: number
  'max-span': number
  ratio: number
  'tagged-prob': number
  'tag-labels'?: string
  fill: string
}

function maskFlags(f: MaskFlagValues): Omit<MaskOptions, 'scheme'> {
  const tagLabels = f['tag-labels']?.split(',').map((l) => l.trim()).filter((l) => l !== '')
  return {ratio: f.ratio, p: f.p, maxSpan: f['max-span'], taggedProb: f['tagged-prob'], tagLabels, fill: f.fill as 'span' | 'whole-word'}
}

/** One stderr line: how the coin fell, or that no block had a tag the scheme takes. */
function reportDraws(d: {tagged: number; random: number}, scheme: string): void {
  const total = d.tagged + d.random
  const line = total === 0
    ? `no block had a tag that --scheme ${scheme} takes (see --tag-labels): every span is random`
    : `${d.tagged} tagged and ${d.random} random draws (tagged share ${(d.tagged / total).toFixed(4)}) while tags were left`
  process.stderr.write(`span mask: ${line}\n`)
}

/** What the next stages need to know about the vocabulary, where the input's header does not say. */
function vocabPatch(h: Header | null, vocab: Vocab): Partial<Header> {
  return {vocab: h?.vocab ?? vocab.info, cased: h?.cased ?? vocab.cased, special: h?.special ?? vocab.special}
}
