import {Args, Flags} from '@oclif/core'
import {SpanCommand, ioFlags} from '../cli/base.js'
import {paint} from '../core/data/chart.js'
import {checkChartPath, writeChartFile} from '../core/data/chart-file.js'
import {spanLengthSvg, svgInput} from '../core/data/chart-svg.js'
import {Inspector, type InspectOptions, type InspectSummary} from '../core/data/inspect.js'
import {chooseSpecial, chooseVocab, spanParams, type VocabChoice} from '../core/data/inspect-options.js'
import {formatReport} from '../core/data/inspect-report.js'
import {continuationTable} from '../core/data/inspect-spans.js'
import {SpanError, UsageError, openSource, openStage, type StageInput, type StageKind} from '../core/stream/index.js'

const KINDS: StageKind[] = ['tokens', 'blocks', 'masked']

export default class Inspect extends SpanCommand {
  static override summary = 'Summary statistics of any stage\'s stream: counts, lengths, mask ratio, span-length histogram'
  static override description = [
    'Reads token records, blocks or masked examples (the kind comes from the header, else from the record shape)',
    'and prints a readable report, or one JSON object with --json. For masked examples it compares the span lengths',
    'in words with the clipped geometric distribution of SpanBERT §3.1 (p and max-span from the header\'s mask stage).',
    'Memory stays flat: only counters and histograms are kept.',
  ].join(' ')
  static override examples = [
    'span inspect train.ndjson',
    'span tokenize < wiki.txt | span block | span mask | span inspect --svg spans.svg',
    'span inspect --json masked.ndjson | jq .masking.maskRatio',
  ]
  static override args = {file: Args.string({description: 'input file (instead of --input)', ignoreStdin: true})}
  static override flags = {
    ...ioFlags,
    json: Flags.boolean({description: 'print the summary as one JSON object instead of the report'}),
    svg: Flags.string({description: 'also write the span-length chart (observed vs theoretical) to this SVG file'}),
    vocab: Flags.string({description: 'vocabulary for word boundaries and special ids (default: the header\'s vocab.path)'}),
    p: Flags.string({description: 'p of the theoretical span-length distribution (default: the header\'s, else 0.2)'}),
    'max-span': Flags.integer({description: 'clip of the theoretical distribution (default: the header\'s, else 10)', min: 1}),
    kind: Flags.option({description: 'record kind of a headerless stream (default: guessed from the first record)', options: KINDS})(),
    cls: Flags.integer({description: 'id of [CLS] for a stream without header or vocabulary', min: 0}),
    sep: Flags.integer({description: 'id of [SEP] for a stream without header or vocabulary', min: 0}),
    pad: Flags.integer({description: 'id of [PAD] for a stream without header or vocabulary', min: 0}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Inspect)
    const path = args.file ?? flags.input
    parseP(flags.p) // a bad --p is a usage error before any input is read
    if (flags.svg) await checkChartPath(flags.svg)
    const input = await openStage(await openSource(path), KINDS)
    const kind = flags.kind ?? input.header?.kind ?? null
    if (flags.svg) checkSvgKind(kind)
    const vocab = needsVocab(kind, flags.vocab) ? chooseVocab(input.header, flags.vocab, path, warn) : {vocab: null, missing: null}
    const opts = this.options(input, kind, vocab, flags)
    const inspector = new Inspector(input.source, opts)
    for await (const rec of input.records) inspector.add(rec)
    const summary = inspector.summary()
    sayNotes(summary, vocab, opts)
    if (flags.svg) {
      checkSvgKind(summary.kind)
      await writeChartFile(flags.svg, spanLengthSvg(svgInput(inspector.masking(), summary.records)))
    }
    const color = flags.output === '-' && process.stdout.isTTY === true
    await this.withOutput(flags.output, async (w) => {
      if (flags.json) await w.record(summary)
      else for (const line of formatReport(summary, paint(color))) await w.line(line)
    })
  }

  private options(input: StageInput, kind: StageKind | null, vc: VocabChoice, flags: {p?: string; 'max-span'?: number; cls?: number; sep?: number; pad?: number; kind?: string}): InspectOptions {
    return {
      kind,
      kindFrom: flags.kind ? 'flag' : input.header ? 'header' : null,
      special: chooseSpecial({cls: flags.cls, sep: flags.sep, pad: flags.pad}, vc.vocab, input.header),
      continuation: vc.vocab ? continuationTable(vc.vocab.tokens) : null,
      vocabSize: vc.vocab?.tokens.length ?? input.header?.vocab?.size ?? null,
      span: spanParams(input.header, {p: parseP(flags.p), maxSpan: flags['max-span']}, warn),
    }
  }
}

function warn(msg: string): void {
  process.stderr.write(`span inspect: ${msg}\n`)
}

/** Word boundaries matter only for masked examples; --vocab is loaded whatever the kind (special ids). */
function needsVocab(kind: StageKind | null, flag: string | undefined): boolean {
  return flag !== undefined || kind === null || kind === 'masked'
}

function parseP(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined
  const p = Number(raw)
  if (!(p > 0 && p <= 1)) throw new UsageError(`--p must be a number in (0, 1], got ${JSON.stringify(raw)}`)
  return p
}

/** What the summary could not do, said on stderr (stdout keeps only the report). */
function sayNotes(s: InspectSummary, vc: VocabChoice, opts: InspectOptions): void {
  if (s.kindFrom === 'shape' && s.kind === 'tokens' && !opts.special) warn('no header: reading {doc, ids} records as token records (--kind blocks if they are blocks)')
  if (s.masking && s.masking.spanLength.unit === 'tokens') warn(`${vc.missing ?? 'no vocabulary'}: span lengths are counted in tokens, not words`)
  if (s.masking && !opts.special) warn('special-token ids unknown (no header, --vocab or --cls/--sep/--pad): mask ratio not computed, lengths include padding')
  else if (s.kind === 'blocks' && !opts.special) warn('special-token ids unknown (no header, --vocab or --cls/--sep/--pad): lengths include padding')
}

function checkSvgKind(kind: StageKind | null): void {
  if (kind !== null && kind !== 'masked') throw new SpanError(`--svg: the span-length chart needs masked examples (from span mask), got ${kind}`)
}
