import {Args, Flags} from '@oclif/core'
import {SpanCommand, ioFlags} from '../cli/base.js'
import {backendFlagsNoPrecision} from '../cli/backend-flags.js'
import {MAX_BATCH} from '../cli/limits.js'
import {type BackendChoice, initBackend} from '../core/engine/backend.js'
import {loadCheckpoint} from '../core/model/checkpoint.js'
import {modelDir} from '../core/train/run-dir.js'
import {type Pooling, parseLayers} from '../core/model/encode.js'
import {type EncodeItem, type SpanPool, encodeBatch, toEncodeItem} from '../core/model/encode-batch.js'
import {SpanError, UsageError, openSource, openStage, type Header} from '../core/stream/index.js'
import {loadVocab, type Vocab} from '../core/text/vocab.js'

export default class Encode extends SpanCommand {
  static override summary = 'Contextual vectors from a pre-trained encoder: per token, pooled, per span, or several layers concatenated'
  static override description = `Reads blocks (span block) or token records (span tokenize; then wrapped in [CLS] … [SEP]) and
writes one record per input record: {"hidden": [[…], …]} with the chosen layers' states of every token
(--layers -1 the last; -1,-2,-3,-4 concatenates the last four, the feature-based use of BERT §5.3), or
with --pool {"vector": […]}: the [CLS] state or the mean over the sequence's tokens, or with --spans
{"spans": [[…], …]}: one vector per [start, end] of the record's "spans" (token positions of its ids,
inclusive), --span-pool endpoints ([h(start); h(end)]), mean or max. Dropout is off. Numbers carry
--precision significant digits; the matrix products' precision is --compute-precision (fp32, tf32, bf16 or fp16 on
cuda; fp32 or bf16 on native where the CPU has bf16 dot products: other commands call it --precision). A "doc"
field is passed through.`
  static override examples = [
    'span tokenize < text.txt | span block --len 128 | span encode --model ckpt --pool mean',
    'span encode blocks.ndjson --model ckpt --layers -1,-2,-3,-4 --precision 4',
    'span encode spans.ndjson --model ckpt --spans --span-pool endpoints',
    'span encode blocks.ndjson --model ckpt --backend cuda --compute-precision fp32 --precision 8',
  ]
  static override args = {file: Args.string({description: 'input file (instead of --input)', ignoreStdin: true})}
  static override flags = {
    ...ioFlags,
    model: Flags.string({description: 'checkpoint directory (span pretrain, or a Hugging Face BERT: safetensors or pytorch_model.bin); a run directory means its best/, else its newest checkpoint-STEP/', required: true}),
    vocab: Flags.string({description: 'vocabulary file, for a checkpoint without vocab.txt'}),
    pool: Flags.string({description: 'none: every token; cls: the [CLS] state; mean: the mean over tokens', options: ['none', 'cls', 'mean'], default: 'none'}),
    spans: Flags.boolean({description: 'one vector per span of each record\'s "spans" field', default: false}),
    'span-pool': Flags.string({description: 'span vector: endpoints [h(start); h(end)], mean or max over the span', options: ['endpoints', 'mean', 'max'], default: 'endpoints'}),
    layers: Flags.string({description: 'hidden states to concatenate per token (0 = embeddings, -1 = last layer)', default: '-1'}),
    'batch-size': Flags.integer({description: 'sequences per forward pass', default: 32, min: 1, max: MAX_BATCH}),
    precision: Flags.integer({description: 'significant digits of each number', default: 6, min: 1, max: 17}),
    ...backendFlagsNoPrecision(),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Encode)
    if (flags.spans && flags.pool !== 'none') throw new UsageError('--spans and --pool: choose one')
    const src = await openSource(args.file ?? flags.input)
    const input = await openStage(src, ['tokens', 'blocks'])
    await initBackend(flags.backend as BackendChoice, {threads: flags.threads, device: flags.device, precision: flags['compute-precision'], precisionFlag: '--compute-precision'})
    const {model, vocabPath} = await loadCheckpoint(modelDir(flags.model, (l) => process.stderr.write(`span encode: ${l}\n`)), {vocab: flags.vocab})
    try {
      const vocab = loadVocab(vocabPath)
      checkVocab(input.header, vocab, vocabPath, src.name)
      const opts = {pool: flags.pool as Pooling, layers: parseLayers(flags.layers, model.config.num_hidden_layers), digits: flags.precision,
        spanPool: flags.spans ? (flags['span-pool'] as SpanPool) : null}
      await this.withOutput(flags.output, async (w) => {
        let batch: EncodeItem[] = []
        const flush = async () => {
          for (const line of await encodeBatch(model, batch, opts, vocab.special.pad)) await w.line(line)
          batch = []
        }
        for await (const rec of input.records) {
          batch.push(toEncodeItem(rec, input, model.config, vocab.special, flags.spans))
          if (batch.length === flags['batch-size']) await flush()
        }
        if (batch.length > 0) await flush()
      })
    } finally {
      model.dispose()
    }
  }
}

/** The stream must be tokenized with the checkpoint's vocabulary. */
function checkVocab(header: Header | null, vocab: Vocab, vocabPath: string, source: string): void {
  const want = header?.vocab?.sha256
  if (want && want !== vocab.info.sha256) {
    throw new SpanError(`${source}: tokenized with ${header?.vocab?.path}, not with the model's vocabulary ${vocabPath} (sha256 differs)`)
  }
}
