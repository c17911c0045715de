/**
 * Examples to features (convert_examples_to_features), one question at a time; the questions of
 * one paragraph share its tokenized passage.
 */
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import type {SquadExample} from './dataset.js'
import {splitDoc} from './doc.js'
import {DEFAULT_WINDOWS, answerTokenSpan, docSpans, isMaxContext, tokenizeDoc, type SquadFeature, type TokenizedDoc, type WindowOptions} from './features.js'

/** What building one question's features gave: its windows, or why training skips it. */
export interface FeatureResult {
  features: SquadFeature[]
  /** training only: run_squad's "Could not find answer" (the example is skipped) */
  answerNotFound: boolean
}

export class SquadFeaturizer {
  readonly opts: WindowOptions
  private lastContext: string | null = null
  private lastDoc: TokenizedDoc | null = null

  constructor(readonly tokenizer: WordPieceTokenizer, opts: Partial<WindowOptions> = {}) {
    this.opts = {...DEFAULT_WINDOWS, ...opts}
    if (this.opts.maxLen < this.opts.maxQueryLen + 4) throw new Error(`maxLen ${this.opts.maxLen} leaves no room for the passage after a question of ${this.opts.maxQueryLen} tokens`)
    if (this.opts.docStride < 1) throw new Error('docStride must be at least 1')
  }

  /** The tokenized passage of a context (cached for consecutive questions on it). */
  doc(context: string): TokenizedDoc {
    if (context !== this.lastContext || !this.lastDoc) {
      this.lastDoc = tokenizeDoc(splitDoc(context), this.tokenizer)
      this.lastContext = context
    }
    return this.lastDoc
  }

  /**
   * The windows of one question. With `labels`, start/end are the first answer's positions in
   * windows that contain it whole, else 0 ([CLS]); unanswerable questions are 0 everywhere.
   */
  features(ex: SquadExample, exampleIndex: number, labels: boolean): FeatureResult {
    const doc = this.doc(ex.context)
    const span = labels && !ex.isImpossible ? answerTokenSpan(doc, ex, this.tokenizer) : null
    if (labels && !ex.isImpossible && !span) return {features: [], answerNotFound: true}
    const query = this.tokenizer.encode(ex.question).slice(0, this.opts.maxQueryLen)
    const spans = docSpans(doc.subTokens.length, this.opts.maxLen - query.length - 3, this.opts.docStride)
    const features = spans.map((s, w) => this.window(doc, spans, w, query, exampleIndex, ex.id))
    if (span) for (const f of features) setLabels(f, span, spans[f.window])
    return {features, answerNotFound: false}
  }

  /** One `[CLS] question [SEP] window [SEP]` feature. */
  private window(doc: TokenizedDoc, spans: {start: number; length: number}[], w: number, query: number[], exampleIndex: number, qid: string): SquadFeature {
    const {cls, sep} = this.tokenizer.vocab.special
    const ids = [cls, ...query, sep]
    const segments = ids.map(() => 0)
    const tokenToOrig = ids.map(() => -1)
    const maxContext = ids.map(() => false)
    const {start, length} = spans[w]
    for (let i = start; i < start + length; i++) {
      tokenToOrig.push(doc.tokToOrig[i])
      maxContext.push(isMaxContext(spans, w, i))
      ids.push(doc.subIds[i])
      segments.push(1)
    }
    ids.push(sep)
    segments.push(1)
    tokenToOrig.push(-1)
    maxContext.push(false)
    const tokens = ids.map((id) => this.tokenizer.vocab.tokens[id])
    return {exampleIndex, qid, window: w, tokens, ids, segments, docStart: start, docOffset: query.length + 2, tokenToOrig, maxContext, start: 0, end: 0}
  }
}

/** start_position/end_position of one window: the span when it lies inside, else 0 ([CLS]). */
function setLabels(f: SquadFeature, [s, e]: [number, number], span: {start: number; length: number}): void {
  const docEnd = span.start + span.length - 1
  if (s >= span.start && e <= docEnd) {
    f.start = s - span.start + f.docOffset
    f.end = e - span.start + f.docOffset
  }
}
