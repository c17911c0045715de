// Hugging Face transformers reads span's pre-training checkpoints of every preset (issue 34): tiny,
// mini, small and medium as `span pretrain` writes them after 2 steps (so no weight is still at its
// initial value), base and large freshly initialised and saved by the same code (training them is
// minutes for nothing more: the checkpoint format is the same); large at 2 of its 24 layers (its
// width, 16 heads of 64 and 4096 intermediate units whole: a layer is a layer's code 24 times, and
// 335M weights saved, encoded and loaded twice cost most of the suite's time). Large's full depth
// without weights: transformers reads its config.json as span writes it, and BertForPreTraining
// built from it on torch's meta device has span's keys and shapes, layer 23 too. For each: AutoModel and
// BertForPreTraining's encoder give `span encode`'s hidden states, the only keys transformers does
// not find or does not use are the heads span does not have (NSP) and the one transformers cannot
// represent (SBO, cls.pair_target_predictions.*), and BertForMaskedLM (tiny) and AutoModel miss
// nothing. BertForPreTraining's MLM logits are span's (the full [T, V] logits of every position from
// span's own model code: the checkpoint loaded back for the trained presets, the model just saved
// for base and large); for the trained ones also `span fill --head mlm`'s top 5 and their
// log-probabilities. Relative error:
// max |span − transformers| / max |transformers| over the whole tensor (fp32 on both sides).
// The Python side: test/interop/py/hf.py in the venv of tools/interop-env.sh (skipped without it).
import {mkdirSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {lacking, python, titled, version} from '../helpers/interop.js'
import {runSpan} from '../helpers/spawn.js'
import {initBackend} from '../../src/core/engine/index.js'
import {loadCheckpoint, saveCheckpoint} from '../../src/core/model/checkpoint.js'
import {PRESETS as SIZES, type PresetName, configToJson, presetConfig} from '../../src/core/model/config.js'
import {decoderWeight} from '../../src/core/model/heads.js'
import {EVAL} from '../../src/core/model/layers.js'
import {SpanBertForPreTraining} from '../../src/core/model/pretraining.js'
import {readSafetensors} from '../../src/core/model/safetensors.js'
import {fixtureVocab, writeBlocks} from '../core/train/helpers.js'
import {hiddenOf, maxRel} from './compare.js'

const why = lacking('torch', 'transformers', 'safetensors')
const TRAINED: PresetName[] = ['tiny', 'mini', 'small', 'medium']
const INITIALISED: PresetName[] = ['base', 'large']
const PRESETS = [...TRAINED, ...INITIALISED]
const LOGITS: PresetName[] = PRESETS // span's own [T, V] MLM logits
/** Presets checked at fewer layers than their own (every other size whole): large at 2 of 24. */
const DEPTH: Partial<Record<PresetName, number>> = {large: 2}
const depthOf = (p: PresetName) => DEPTH[p] ?? SIZES[p].num_hidden_layers
/** A test's name for a preset: large says the layers it has. */
const named = (p: PresetName): [string, PresetName] => [DEPTH[p] ? `${p} at ${DEPTH[p]} of its ${SIZES[p].num_hidden_layers} layers` : p, p]
const tmp = mkdtempSync(join(tmpdir(), 'span-interop-presets-'))
const FILL = 'the cat [MASK] on the mat .'

interface Input {
  ids: number[]
  segments: number[]
}
interface Loaded {
  info: {missing_keys: string[]; unexpected_keys: string[]; mismatched_keys: string[]}
  outputs: {hidden?: number[][]; mlm?: number[][]}[]
}
const ckpt: Record<string, string> = {}
const encoded: Record<string, number[][][]> = {} // preset → per input [T, H]
const logits: Record<string, number[][][]> = {} // preset → per input [T, V]
const fills: Record<string, {text: string; score: number}[]> = {}
const hf: Record<string, {base: Loaded; pre: Loaded; mlm?: Loaded}> = {}
/** transformers on large's config.json alone: its sizes, and BertForPreTraining's keys built on the meta device. */
interface Meta {
  config: Record<string, number>
  layers: number
  heads: number
  head_size: number
  keys: Record<string, number[]>
}
let meta: Meta | null = null
const FULL_LARGE = presetConfig('large', fixtureVocab.tokens.length) // 24 layers
let inputs: Input[] = []

/** span's MLM logits [T, V] of every position of each input, from its own model code. */
function spanLogits(model: SpanBertForPreTraining, xs: Input[]): number[][][] {
  const mlm = (model as unknown as {mlm: {forward: (h: tf.Tensor2D, p: tf.Tensor1D, d: unknown) => tf.Tensor2D}}).mlm
  return xs.map((x) => {
    const T = x.ids.length
    const out = tf.tidy(() => {
      const h = model.encoder.forward(tf.tensor2d([x.ids], [1, T], 'int32'), tf.tensor2d([x.segments], [1, T], 'int32'), tf.ones([1, T]) as tf.Tensor2D, EVAL) // [1, T, H]
      return mlm.forward(h.reshape([T, model.config.hidden_size]), tf.range(0, T, 1, 'int32') as tf.Tensor1D, decoderWeight(model.params)) // [T, V]
    })
    const v = out.arraySync()
    out.dispose()
    return v
  })
}

/** A checkpoint of each preset: `span pretrain` 2 steps, or initialised and saved (base, large). */
async function makeCheckpoints(train: string): Promise<void> {
  for (const p of TRAINED) {
    const run = join(tmp, p)
    const r = runSpan([
      'pretrain',
      train,
      '--preset',
      p,
      '--max-steps',
      '2',
      '--batch-size',
      '2',
      '--seed',
      '3',
      '--lr',
      '1e-3',
      '--log-every',
      '2',
      '--out',
      run,
    ])
    expect(r.code, r.stderr).toBe(0)
    ckpt[p] = join(run, 'checkpoint-2')
  }
  for (const p of INITIALISED) {
    const model = SpanBertForPreTraining.init(presetConfig(p, fixtureVocab.tokens.length, {num_hidden_layers: depthOf(p)}), 5)
    ckpt[p] = join(tmp, p)
    await saveCheckpoint(ckpt[p], model, fixtureVocab.info.path)
    if (LOGITS.includes(p)) logits[p] = spanLogits(model, inputs) // the model just saved (transformers reads the file)
    model.dispose()
  }
}

/** span encode's hidden states [T, H] of each input are transformers' (`hidden`). */
function sameHidden(p: string, loaded: Loaded): void {
  inputs.forEach((_, i) => {
    const ours = encoded[p][i]
    const theirs = loaded.outputs[i].hidden!
    expect(ours.length).toBe(theirs.length)
    expect(maxRel(ours, theirs)).toBeLessThanOrEqual(1e-5)
  })
}

beforeAll(async () => {
  if (why) return
  await initBackend('auto', {}, () => {})
  const train = join(tmp, 'train.ndjson')
  const dev = join(tmp, 'dev.ndjson')
  writeBlocks(train, 8, 1)
  writeBlocks(dev, 2, 2, true) // sentence pairs: token types 0 and 1
  inputs = readFileSync(dev, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => JSON.parse(l) as Input)
  await makeCheckpoints(train)
  const fillIds = [fixtureVocab.special.cls, ...FILL.split(' ').map((w) => fixtureVocab.tokens.indexOf(w)), fixtureVocab.special.sep]
  const jobs = []
  for (const p of PRESETS) {
    const e = runSpan(['encode', dev, '--model', ckpt[p], '--precision', '9'])
    expect(e.code, e.stderr).toBe(0)
    encoded[p] = hiddenOf(e.stdout)
    if (TRAINED.includes(p)) {
      const {model} = await loadCheckpoint(ckpt[p]) // span reads its own trained checkpoint back
      logits[p] = spanLogits(model, inputs)
      model.dispose()
      const f = runSpan(['fill', '--model', ckpt[p], '--head', 'mlm', '--k', '5'], {input: FILL + '\n'})
      expect(f.code, f.stderr).toBe(0)
      fills[p] = (JSON.parse(f.stdout) as {spans: {fills: {text: string; score: number}[]}[]}).spans[0].fills
    }
    jobs.push({job: 'load', cls: 'BertModel', dir: ckpt[p], inputs})
    jobs.push({job: 'load', cls: 'BertForPreTraining', dir: ckpt[p], inputs: [...inputs, {ids: fillIds, segments: fillIds.map(() => 0)}]})
    if (p === 'tiny') jobs.push({job: 'load', cls: 'BertForMaskedLM', dir: ckpt[p], inputs: []})
  }
  const config = join(tmp, 'large-config') // large's config.json as a checkpoint of it has it, and nothing else
  mkdirSync(config)
  writeFileSync(join(config, 'config.json'), JSON.stringify(configToJson(FULL_LARGE), null, 2) + '\n')
  const answers = JSON.parse(python('hf.py', [], JSON.stringify([...jobs, {job: 'meta', dir: config}]))) as Loaded[]
  for (const p of PRESETS) hf[p] = {base: answers.shift()!, pre: answers.shift()!, ...(p === 'tiny' ? {mlm: answers.shift()!} : {})}
  meta = answers.shift() as unknown as Meta
}, 1_200_000)

describe.skipIf(why !== null)(titled(`transformers (${version('transformers')}, ${version('torch')}) on span's pre-training checkpoints`, why), () => {
  it.each(PRESETS.map(named))("%s: AutoModel gives span encode's hidden states (max relative error ≤ 1e-5)", (_, p) => {
    expect(hf[p].base.info).toEqual({missing_keys: [], unexpected_keys: expect.any(Array), mismatched_keys: []})
    expect(hf[p].base.info.unexpected_keys.every((k) => k.startsWith('cls.'))).toBe(true) // the heads, which BertModel has not
    sameHidden(p, hf[p].base)
  })

  it.each(PRESETS.map(named))("%s: BertForPreTraining's encoder gives span encode's hidden states (max relative error ≤ 1e-5)", (_, p) => {
    sameHidden(p, hf[p].pre)
  })

  it.each(PRESETS.map(named))("%s: BertForPreTraining finds every key but NSP's (span has none) and uses every one but SBO's", (_, p) => {
    const {info} = hf[p].pre
    expect(info.missing_keys).toEqual(['cls.seq_relationship.bias', 'cls.seq_relationship.weight'])
    expect(info.unexpected_keys.length).toBeGreaterThan(0)
    expect(info.unexpected_keys.every((k) => k.startsWith('cls.pair_target_predictions.'))).toBe(true)
    expect(info.mismatched_keys).toEqual([])
  })

  it.each(LOGITS.map(named))("%s: BertForPreTraining's MLM logits [T, V] are span's (max relative error ≤ 1e-5)", (_, p) => {
    inputs.forEach((_, i) => expect(maxRel(logits[p][i], hf[p].pre.outputs[i].mlm!)).toBeLessThanOrEqual(1e-5))
  })

  it.each(TRAINED)('%s: span fill --head mlm gives the top 5 tokens and log-probabilities transformers gives', (p) => {
    const row = hf[p].pre.outputs[inputs.length].mlm![1 + FILL.split(' ').indexOf('[MASK]')] // [V]
    const max = Math.max(...row)
    const lse = max + Math.log(row.reduce((s, v) => s + Math.exp(v - max), 0))
    const banned = new Set(Object.values(fixtureVocab.special)) // fill never proposes [PAD], [UNK], [CLS], [SEP], [MASK]
    const top = row
      .map((v, id) => ({id, lp: v - lse}))
      .filter((t) => !banned.has(t.id))
      .sort((a, b) => b.lp - a.lp)
      .slice(0, 5)
    expect(fills[p].map((f) => f.text)).toEqual(top.map((t) => fixtureVocab.tokens[t.id].replace(/^##/, '')))
    fills[p].forEach((f, i) => expect(Math.abs(f.score - top[i].lp)).toBeLessThan(1e-4)) // fill prints 4 decimals
  })

  it("large at its 24 layers, without weights: transformers reads span's config.json as 24 layers of 16 heads of 64, and BertForPreTraining's keys are span's, shape for shape", () => {
    expect(meta!.config).toEqual({
      hidden_size: 1024,
      num_hidden_layers: 24,
      num_attention_heads: 16,
      intermediate_size: 4096,
      vocab_size: fixtureVocab.tokens.length,
    })
    expect([meta!.layers, meta!.heads, meta!.head_size]).toEqual([24, 16, 64])
    const ours = new Map(SpanBertForPreTraining.specs(FULL_LARGE).map((s) => [s.name, s.shape])) // what span's checkpoint of it holds (checked below)
    const shared = [...ours.keys()].filter((k) => !k.startsWith('cls.pair_target_predictions.')) // SBO: transformers has no such head
    expect(shared.filter((k) => JSON.stringify(meta!.keys[k]) !== JSON.stringify(ours.get(k)))).toEqual([]) // present, same shape
    expect(shared).toContain('bert.encoder.layer.23.output.LayerNorm.bias')
    // transformers' keys span has not: NSP's, and the decoder tied to the word embeddings and cls.predictions.bias (neither stored, as transformers saves them)
    expect(Object.keys(meta!.keys).filter((k) => !ours.has(k))).toEqual([
      'cls.predictions.decoder.weight',
      'cls.predictions.decoder.bias',
      'cls.seq_relationship.weight',
      'cls.seq_relationship.bias',
    ])
  })

  it("large's keys as span saves them are its model's specs (so the 24-layer specs above are what a large checkpoint holds)", async () => {
    const saved = (await readSafetensors(join(ckpt.large, 'model.safetensors'))).tensors
    const specs = SpanBertForPreTraining.specs(presetConfig('large', fixtureVocab.tokens.length, {num_hidden_layers: depthOf('large')}))
    expect([...saved.keys()].sort()).toEqual(specs.map((s) => s.name).sort())
    specs.forEach((s) => expect(saved.get(s.name)!.shape, s.name).toEqual(s.shape))
  })

  it("BertForMaskedLM loads tiny's encoder and MLM head whole: nothing missing, only the SBO head and the pooler (it has none) unused", () => {
    const {info} = hf.tiny.mlm!
    expect(info.missing_keys).toEqual([])
    expect(info.mismatched_keys).toEqual([])
    expect(info.unexpected_keys.filter((k) => !k.startsWith('cls.pair_target_predictions.'))).toEqual(['bert.pooler.dense.bias', 'bert.pooler.dense.weight'])
  })
})
