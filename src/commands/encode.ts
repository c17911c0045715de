import * as tf from '@tensorflow/tfjs'
import {Args, Flags} from '@oclif/core'
import {SpanCommand, ioFlags} from '../base.js'
import {checkIds} from '../core/data/records.js'
import {backendFlags} from '../backend-flags.js'
import {type BackendChoice, initBackend} from '../core/engine/backend.js'
import {loadCheckpoint} from '../core/model/checkpoint.js'
import {type Pooling, formatRow, hiddenStates, parseLayers, pool} from '../core/model/encode.js'
import type {SpanBertForPreTraining} from '../core/model/pretraining.js'
import {SpanError, errorAt, openSource, openStage, type Header, type Rec, type StageInput} from '../core/stream/index.js'
import type {LineWriter} from '../core/stream/writer.js'
import {loadVocab, type Vocab} from '../core/text/vocab.js'

/** One sequence to encode, with what its output record carries along. */
interface Item {
  ids: number[]
  segments: number[]
  doc?: number
}

interface EncodeOptions {
  pool: Pooling
  layers: number[]
  digits: number
}

export default class Encode extends SpanCommand {
  static override summary = 'Contextual vectors from a pre-trained encoder: per token, pooled, or several layers concatenated'
  static override description = `Reads blocks (span block) or token records (span tokenize; then wrapped in [CLS] … [SEP]) and
writes one record per input record: {"hidden": [[…], …]} with the chosen layers' states of every token
(--layers -1 the last; -1,-2,-3,-4 concatenates the last four, the feature-based use of BERT §5.3), or
with --pool {"vector": […]}: the [CLS] state or the mean over the sequence's tokens. Dropout is off.
Numbers carry --precision significant digits. A "doc" field is passed through.`
  static override examples = [
    'span tokenize < text.txt | span block --len 128 | span encode --model ckpt --pool mean',
    'span encode blocks.ndjson --model ckpt --layers -1,-2,-3,-4 --precision 4',
  ]
  static override args = {file: Args.string({description: 'input file (instead of --input)', ignoreStdin: true})}
  static override flags = {
    ...ioFlags,
    model: Flags.string({description: 'checkpoint directory (span pretrain, or a Hugging Face BERT)', required: true}),
    pool: Flags.string({description: 'none: every token; cls: the [CLS] state; mean: the mean over tokens', options: ['none', 'cls', 'mean'], default: 'none'}),
    layers: Flags.string({description: 'hidden states to concatenate per token (0 = embeddings, -1 = last layer)', default: '-1'}),
    'batch-size': Flags.integer({description: 'sequences per forward pass', default: 32, min: 1}),
    precision: Flags.integer({description: 'significant digits of each number', default: 6, min: 1, max: 17}),
    ...backendFlags(),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Encode)
    const src = await openSource(args.file ?? flags.input)
    const input = await openStage(src, ['tokens', 'blocks'])
    await initBackend(flags.backend as BackendChoice, flags.threads)
    const {model, vocabPath} = await loadCheckpoint(flags.model)
    try {
      const vocab = loadVocab(vocabPath)
      checkVocab(input.header, vocab, flags.model, src.name)
      const opts = {pool: flags.pool as Pooling, layers: parseLayers(flags.layers, model.config.num_hidden_layers), digits: flags.precision}
      await this.withOutput(flags.output, async (w) => {
        let batch: Item[] = []
        for await (const rec of input.records) {
          batch.push(toItem(rec, input, model, vocab))
          if (batch.length === flags['batch-size']) batch = await encodeBatch(model, batch, opts, vocab.special.pad, w)
        }
        if (batch.length > 0) await encodeBatch(model, batch, opts, vocab.special.pad, w)
      })
    } finally {
      model.dispose()
    }
  }
}

/** The stream must be tokenized with the checkpoint's vocabulary. */
function checkVocab(header: Header | null, vocab: Vocab, dir: string, source: string): void {
  const want = header?.vocab?.sha256
  if (want && want !== vocab.info.sha256) {
    throw new SpanError(`${source}: tokenized with ${header?.vocab?.path}, not with the model's vocabulary ${dir}/vocab.txt (sha256 differs)`)
  }
}

/** A block as is; a token record wrapped in [CLS] … [SEP]. Checked against the model's vocabulary and positions. */
function toItem(rec: Rec, input: StageInput, model: SpanBertForPreTraining, vocab: Vocab): Item {
  const v = rec.value
  const c = model.config
  if ('targets' in v) throw errorAt(input.source, rec.line, 'expected blocks or token records, got a masked example (from span mask)')
  if (!('ids' in v)) throw errorAt(input.source, rec.line, 'missing field "ids" (expected blocks from span block or token records from span tokenize)')
  let ids = checkIds(v.ids, 'ids', c.vocab_size, input.source, rec.line)
  const {cls, sep} = vocab.special
  const isBlock = input.header ? input.header.kind === 'blocks' : ids.length >= 2 && ids[0] === cls && ids[ids.length - 1] === sep
  if (!isBlock) ids = [cls, ...ids, sep]
  if (ids.length > c.max_position_embeddings) {
    throw errorAt(input.source, rec.line, `a sequence of ${ids.length} tokens is longer than the model's ${c.max_position_embeddings} positions (max_position_embeddings)`)
  }
  const segments = isBlock && Array.isArray(v.segments) ? checkIds(v.segments, 'segments', c.type_vocab_size, input.source, rec.line) : new Array<number>(ids.length).fill(0)
  if (segments.length !== ids.length) throw errorAt(input.source, rec.line, 'field "segments" must have one entry per id')
  return Number.isInteger(v.doc) ? {ids, segments, doc: v.doc as number} : {ids, segments}
}

/** Pads a batch, runs the encoder, writes one record per item; returns a fresh empty batch. */
async function encodeBatch(model: SpanBertForPreTraining, items: Item[], o: EncodeOptions, padId: number, w: LineWriter): Promise<Item[]> {
  const B = items.length
  const T = Math.max(...items.map((it) => it.ids.length))
  const ids = new Int32Array(B * T).fill(padId)
  const seg = new Int32Array(B * T)
  const mask = new Float32Array(B * T)
  items.forEach((it, b) => it.ids.forEach((id, t) => {
    ids[b * T + t] = id
    seg[b * T + t] = it.segments[t]
    mask[b * T + t] = 1
  }))
  const out = tf.tidy(() => {
    const m = tf.tensor2d(mask, [B, T]) // [B, T]
    const h = hiddenStates(model.params, model.config, tf.tensor2d(ids, [B, T], 'int32'), tf.tensor2d(seg, [B, T], 'int32'), m, o.layers) // [B, T, D]
    return o.pool === 'none' ? h : pool(h, m, o.pool) // [B, T, D] or [B, D]
  })
  const data = (await out.data()) as Float32Array
  const D = out.shape[out.shape.length - 1]
  out.dispose()
  for (let b = 0; b < B; b++) await w.line(formatItem(items[b], data, b, T, D, o))
  return []
}

function formatItem(it: Item, data: Float32Array, b: number, T: number, D: number, o: EncodeOptions): string {
  const head = it.doc === undefined ? '{' : `{"doc":${it.doc},`
  if (o.pool !== 'none') return `${head}"vector":${formatRow(data, b * D, D, o.digits)}}`
  const rows = new Array<string>(it.ids.length)
  for (let t = 0; t < it.ids.length; t++) rows[t] = formatRow(data, (b * T + t) * D, D, o.digits)
  return `${head}"hidden":[${rows.join(',')}]}`
}
