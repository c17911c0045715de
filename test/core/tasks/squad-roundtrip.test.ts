// The model-independent pipeline end to end, with an oracle in place of the model: features with
// labels → logits that point at the labels (or [CLS]) → decoding → predictions.json and
// null_odds.json → the official scorer. What finetune/predict will do, minus the network.
import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {expect, it} from 'vitest'
import {SHARED_DATA, describeShared, ifShared} from '../../helpers/shared-data.js'
import {evaluateV1, evaluateV2} from '../../../src/core/metrics/squad.js'
import {SquadFeaturizer, collectOutputs, decodeQuestion, readNaProbsFile, readPredictionsFile, readSquadFile, writeSquadOutputs, type FeatureLogits, type SquadDataset, type SquadFeature} from '../../../src/core/tasks/squad/index.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {loadVocab} from '../../../src/core/text/vocab.js'

const describe = describeShared('vocab/bert-base-cased.txt', 'squad')

const DATA = SHARED_DATA
const tok = ifShared(['vocab/bert-base-cased.txt'], () => new WordPieceTokenizer(loadVocab(join(DATA, 'vocab', 'bert-base-cased.txt')), {lowercase: false}))

/** Logits that are sure of a feature's label: 10 at start/end, [CLS] 10 only when the label is [CLS]. */
function oracle(f: SquadFeature): FeatureLogits {
  const start = new Float32Array(f.tokens.length).fill(-10)
  const end = new Float32Array(f.tokens.length).fill(-10)
  start[f.start] = 10
  end[f.end] = 10
  if (f.start !== 0) start[0] = end[0] = 0
  return {start, end}
}

async function roundTrip(ds: SquadDataset, v2: boolean) {
  const fz = new SquadFeaturizer(tok)
  const preds = ds.examples.map((ex, i) => {
    const {features} = fz.features(ex, i, true)
    return decodeQuestion(ex.id, fz.doc(ex.context), features, features.map(oracle), (t) => tok.basic(t), {v2})
  })
  const dir = mkdtempSync(join(tmpdir(), 'span-squad-rt-'))
  await writeSquadOutputs(dir, collectOutputs(preds))
  const gold = ds.examples.map((ex) => ({id: ex.id, answers: ex.answers.map((a) => a.text)}))
  const predictions = readPredictionsFile(join(dir, 'predictions.json'))
  const nbest = JSON.parse(readFileSync(join(dir, 'nbest_predictions.json'), 'utf8'))
  return {gold, predictions, nbest, dir}
}

describe('oracle logits through decoding and the official scorer', () => {
  it('XQuAD v1.1: everything right but the one gold answer cut inside a number', async () => {
    const {gold, predictions, nbest} = await roundTrip(readSquadFile(join(DATA, 'squad', 'xquad.en.json')), false)
    const r = evaluateV1(gold, predictions)
    expect(r.exact_match).toBeCloseTo((100 * 1189) / 1190, 9)
    expect(r.f1).toBeGreaterThan(99.95)
    expect(predictions.get('5729e2316aef0514001550c5')).toBe('7,000,000 square kilometres (2,700,000')
    expect(Object.keys(nbest)).toHaveLength(1190)
  })

  it('SQuAD 2.0 Normans/Rhine: all right but one answer longer than max_answer_length, null_odds written', async () => {
    const {gold, predictions, dir} = await roundTrip(readSquadFile(join(DATA, 'squad', 'squad-v2.0-dev-subset-normans-rhine.json')), true)
    const naProbs = readNaProbsFile(join(dir, 'null_odds.json'))
    const r = evaluateV2(gold, predictions, {naProbs})
    // 572fe60fb2c2fd140056858e's answer, a coordinate, is 32 WordPieces: over the 30-token cap, so "" wins
    expect(predictions.get('572fe60fb2c2fd140056858e')).toBe('')
    const right = (100 * 705) / 706
    expect(r).toMatchObject({total: 706, HasAns_total: 386, NoAns_exact: 100, NoAns_total: 320})
    for (const k of ['exact', 'f1', 'best_exact', 'best_f1']) expect(r[k]).toBeCloseTo(right, 9)
    expect(r.HasAns_exact).toBeCloseTo((100 * 385) / 386, 9)
    const impossible = gold.filter((g) => g.answers.length === 0).map((g) => g.id)
    expect(impossible.every((id) => predictions.get(id) === '' && (naProbs.get(id) as number) > 0)).toBe(true)
  })
})
