import {SpanError, errorAt} from '../stream/errors.js'
import type {SpecialIds} from '../stream/header.js'
import type {WordPieceTokenizer} from '../text/tokenizer.js'
import {type FillHead, type Filling, beamSearch, detokenize, maskLogProbs, neededHeads, parseMasks} from './fill.js'
import type {SpanBertForPreTraining} from './pretraining.js'

export interface FillOptions {
  head: FillHead
  k: number
  beam: number
}

export interface FilledSpan {
  start: number
  end: number
  fills: {text: string; score: number}[]
}

/** Refuses a checkpoint that lacks a head the fill needs (loadCheckpoint initialised it). */
export function checkHeads(initialised: string[], head: FillHead, dir: string): void {
  for (const need of neededHeads(head)) {
    if (initialised.some((n) => n.startsWith(need.prefix))) {
      throw new SpanError(`${dir}: the checkpoint has no ${need.what}; --head ${head} needs it${head === 'mlm' ? '' : ' (try --head mlm)'}`)
    }
  }
}

/** Ids never offered as fillings: padding, [CLS], [SEP], [MASK], [UNK]. */
export const bannedIds = (s: SpecialIds): Set<number> => new Set([s.pad, s.cls, s.sep, s.mask, s.unk])

/** The fillings of every [MASK] run of one text (errors point at source:line). */
export function fillText(model: SpanBertForPreTraining, tok: WordPieceTokenizer, text: string, o: FillOptions, source: string, line: number): FilledSpan[] {
  const special = tok.vocab.special
  let q
  try {
    q = parseMasks(text, tok, special, model.config.max_position_embeddings)
    const {lp, V} = maskLogProbs(model, q.ids, q.runs, o.head)
    let row = 0
    return q.runs.map((r) => {
      const fills = beamSearch(lp, V, row, r.len, o.k, Math.max(o.beam, o.k), bannedIds(special))
      row += r.len
      return {
        start: r.start,
        end: r.end,
        fills: fills.map((f: Filling) => ({text: detokenize(f.ids.map((id) => tok.vocab.tokens[id])), score: round(f.score)})),
      }
    })
  } catch (err) {
    if (err instanceof SpanError) throw errorAt(source, line, err.message)
    throw err
  }
}

const round = (x: number): number => Number(x.toFixed(4))

/** The NDJSON record of one text. */
export const fillRecord = (text: string, spans: FilledSpan[]): string => JSON.stringify({text, spans})

/** The readable form: the text with the best filling in «», then each span's alternatives. */
export function fillReadable(text: string, spans: FilledSpan[]): string {
  let out = ''
  let at = 0
  for (const s of spans) {
    out += `${text.slice(at, s.start)}«${s.fills[0]?.text ?? ''}»`
    at = s.end
  }
  const lines = [out + text.slice(at)]
  spans.forEach((s, i) => lines.push(`  span ${i + 1}: ${s.fills.map((f) => `${f.text} (${f.score.toFixed(2)})`).join(' | ')}`))
  return lines.join('\n')
}
