import {Args, Flags} from '@oclif/core'
import {join} from 'node:path'
import {SpanCommand, VERSION, ioFlags} from '../cli/base.js'
import {backendFlags} from '../cli/backend-flags.js'
import {predictModel} from '../cli/finetune-flags.js'
import {type BackendChoice, initBackend} from '../core/engine/backend.js'
import {VOCAB_FILE} from '../core/model/checkpoint.js'
import {SpanError, UsageError, nextHeader, openSource, openStage, type Header} from '../core/stream/index.js'
import {TagProgress, kindOf, taggerTables, writeTagged} from '../core/tasks/ner/tag-stream.js'
import {RecordTagger} from '../core/tasks/ner/tag-records.js'
import {type NerFinetuneConfig, nerModel} from '../core/tasks/ner/train.js'
import {loadVocab, type Vocab} from '../core/text/vocab.js'

export default class Tag extends SpanCommand {
  static override summary = 'Add tags (named entities, noun phrases) to token records or blocks with a fine-tuned token classifier'
  static override description = [
    'Reads token records (span tokenize) or blocks (span block) and writes them back with a "tags" field (docs/formats.md#tags: [start, end, label] over ids, ends inclusive), from a model of span finetune ner: an NER tagger (CoNLL-2003: PER, ORG, LOC, MISC) or a noun-phrase chunker trained on the chunk column (span finetune ner --tag-column chunk --tag-types NP; label NP). Tags a record already had are replaced.',
    'Words are read off the ids (a token that is not a ## piece starts a word); each run of non-special ids is windowed and each word predicted at its first sub-token exactly as span predict ner does; a chunk of words becomes the tag from its first word\'s first sub-token to its last word\'s last. --labels keeps a subset; numeric entities are dropped unless --keep-numeric (NP chunks are kept whatever their words; for entities: spaCy\'s DATE, TIME, PERCENT, MONEY, QUANTITY, ORDINAL, CARDINAL, and any mention without a letter, such as "1996" or "3-1"; SpanBERT §5).',
    "Streams: --chunk records at a time are tagged in batches of --batch-size windows, then written; memory does not grow with the input. The stream's vocabulary must be the model's.",
  ].join('\n\n')
  static override examples = [
    'span tokenize wiki.txt | span tag --model ner-run | span block | span mask --scheme entity',
    'span tokenize wiki.txt | span tag --model np-run | span block | span mask --scheme noun-phrase',
  ]
  static override args = {file: Args.string({description: 'input file (instead of --input)', ignoreStdin: true})}
  static override flags = {
    ...ioFlags,
    model: Flags.string({description: 'a span finetune ner run or checkpoint directory', required: true}),
    labels: Flags.string({description: 'comma-separated labels to keep (default: all the model has)'}),
    'keep-numeric': Flags.boolean({description: 'keep numeric entities (dropped by default, as SpanBERT §5)', default: false}),
    'batch-size': Flags.integer({description: 'windows per forward pass', default: 32, min: 1}),
    chunk: Flags.integer({description: 'records read, tagged and written at a time', default: 256, min: 1}),
    'max-len': Flags.integer({description: "tokens per window (default: the model's fine-tuning setting)", min: 4}),
    ...backendFlags(),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Tag)
    const {dir, c, vocab, keep} = await this.model(flags)
    const src = await openSource(args.file ?? flags.input)
    const input = await openStage(src, ['tokens', 'blocks'])
    checkVocab(input.header, vocab, src.name, flags.model)
    const maxLen = flags['max-len'] ?? c['max-len']
    await initBackend(flags.backend as BackendChoice, flags)
    const head = {num_labels: c.labels.length, labels: c.labels, finetuning_task: 'ner', span_ft: null}
    const model = await nerModel(dir, undefined, head, vocab.tokens.length, maxLen, 0, () => {})
    const opts = {
      labels: c.labels,
      keep: keep ? (l: string) => keep.includes(l) : null,
      dropNumeric: !flags['keep-numeric'],
      maxLen,
      stride: c.stride,
      batchSize: flags['batch-size'],
    }
    const tagger = new RecordTagger(model, {...opts, ...taggerTables(vocab)})
    const entry = {stage: 'tag', version: VERSION, flags: {model: dir, labels: keep ?? typesOf(c), keepNumeric: flags['keep-numeric'], maxLen}}
    const progress = new TagProgress(process.stderr)
    try {
      await this.withOutput(flags.output, async (w) => {
        const first = await input.records.next()
        const kind = kindOf(input.header, first.done ? null : first.value.value, vocab)
        await w.record(nextHeader(input.header, kind, entry, headerPatch(input.header, vocab)))
        if (!first.done)
          await writeTagged(first.value, input.records, tagger, {chunk: flags.chunk, vocabSize: vocab.tokens.length, source: src.name}, w, progress)
      })
    } finally {
      model.dispose()
      progress.stop()
    }
    process.stderr.write(progress.summary(tagger))
  }

  /** --model checked (a span finetune ner run), its vocabulary, and --labels checked against its labels. */
  private async model(flags: {model: string; labels?: string}): Promise<{dir: string; c: NerFinetuneConfig; vocab: Vocab; keep: string[] | undefined}> {
    const {dir, saved} = await predictModel(flags.model, 'ner')
    if (saved.task !== 'ner') throw new SpanError(`${flags.model}: not a span finetune ner model (task ${JSON.stringify(saved.task ?? null)})`)
    const c = saved as unknown as NerFinetuneConfig
    const types = typesOf(c)
    const keep = flags.labels
      ?.split(',')
      .map((l) => l.trim())
      .filter((l) => l !== '')
    const unknown = keep?.filter((l) => !types.includes(l)) ?? []
    if (unknown.length > 0) throw new UsageError(`--labels: ${unknown.join(', ')} not among the model's labels (${types.join(', ')})`)
    return {dir, c, vocab: loadVocab(join(dir, VOCAB_FILE)), keep}
  }
}

/** The entity types of a model's IOB2 labels (B-PER, I-PER → PER). */
function typesOf(c: NerFinetuneConfig): string[] {
  return [...new Set(c.labels.filter((l) => l !== 'O').map((l) => l.slice(2)))]
}

/** The stream's vocabulary (its header's SHA-256) must be the model's: tags index ids the model has to read. */
function checkVocab(h: Header | null, vocab: Vocab, source: string, model: string): void {
  const want = h?.vocab?.sha256
  if (want && want !== vocab.info.sha256) {
    throw new SpanError(
      `${source}: tokenized with another vocabulary (sha256 ${want.slice(0, 12)}…) than ${model}'s (${vocab.info.sha256.slice(0, 12)}…): tokenize with the model's vocab.txt`,
    )
  }
}

function headerPatch(h: Header | null, vocab: Vocab): Partial<Header> {
  return {vocab: h?.vocab ?? vocab.info, cased: h?.cased ?? vocab.cased, special: h?.special ?? vocab.special}
}
