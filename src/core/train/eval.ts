import {collate, disposeBatch, type MaskedExample, toTensors} from '../model/batch.js'
import {EVAL} from '../model/layers.js'
import type {SpanBertForPreTraining} from '../model/pretraining.js'
import {SpanError, openSource, openStage} from '../stream/index.js'
import {type DataRules, ExampleMaker, checkRecord, guessKind} from './examples.js'
import type {Masker} from '../data/mask.js'
import {STREAM} from './sampler.js'
import {Tally, evalBatch} from './objective.js'

/** What an evaluation needs besides the model. */
export interface EvalSetup {
  path: string
  rules: Omit<DataRules, 'kind'>
  masker: (kind: 'masked' | 'blocks') => Masker | null
  seed: number
  batchSize: number
  maxTargets: number
}

/**
 * Held-out evaluation over the whole file, dropout off: MLM and SBO (and NSP) loss per target
 * and argmax accuracy. The file is streamed each time (memory: one batch); blocks are masked
 * with generators derived from (seed, eval stream, index), the same masks at every evaluation.
 */
export async function evaluate(model: SpanBertForPreTraining, e: EvalSetup): Promise<Tally> {
  const src = await openSource(e.path)
  const input = await openStage(src, ['masked', 'blocks'])
  const tally = new Tally()
  let maker: ExampleMaker | null = null
  let rules: DataRules | null = null
  let batch: MaskedExample[] = []
  let index = 0
  for await (const rec of input.records) {
    if (!rules) {
      rules = {...e.rules, kind: input.header ? (input.header.kind as 'masked' | 'blocks') : guessKind(rec)}
      maker = new ExampleMaker(rules, e.masker(rules.kind), e.seed, STREAM.evalMask, src.name)
    }
    checkRecord(rec, rules, src.name)
    batch.push(maker!.make(rec, index++, 0))
    if (batch.length === e.batchSize) {
      runBatch(model, batch, e, tally)
      batch = []
    }
  }
  if (batch.length > 0) runBatch(model, batch, e, tally)
  return tally
}

/** Reads the eval file once before training, so a bad record stops the run before its first step. */
export async function checkEvalFile(e: EvalSetup): Promise<number> {
  const src = await openSource(e.path)
  const input = await openStage(src, ['masked', 'blocks'])
  let rules: DataRules | null = null
  let n = 0
  for await (const rec of input.records) {
    rules ??= {...e.rules, kind: input.header ? (input.header.kind as 'masked' | 'blocks') : guessKind(rec)}
    checkRecord(rec, rules, src.name)
    n++
  }
  if (n === 0) throw new SpanError(`${src.name}: no evaluation examples`)
  return n
}

function runBatch(model: SpanBertForPreTraining, examples: MaskedExample[], e: EvalSetup, tally: Tally): void {
  const host = collate(examples, {padId: e.rules.special.pad, maxTargets: e.maxTargets, maxPositions: model.config.max_position_embeddings})
  if (host.mlmPos.length === 0) return
  const b = toTensors(host)
  try {
    const {stats, total} = evalBatch(model, b, EVAL)
    tally.add(stats, total, host.mask.reduce((a, x) => a + x, 0))
  } finally {
    disposeBatch(b)
  }
}
