import {Args, Flags} from '@oclif/core'
import {SpanCommand, binaryFlag, ioFlags} from '../cli/base.js'
import type {BinaryMode} from '../core/stream/bytelines.js'
import {backendFlags} from '../cli/backend-flags.js'
import {type BackendChoice, initBackend} from '../core/engine/backend.js'
import {loadCheckpoint} from '../core/model/checkpoint.js'
import {modelDir} from '../core/train/run-dir.js'
import type {FillHead} from '../core/model/fill.js'
import {checkHeads, fillReadable, fillRecord, fillText} from '../core/model/fill-stream.js'
import {UsageError, errorAt, openSource, readLines, readNdjson} from '../core/stream/index.js'
import {WordPieceTokenizer} from '../core/text/tokenizer.js'
import {loadVocab} from '../core/text/vocab.js'

export default class Fill extends SpanCommand {
  static override summary = "Fill masked spans with the MLM head, SpanBERT's span boundary head, or both"
  static override description = `Reads lines of text (or JSONL with --field) with one or more runs of [MASK], one [MASK] per token to
fill. For each run: the MLM head's prediction at each position, the span boundary (SBO) head's from the
states of the tokens just outside the run and the position inside it (SpanBERT §3.2), or both (--head both,
the default: summed log-probabilities). The top --k fillings of each run by beam search (--beam) as NDJSON
{"text", "spans": [{"start", "end", "fills": [{"text", "score"}]}]} (start/end: the run's characters,
end exclusive; score: the filling's summed log-probability), or a readable form on a terminal.
A checkpoint without the heads --head needs is refused.`
  static override examples = [
    'echo "the cat sat on the [MASK] [MASK] ." | span fill --model ckpt',
    'span fill notes.jsonl --field text --model ckpt --head sbo --k 3',
  ]
  static override args = {file: Args.string({description: 'input file (instead of --input)', ignoreStdin: true})}
  static override flags = {
    ...ioFlags,
    model: Flags.string({
      description:
        'checkpoint directory with the MLM and/or SBO head (span pretrain, SpanBERT); a run directory means its best/, else its newest checkpoint-STEP/',
      required: true,
    }),
    vocab: Flags.string({description: 'vocabulary file, for a checkpoint without vocab.txt'}),
    head: Flags.string({description: 'which head predicts: mlm, sbo, or both (summed log-probabilities)', options: ['mlm', 'sbo', 'both'], default: 'both'}),
    k: Flags.integer({description: 'fillings per span (at most 1000)', default: 5, min: 1, max: 1000}),
    beam: Flags.integer({
      description: 'beam width, at least --k (default: 10, or --k when that is larger; at most 1000: each step scores beam × vocabulary candidates)',
      min: 1,
      max: 1000,
    }),
    field: Flags.string({description: 'read JSONL and fill this string field of each record'}),
    binary: binaryFlag,
    ...backendFlags(),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Fill)
    const beam = flags.beam ?? Math.max(10, flags.k)
    if (beam < flags.k) throw new UsageError(`--beam ${beam} is narrower than --k ${flags.k}: the beam keeps the --k best fillings, so it must be at least --k`)
    const src = await openSource(args.file ?? flags.input)
    await initBackend(flags.backend as BackendChoice, flags)
    const {model, vocabPath, initialised} = await loadCheckpoint(
      modelDir(flags.model, (l) => process.stderr.write(`span fill: ${l}\n`)),
      {objectives: ['mlm', 'sbo'], vocab: flags.vocab},
    )
    try {
      checkHeads(initialised, flags.head as FillHead, flags.model)
      const vocab = loadVocab(vocabPath)
      const tok = new WordPieceTokenizer(vocab, {lowercase: !vocab.cased})
      const opts = {head: flags.head as FillHead, k: flags.k, beam}
      const readable = flags.output === '-' && process.stdout.isTTY === true
      await this.withOutput(flags.output, async (w) => {
        for await (const {text, no} of texts(src, flags.field, flags.binary as BinaryMode)) {
          const spans = fillText(model, tok, text, opts, src.name, no)
          await w.line(readable ? fillReadable(text, spans) : fillRecord(text, spans))
        }
      })
    } finally {
      model.dispose()
    }
  }
}

/** Non-blank lines, or the --field string of each JSONL record. */
async function* texts(src: Awaited<ReturnType<typeof openSource>>, field: string | undefined, binary: BinaryMode): AsyncGenerator<{text: string; no: number}> {
  if (field === undefined) {
    for await (const l of readLines(src, binary)) if (l.text.trim() !== '') yield l
    return
  }
  for await (const rec of readNdjson(src)) {
    const v = rec.value[field]
    if (typeof v !== 'string') throw errorAt(src.name, rec.line, `field "${field}" is not a string`)
    yield {text: v, no: rec.line}
  }
}
