import * as tf from '@tensorflow/tfjs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {Rng} from '../../../../src/core/data/rng.js'
import {initBackend} from '../../../../src/core/engine/index.js'
import {type CudaBackend} from '../../../../src/core/engine/cuda/backend.js'
import {cudaGraphStats, graphStep, resetCudaGraphs, standinCounters} from '../../../../src/core/engine/cuda/graph.js'
import {collate, disposeBatch, toTensors} from '../../../../src/core/model/batch.js'
import {presetConfig} from '../../../../src/core/model/config.js'
import {EVAL} from '../../../../src/core/model/layers.js'
import {SpanBertForPreTraining} from '../../../../src/core/model/pretraining.js'
import {AdamW} from '../../../../src/core/train/optim.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {example} from '../../model/helpers.js'

// One step as a CUDA Graph on the stand-in device (docs/cuda-backend.md, "One step as a CUDA
// Graph"): a `tiny` forward + backward (batch 2, length 16) with new batch contents each step runs
// eagerly once, is captured when its work recurs and replayed after, as one cuGraphLaunch; each step's
// loss and gradients equal the eager step's byte for byte; a whole step whose update writes every
// weight into its own block replays too; a step whose work differs each time (AdamW today: new
// blocks for p, m, v and host scalars per step) is declined, runs eagerly and still equals.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false
const VOCAB = 1000
const config = presetConfig('tiny', VOCAB, {hidden_dropout_prob: 0, attention_probs_dropout_prob: 0})

function batch(seed: number) {
  const rng = new Rng(seed)
  const examples = [example(16, 3, 5, rng, VOCAB), example(16, 9, 10, rng, VOCAB)].map((e, i) => ({
    ...e,
    segments: e.ids.map((_, j) => (j < 8 ? 0 : 1)),
    next: i === 0,
  }))
  return collate(examples, {padId: 0, maxTargets: config.sbo.max_targets, maxPositions: config.max_position_embeddings})
}

const bytes = (t: tf.Tensor) => Buffer.from((t.dataSync() as Float32Array).buffer).toString('hex')

/** Loss and gradients of one batch, with no host read inside (the capturable part of a step today). */
function forwardBackward(model: SpanBertForPreTraining, seed: number): {loss: tf.Scalar; grads: tf.NamedTensorMap} {
  const b = toTensors(batch(seed)) // uploads inside the step: the graph reads them from its staging buffer
  const r = tf.variableGrads(
    () => model.trainingTerms(b, EVAL).total,
    model.params.entries().map(([, v]) => v),
  )
  disposeBatch(b)
  return {loss: r.value, grads: r.grads}
}

/** Host copies (hex of the float32 bytes) of the loss and every gradient of steps with seeds 1..n, through `run`. */
function steps(n: number, run: (seed: number) => {loss: tf.Scalar; grads: tf.NamedTensorMap}): string[][] {
  const out: string[][] = []
  for (let seed = 1; seed <= n; seed++) {
    const {loss, grads} = run(seed)
    out.push([
      bytes(loss),
      ...Object.keys(grads)
        .sort()
        .map((k) => bytes(grads[k])),
    ])
    tf.dispose([loss, ...Object.values(grads)])
  }
  return out
}

