import * as tf from '@tensorflow/tfjs'
import {checkIds, parseDoc} from '../data/records.js'
import {errorAt, type Rec, type StageInput} from '../stream/index.js'
import type {SpecialIds} from '../stream/header.js'
import type {BertConfig} from './config.js'
import {type Pooling, fmt, formatRow, hiddenStates, pool} from './encode.js'
import type {SpanBertForPreTraining} from './pretraining.js'
import {maxOf} from '../util/arrays.js'

/** How span vectors are made from token states (SpanBERT issue #71): [h(s); h(e)], the mean or the max over s…e. */
export type SpanPool = 'endpoints' | 'mean' | 'max'

/** One sequence to encode, with what its output record carries along. */
export interface EncodeItem {
  ids: number[]
  segments: number[]
  doc?: number
  /** token positions [start, end] (inclusive) in `ids` as encoded */
  spans?: [number, number][]
}

export interface EncodeOptions {
  pool: Pooling
  layers: number[]
  digits: number
  /** span vectors instead of token states (records must carry `spans`) */
  spanPool: SpanPool | null
}

/** A block as is; a token record wrapped in [CLS] … [SEP] (its spans shifted by one). Checked against the model. */
export function toEncodeItem(rec: Rec, input: StageInput, c: BertConfig, special: SpecialIds, wantSpans: boolean): EncodeItem {
  const v = rec.value
  if ('targets' in v) throw errorAt(input.source, rec.line, 'expected blocks or token records, got a masked example (from span mask)')
  if (!('ids' in v)) throw errorAt(input.source, rec.line, 'missing field "ids" (expected blocks from span block or token records from span tokenize)')
  let ids = checkIds(v.ids, 'ids', c.vocab_size, input.source, rec.line)
  const isBlock = input.header ? input.header.kind === 'blocks' : ids.length >= 2 && ids[0] === special.cls && ids[ids.length - 1] === special.sep
  const given = ids.length
  if (!isBlock) ids = [special.cls, ...ids, special.sep]
  if (ids.length > c.max_position_embeddings) {
    throw errorAt(
      input.source,
      rec.line,
      `a sequence of ${ids.length} tokens is longer than the model's ${c.max_position_embeddings} positions (max_position_embeddings)`,
    )
  }
  const segments =
    isBlock && Array.isArray(v.segments) ? checkIds(v.segments, 'segments', c.type_vocab_size, input.source, rec.line) : new Array<number>(ids.length).fill(0)
  if (segments.length !== ids.length) throw errorAt(input.source, rec.line, 'field "segments" must have one entry per id')
  const doc = parseDoc(v.doc, (msg) => errorAt(input.source, rec.line, msg))
  const item: EncodeItem = doc === null ? {ids, segments} : {ids, segments, doc}
  if (wantSpans) item.spans = checkSpans(v.spans, given, isBlock ? 0 : 1, input.source, rec.line)
  return item
}

/** `spans: [[start, end], …]`, token positions of the record's ids, 0 ≤ start ≤ end < n. */
function checkSpans(raw: unknown, n: number, shift: number, source: string, line: number): [number, number][] {
  if (!Array.isArray(raw)) throw errorAt(source, line, '--spans: the record has no "spans" field ([[start, end], …] token positions)')
  return raw.map((s: unknown) => {
    const ok = Array.isArray(s) && s.length === 2 && s.every((x) => Number.isInteger(x)) && 0 <= s[0] && s[0] <= s[1] && s[1] < n
    if (!ok) throw errorAt(source, line, `--spans: ${JSON.stringify(s)} is not a span [start, end] of this record's ${n} tokens (0-based, inclusive)`)
    return [(s as number[])[0] + shift, (s as number[])[1] + shift] as [number, number]
  })
}

/** Pads a batch, runs the encoder (dropout off) and returns one output line per item. */
export async function encodeBatch(model: SpanBertForPreTraining, items: EncodeItem[], o: EncodeOptions, padId: number): Promise<string[]> {
  const B = items.length
  const T = maxOf(items.map((it) => it.ids.length))
  const ids = new Int32Array(B * T).fill(padId)
  const seg = new Int32Array(B * T)
  const mask = new Float32Array(B * T)
  items.forEach((it, b) =>
    it.ids.forEach((id, t) => {
      ids[b * T + t] = id
      seg[b * T + t] = it.segments[t]
      mask[b * T + t] = 1
    }),
  )
  const poolHere = o.pool !== 'none' && !o.spanPool
  const out = tf.tidy(() => {
    const m = tf.tensor2d(mask, [B, T]) // [B, T]
    const h = hiddenStates(model.params, model.config, tf.tensor2d(ids, [B, T], 'int32'), tf.tensor2d(seg, [B, T], 'int32'), m, o.layers) // [B, T, D]
    return poolHere ? pool(h, m, o.pool as 'cls' | 'mean') : h // [B, D] or [B, T, D]
  })
  const data = (await out.data()) as Float32Array
  const D = out.shape[out.shape.length - 1]
  out.dispose()
  return items.map((it, b) => formatItem(it, data, b, T, D, o))
}

function formatItem(it: EncodeItem, data: Float32Array, b: number, T: number, D: number, o: EncodeOptions): string {
  const head = it.doc === undefined ? '{' : `{"doc":${it.doc},`
  if (o.spanPool) return `${head}"spans":[${(it.spans ?? []).map(([s, e]) => spanVector(data, (b * T + s) * D, (b * T + e) * D, D, o)).join(',')}]}`
  if (o.pool !== 'none') return `${head}"vector":${formatRow(data, b * D, D, o.digits)}}`
  const rows = new Array<string>(it.ids.length)
  for (let t = 0; t < it.ids.length; t++) rows[t] = formatRow(data, (b * T + t) * D, D, o.digits)
  return `${head}"hidden":[${rows.join(',')}]}`
}

/** The vector of the span whose first and last token states start at offsets `s` and `e` of data (rows of D). */
export function spanVector(data: Float32Array, s: number, e: number, D: number, o: Pick<EncodeOptions, 'spanPool' | 'digits'>): string {
  if (o.spanPool === 'endpoints') return `[${formatRow(data, s, D, o.digits).slice(1, -1)},${formatRow(data, e, D, o.digits).slice(1, -1)}]`
  const out = new Array<string>(D)
  const n = (e - s) / D + 1
  for (let j = 0; j < D; j++) {
    let acc = o.spanPool === 'max' ? -Infinity : 0
    for (let k = 0; k < n; k++) {
      const x = data[s + k * D + j]
      acc = o.spanPool === 'max' ? Math.max(acc, x) : acc + x
    }
    out[j] = fmt(o.spanPool === 'max' ? acc : acc / n, o.digits)
  }
  return `[${out.join(',')}]`
}
