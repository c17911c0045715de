// The census of tfjs kernels that span's training and fine-tuning steps call, by step: what
// a backend (the cuda backend of issue 10) must provide. Prints it as JSON; the committed copy
// is src/core/engine/cuda/registry.ts, and test/core/engine/cuda/census.test.ts fails when
// the two differ.   npx tsx tools/kernel-census.ts [backend, default native]
import * as tf from '@tensorflow/tfjs'
import {Rng} from '../src/core/data/rng.js'
import {initBackend} from '../src/core/engine/backend.js'
import type {BackendChoice} from '../src/core/engine/backend.js'
import {recordKernels} from '../src/core/engine/cuda/census.js'
import {collate, disposeBatch, toTensors} from '../src/core/model/batch.js'
import type {ClsHostBatch, HeadConfig} from '../src/core/model/classifier.js'
import {BertForSequenceClassification} from '../src/core/model/classifier.js'
import {type BertConfig, presetConfig} from '../src/core/model/config.js'
import {SpanBertForPreTraining} from '../src/core/model/pretraining.js'
import {BertForQuestionAnswering} from '../src/core/model/qa.js'
import type {ParamStore} from '../src/core/model/params.js'
import {AdamW, clipByGlobalNorm} from '../src/core/train/optim.js'
import {gradsByName, trainStep} from '../src/core/train/step.js'

const B = 2
const T = 12
const config = (): BertConfig =>
  presetConfig('tiny', 40, {
    hidden_size: 16,
    num_attention_heads: 2,
    intermediate_size: 32,
    num_hidden_layers: 1,
    max_position_embeddings: 32,
    sbo: {position_embedding_size: 8, max_targets: 4},
  })

/** Token ids of B rows of T ([CLS] … [SEP], the last 3 of row 1 padding), segments and mask. */
function encoderBatch() {
  const ids = Int32Array.from({length: B * T}, (_, i) => 5 + (i % 30))
  const mask = Float32Array.from({length: B * T}, (_, i) => (i >= 2 * T - 3 ? 0 : 1))
  return {B, T, ids, segments: new Int32Array(B * T), mask}
}

/** Clipping and AdamW on gradients, as every trainer does. */
function update(params: ParamStore, grads: Map<string, tf.Tensor>): void {
  const opt = new AdamW()
  const {scale} = clipByGlobalNorm(grads, 1)
  opt.apply(params.entries(), grads, 1e-3, scale)
  tf.dispose([...grads.values()])
  opt.dispose()
}

function pretrain(): void {
  const model = SpanBertForPreTraining.init(config(), 1)
  const ex = (n: number) => ({
    ids: Array.from({length: n}, (_, i) => (i === 2 ? 3 : 5 + i)),
    targets: [[2, 7]] as [number, number][],
    spans: [[2, 2, 'mask']] as [number, number, 'mask'][],
  })
  const batch = toTensors(collate([ex(10), ex(12)], {padId: 0, maxTargets: 4, maxPositions: 32}))
  trainStep(model, new AdamW(), batch, 1e-3, {training: true, rng: new Rng(3)})
  disposeBatch(batch)
  model.dispose()
}

function glue(head: Partial<HeadConfig>): void {
  const h: HeadConfig = {num_labels: 2, labels: ['0', '1'], finetuning_task: 'SST-2', span_ft: null, ...head}
  const model = BertForSequenceClassification.init(config(), h, 2)
  const r = h.span_ft?.max_spans ?? 2
  const l = 3
  const spans = h.span_ft
    ? {
        r,
        l,
        positions: Int32Array.from({length: B * r * l}, (_, i) => i % (B * T)),
        mask: Float32Array.from({length: B * r * l}, (_, i) => (i % 3 === 2 ? 0 : 1)),
      }
    : null
  const b: ClsHostBatch = {
    ...encoderBatch(),
    spans,
    classes: h.num_labels > 1 ? Int32Array.from([0, 1]) : null,
    targets: h.num_labels === 1 ? Float32Array.from([0.5, 2]) : null,
  }
  const {grads} = gradsByName(model.params, () => model.loss(b, {training: true, rng: new Rng(4)}))
  update(model.params, grads)
  model.dispose()
}

function squad(): void {
  const model = BertForQuestionAnswering.init(config(), 3)
  const b = {...encoderBatch(), starts: Int32Array.from([1, 4]), ends: Int32Array.from([2, 6])}
  const {grads} = gradsByName(model.params, () => model.loss(b, {training: true, rng: new Rng(5)}))
  update(model.params, grads)
  model.dispose()
}

/** The steps the census covers, by name. */
export const CENSUS_STEPS: Record<string, () => void> = {
  pretrain,
  'glue-classification': () => glue({}),
  'glue-regression': () => glue({num_labels: 1, labels: [], finetuning_task: 'STS-B'}),
  // Span Fine-tuning as the reference computes it (the default) and as checkpoints saved before it do
  'glue-span-ft': () => {
    glue({span_ft: {max_spans: 3, max_span_tokens: 3, padding: 0, pool: 'reference', cls: 'raw', segmentation: 'dict', level: 'sentence'}})
    glue({span_ft: {max_spans: 2, max_span_tokens: 3}})
  },
  squad,
}

/** Kernel names of each step on `backend`, sorted. */
export async function kernelCensus(backend: BackendChoice = 'native'): Promise<Record<string, string[]>> {
  await initBackend(backend)
  return Object.fromEntries(Object.entries(CENSUS_STEPS).map(([name, run]) => [name, [...recordKernels(run)].sort()]))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const census = await kernelCensus((process.argv[2] ?? 'native') as BackendChoice)
  process.stdout.write(JSON.stringify(census, null, 2) + '\n')
}