describe.skipIf(skip)('a tiny step as a CUDA graph (stand-in) equals the eager step', () => {
  let model: SpanBertForPreTraining
  beforeAll(async () => {
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('cuda')
    model = SpanBertForPreTraining.init(config, 1)
  })
  afterAll(async () => {
    model?.dispose()
    resetCudaGraphs()
    await initBackend('cpu')
  })

  it('forward + backward: a warm-up, captured when it recurs, then replayed as one graph launch, byte for byte', () => {
    let eagerCounts = standinCounters()!
    const eager = steps(4, (seed) => {
      eagerCounts = standinCounters()!
      return forwardBackward(model, seed)
    })
    const after = standinCounters()! // the last eager step's kernel launches and stream submissions (its reads included)
    const eagerStep = {launches: after.launches - eagerCounts.launches, submits: after.submits - eagerCounts.submits}
    resetCudaGraphs()
    const tensors = tf.memory().numTensors
    const outcomes: string[] = []
    const perStep: {launches: number; graphLaunches: number; submits: number}[] = []
    const lines: string[] = []
    const graphed = steps(4, (seed) => {
      const before = standinCounters()!
      const {result, outcome} = graphStep(
        'tiny 2x16',
        () => forwardBackward(model, seed),
        (l) => lines.push(l),
      )
      const after = standinCounters()!
      perStep.push({
        launches: after.launches - before.launches,
        graphLaunches: after.graphLaunches - before.graphLaunches,
        submits: after.submits - before.submits,
      })
      outcomes.push(outcome)
      return result
    })
    console.log(
      `eager step: ${JSON.stringify(eagerStep)}; graph steps: ${JSON.stringify(outcomes)}; per step ${JSON.stringify(perStep)}; ${JSON.stringify(cudaGraphStats())}`,
    )
    expect(graphed).toEqual(eager) // loss and every gradient, bit for bit, each step (the batches differ)
    expect(outcomes).toEqual(['warm-up', 'captured', 'replayed', 'replayed']) // captured when the same work recurs
    const last = perStep[3]
    expect(perStep[0]).toMatchObject({graphLaunches: 0, launches: eagerStep.launches}) // the warm-up: eager
    expect(last).toEqual({launches: 0, graphLaunches: 1, submits: 2}) // the whole step: one cuGraphLaunch (and the event after it), no kernel launched one by one
    expect(cudaGraphStats()!.lastOps).toBeGreaterThan(100) // what the eager step submits one by one
    expect(eagerStep.launches).toBeGreaterThan(100)
    expect(lines).toEqual([])
    expect(tf.memory().numTensors).toBe(tensors) // no tensor left behind by graphed steps
  })

  it('a whole step (forward, backward, an update of every weight written into its own block) replays as one graph and equals eager', () => {
    const be = tf.backend() as CudaBackend
    const run = (wrap: boolean) => {
      const m = SpanBertForPreTraining.init(config, 1)
      const outcomes: string[] = []
      const losses: string[] = []
      for (let seed = 1; seed <= 4; seed++) {
        const body = () => {
          const {loss, grads} = forwardBackward(m, seed)
          for (const [, v] of m.params.entries()) {
            if (!grads[v.name]) continue
            const next = tf.tidy(() => v.sub(grads[v.name].mul(0.01))) // [same as v]
            be.dev.rt.copy(be.ptr(v), be.ptr(next), v.size * 4) // in place: the weight keeps its block, as an in-place optimiser kernel would
            next.dispose()
          }
          tf.dispose(Object.values(grads))
          return loss
        }
        const r = wrap ? graphStep('tiny 2x16 in-place update', body) : {result: body(), outcome: 'eager'}
        outcomes.push(r.outcome)
        losses.push(bytes(r.result))
        r.result.dispose()
      }
      const weights = m.params.entries().map(([, v]) => bytes(v))
      m.dispose()
      return {outcomes, losses, weights}
    }
    const eager = run(false)
    const graphed = run(true)
    console.log(`in-place update steps: ${JSON.stringify(graphed.outcomes)}`)
    expect(graphed.losses).toEqual(eager.losses) // each step's loss reads the weights the previous replay wrote
    expect(graphed.weights).toEqual(eager.weights)
    expect(graphed.outcomes).toEqual(['warm-up', 'captured', 'replayed', 'replayed'])
  })

  it('forward + backward + AdamW: new blocks and host scalars each step, so no step recurs: it declines after 4 warm-ups, runs eagerly and still equals', () => {
    const run = (wrap: boolean) => {
      const m = SpanBertForPreTraining.init(config, 1)
      const opt = new AdamW()
      const out: string[] = []
      const outcomes: string[] = []
      const lines: string[] = []
      for (let seed = 1; seed <= 5; seed++) {
        const body = () => {
          const {loss, grads} = forwardBackward(m, seed)
          opt.apply(m.params.entries(), new Map(Object.entries(grads).map(([k, g]) => [m.params.entries().find(([, v]) => v.name === k)![0], g])), 1e-3)
          tf.dispose([...Object.values(grads)])
          return loss
        }
        const loss = wrap ? graphStep('tiny 2x16 adamw', body, (l) => lines.push(l)) : {result: body(), outcome: 'eager'}
        outcomes.push(loss.outcome)
        out.push(bytes(loss.result))
        loss.result.dispose()
      }
      out.push(...m.params.entries().map(([, v]) => bytes(v)))
      opt.dispose()
      m.dispose()
      return {out, outcomes, lines}
    }
    const eager = run(false)
    const graphed = run(true)
    expect(graphed.out).toEqual(eager.out) // losses and final weights, bit for bit
    expect(graphed.outcomes.slice(0, 4)).toEqual(['warm-up', 'warm-up', 'warm-up', 'warm-up'])
    expect(graphed.outcomes[4]).toMatch(/^eager: its work differed from each of the 4 steps before/)
    expect(graphed.lines).toHaveLength(1) // said once
  })

  it('a host read during the step issues the recorded work and declines', () => {
    const lines: string[] = []
    const {result, outcome} = graphStep(
      'tiny read',
      () => {
        const {loss, grads} = forwardBackward(model, 3)
        const v = loss.dataSync()[0]
        tf.dispose([loss, ...Object.values(grads)])
        return v
      },
      (l) => lines.push(l),
    )
    expect(Number.isFinite(result)).toBe(true)
    expect(outcome).toBe('eager: a synchronous read of device memory during the step')
    expect(lines).toHaveLength(1)
  })
})
