// The reverse direction (issue 34): models that transformers initialises and saves are read by span
// with transformers' outputs. A BertForPreTraining and a BertForQuestionAnswering (small shapes,
// torch.manual_seed), each saved twice: save_pretrained (transformers 5 writes model.safetensors)
// and torch.save(model.state_dict()) → pytorch_model.bin beside config.json and vocab.txt. span
// reads each with `span encode` (the last hidden states), as `--init` of a run that does not move
// the weights (--lr 0: its checkpoint gives the same states and logits), and `span predict squad`
// (the n-best start/end logits are transformers' at those tokens).
import {mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {lacking, python, titled, version} from '../helpers/interop.js'
import {runSpan} from '../helpers/spawn.js'
import {context, qas, squad} from '../commands/squad-fixture.js'
import {fixtureVocab, writeBlocks} from '../core/train/helpers.js'
import {WordPieceTokenizer} from '../../src/core/text/tokenizer.js'
import {hiddenOf, maxRel} from './compare.js'

const why = lacking('torch', 'transformers', 'safetensors')
const tmp = mkdtempSync(join(tmpdir(), 'span-interop-reverse-'))
const CONFIG = {
  vocab_size: fixtureVocab.tokens.length,
  hidden_size: 32,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  intermediate_size: 64,
  max_position_embeddings: 128,
  type_vocab_size: 2,
  hidden_act: 'gelu',
  layer_norm_eps: 1e-12,
}
const dirs = {pre: join(tmp, 'pre-st'), preBin: join(tmp, 'pre-bin'), qa: join(tmp, 'qa-st'), qaBin: join(tmp, 'qa-bin')}
interface Made {
  files: string[]
  outputs: {hidden?: number[][]; start?: number[]; end?: number[]}[]
}
let made: {pre: Made; qa: Made}
let inputs: {ids: number[]; segments: number[]}[] = []
const blocks = join(tmp, 'blocks.ndjson')
const sq = join(tmp, 'squad.json')

/** span encode's last hidden states of the blocks file, per record [T, H]. */
function encode(model: string): number[][][] {
  const r = runSpan(['encode', blocks, '--model', model, '--precision', '9'])
  expect(r.code, r.stderr).toBe(0)
  return hiddenOf(r.stdout)
}

/** `span predict squad`'s n-best answers of q1 (start_logit, end_logit). */
function nbest(model: string, out: string): {start_logit: number; end_logit: number}[] {
  const r = runSpan(['predict', 'squad', '--model', model, '--data', sq, '--output', out, '--max-len', '64', '--max-query-len', '16'])
  expect(r.code, r.stderr).toBe(0)
  return (JSON.parse(readFileSync(join(out, 'nbest_predictions.json'), 'utf8')) as Record<string, {start_logit: number; end_logit: number}[]>).q1
}

beforeAll(() => {
  if (why) return
  writeBlocks(blocks, 3, 4, true)
  writeFileSync(sq, squad([qas[0]]))
  inputs = readFileSync(blocks, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => JSON.parse(l) as (typeof inputs)[number])
  const tok = new WordPieceTokenizer(fixtureVocab, {lowercase: !fixtureVocab.cased})
  const [q, c] = [tok.encode(qas[0].question), tok.encode(context)]
  const {cls, sep} = fixtureVocab.special
  const qaInput = {ids: [cls, ...q, sep, ...c, sep], segments: [0, ...q.map(() => 0), 0, ...c.map(() => 1), 1]}
  const vocab = fixtureVocab.info.path
  const jobs = [
    {job: 'make', cls: 'BertForPreTraining', config: CONFIG, seed: 11, dir: dirs.pre, bin_dir: dirs.preBin, vocab, inputs},
    {job: 'make', cls: 'BertForQuestionAnswering', config: CONFIG, seed: 12, dir: dirs.qa, bin_dir: dirs.qaBin, vocab, inputs: [qaInput]},
  ]
  const [pre, qa] = JSON.parse(python('hf.py', [], JSON.stringify(jobs))) as Made[]
  made = {pre, qa}
}, 600_000)

describe.skipIf(why !== null)(titled(`span reads what transformers (${version('transformers')}, ${version('torch')}) saves`, why), () => {
  it('save_pretrained writes model.safetensors; torch.save writes pytorch_model.bin', () => {
    expect(made.pre.files).toContain('model.safetensors')
    expect(made.pre.files).not.toContain('pytorch_model.bin')
    expect(readdirSync(dirs.preBin).sort()).toEqual(['config.json', 'pytorch_model.bin', 'vocab.txt'])
  })

  it.each([
    ['save_pretrained (safetensors)', 'pre'],
    ['torch.save(state_dict) (pytorch_model.bin)', 'preBin'],
  ] as const)("span encode of a BertForPreTraining from %s gives transformers' hidden states", (_, d) => {
    const ours = encode(dirs[d])
    inputs.forEach((_, i) => expect(maxRel(ours[i], made.pre.outputs[i].hidden!)).toBeLessThanOrEqual(1e-5))
  })

  it.each([
    ['save_pretrained (safetensors)', 'pre'],
    ['torch.save(state_dict) (pytorch_model.bin)', 'preBin'],
  ] as const)('span pretrain --init a BertForPreTraining from %s (--lr 0) keeps its encoder: encode of the checkpoint gives the same states', (_, d) => {
    const out = join(tmp, `init-${d}`)
    const r = runSpan(['pretrain', blocks, '--init', dirs[d], '--max-steps', '1', '--lr', '0', '--batch-size', '2', '--out', out])
    expect(r.code, r.stderr).toBe(0)
    const ours = encode(join(out, 'checkpoint-1'))
    inputs.forEach((_, i) => expect(maxRel(ours[i], made.pre.outputs[i].hidden!)).toBeLessThanOrEqual(1e-5))
  })

  it.each([
    ['save_pretrained (safetensors)', 'qa'],
    ['torch.save(state_dict) (pytorch_model.bin)', 'qaBin'],
  ] as const)("span predict squad with a BertForQuestionAnswering from %s: its n-best logits are transformers'", (_, d) => {
    const answers = nbest(dirs[d], join(tmp, `pred-${d}`))
    const {start, end} = made.qa.outputs[0]
    const near = (xs: number[], v: number) => xs.some((x) => Math.abs(x - v) <= 1e-4 * Math.max(1, Math.abs(v)))
    expect(answers.length).toBeGreaterThan(0)
    const best = Math.max(...answers.map((a) => a.start_logit + a.end_logit))
    for (const a of answers) {
      expect(near(start!, a.start_logit), `start ${a.start_logit}`).toBe(true)
      expect(near(end!, a.end_logit), `end ${a.end_logit}`).toBe(true)
    }
    expect(best).toBe(answers[0].start_logit + answers[0].end_logit) // n-best in order
  })

  it('span finetune squad --init a transformers BertForQuestionAnswering (--lr 0) keeps its qa_outputs: predict gives the same logits', () => {
    const out = join(tmp, 'ft-qa')
    const r = runSpan([
      'finetune',
      'squad',
      '--init',
      dirs.qaBin,
      '--train',
      sq,
      '--lr',
      '0',
      '--epochs',
      '1',
      '--max-len',
      '64',
      '--max-query-len',
      '16',
      '--out',
      out,
    ])
    expect(r.code, r.stderr).toBe(0)
    expect(nbest(out, join(tmp, 'pred-ft'))).toEqual(nbest(dirs.qa, join(tmp, 'pred-qa-again')))
  })
})
