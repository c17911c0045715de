// `span encode` as a user runs it (dist/ must be built), stdout and stderr apart.
import {mkdirSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import * as tf from '@tensorflow/tfjs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {ROOT as root, runSpan} from '../helpers/spawn.js'
import {initBackend} from '../../src/core/engine/index.js'
import {saveCheckpoint} from '../../src/core/model/checkpoint.js'
import {fmt, hiddenStates, parseLayers} from '../../src/core/model/encode.js'
import {EVAL} from '../../src/core/model/layers.js'
import {SpanBertForPreTraining} from '../../src/core/model/pretraining.js'
import {smallConfig} from '../core/model/helpers.js'
import {fixtureVocab, header, writeBlocks} from '../core/train/helpers.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-encode-'))
const ckpt = join(tmp, 'ckpt')
const blocks = join(tmp, 'blocks.ndjson')
let model: SpanBertForPreTraining

function span(args: string[], input?: string) {
  const model = args.includes('--model') ? [] : ['--model', ckpt]
  return runSpan(['encode', ...model, '--backend', 'wasm', ...args], {input})
}
const parse = (text: string) => text.trimEnd().split('\n').map((l) => JSON.parse(l))
/** stdout records of a run that must succeed (its stderr shown if it does not). */
function ok(args: string[]) {
  const r = span(args)
  expect(r.code, r.stderr).toBe(0)
  return parse(r.stdout)
}
const blockIds = () => parse(readFileSync(blocks, 'utf8')).slice(1).map((r) => r.ids as number[])

/** The last layer's states of one sequence, in-process. */
function reference(ids: number[], layers = [2]): number[][] {
  return tf.tidy(() => {
    const t = ids.length
    const h = hiddenStates(model.params, model.config, tf.tensor2d([ids], [1, t], 'int32'), tf.zeros([1, t], 'int32'), tf.ones([1, t]), layers)
    return (h.arraySync() as number[][][])[0]
  })
}

beforeAll(async () => {
  await initBackend('wasm')
  model = SpanBertForPreTraining.init(smallConfig({vocab_size: fixtureVocab.tokens.length, num_hidden_layers: 2, max_position_embeddings: 40}), 3)
  await saveCheckpoint(ckpt, model, fixtureVocab.info.path)
  writeBlocks(blocks, 5, 7)
})

afterAll(() => model.dispose())

describe('span encode', () => {
  it('writes the last layer\'s state of every token, as the encoder computes it', () => {
    const r = span([blocks, '--batch-size', '2', '--precision', '7'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const out = parse(r.stdout)
    const ids = blockIds()
    expect(out).toHaveLength(5)
    out.forEach((rec, i) => {
      expect(rec.doc).toBe(i)
      expect(rec.hidden).toHaveLength(ids[i].length)
      const want = reference(ids[i])
      const direct = tf.tidy(() => (model.encoder.forward(tf.tensor2d([ids[i]], [1, ids[i].length], 'int32'), tf.zeros([1, ids[i].length], 'int32'), tf.ones([1, ids[i].length]), EVAL).arraySync() as number[][][])[0])
      rec.hidden.forEach((row: number[], t: number) => row.forEach((x, j) => {
        expect(x).toBeCloseTo(want[t][j], 4) // batched with padding vs alone
        expect(want[t][j]).toBeCloseTo(direct[t][j], 5)
      }))
    })
  })

  it('--pool mean / cls, and --layers concatenated per token (BERT §5.3)', () => {
    const hidden = ok([blocks, '--precision', '8'])
    const mean = ok([blocks, '--pool', 'mean', '--precision', '8'])
    const cls = ok([blocks, '--pool', 'cls', '--precision', '8'])
    hidden.forEach((rec, i) => {
      const rows = rec.hidden as number[][]
      mean[i].vector.forEach((x: number, j: number) => expect(x).toBeCloseTo(rows.reduce((a, r) => a + r[j], 0) / rows.length, 5))
      expect(cls[i].vector).toEqual(rows[0])
    })
    const four = ok([blocks, '--layers', '-1,-2,-3', '--precision', '8'])
    expect(four[0].hidden[0]).toHaveLength(3 * 16)
    expect(four[0].hidden[0].slice(0, 16)).toEqual(hidden[0].hidden[0])
    const emb = reference(blockIds()[0], [0])
    four[0].hidden[0].slice(32).forEach((x: number, j: number) => expect(x).toBeCloseTo(emb[0][j], 5)) // -3 of 2 layers: the embeddings
  })

  it('wraps token records in [CLS] … [SEP] and limits the digits', () => {
    const tokens = `${header('tokens')}\n{"doc":4,"ids":[7,8,9]}\n`
    const r = span(['--precision', '3'], tokens)
    expect(r.code).toBe(0)
    const [rec] = parse(r.stdout)
    expect(rec.hidden).toHaveLength(5)
    const want = reference([fixtureVocab.special.cls, 7, 8, 9, fixtureVocab.special.sep])
    expect(rec.hidden[2]).toEqual(want[2].map((x) => Number(fmt(x, 3))))
    expect(parseLayers('-1,0', 2)).toEqual([2, 0])
  })

  it('bad input: one line on stderr, nothing on stdout, exit 1', () => {
    const fails = (args: string[], input: string | undefined, message: RegExp, code = 1) => {
      const r = span(args, input)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(message)
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(r.code).toBe(code)
    }
    fails([], `${header('masked')}\n`, /^span encode: stdin:1: expected a stream of tokens \(from span tokenize\) or blocks \(from span block\), got masked/)
    fails([], `${header('blocks')}\n{"ids":[2,6748,3]}\n`, /^span encode: stdin:2: ids\[1\] = 6748 is outside the vocabulary \(size 6748\)\n$/)
    fails([], `${header('blocks')}\n{"ids":[2,${Array(40).fill(7).join(',')},3]}\n`, /stdin:2: a sequence of 42 tokens is longer than the model's 40 positions/)
    fails(['--layers', '-4'], `${header('blocks')}\n`, /--layers: "-4" is not a layer of this 2-layer model/, 2) // a flag's value: a usage error
    const bad = join(tmp, 'bad')
    mkdirSync(bad)
    writeFileSync(join(bad, 'config.json'), '{"hidden_size": 16')
    fails(['--model', bad], `${header('blocks')}\n`, /bad\/config\.json:1: invalid JSON at column 19: /)
    fails(['--model', join(tmp, 'nowhere')], `${header('blocks')}\n`, /nowhere: not a checkpoint directory \(no config\.json\)/)
  })
})

describe('span encode on checkpoints written by PyTorch, and --spans', () => {
  const torch = join(root, 'fixtures', 'torch')

  it.each(['legacy-bf16', 'gamma-bare', 'sharded-bin'])('%s: equals PyTorch\'s forward to 1e-5 relative', (name) => {
    const expected = JSON.parse(readFileSync(join(torch, name, 'expected.json'), 'utf8')) as {inputs: {ids: number[]; segments: number[]}[]; hidden: number[][][]}
    const vocab = name === 'gamma-bare' ? ['--vocab', join(torch, 'vocab.txt')] : []
    const r = span(['--model', join(torch, name), ...vocab, '--precision', '9'], expected.inputs.map((x) => JSON.stringify(x)).join('\n') + '\n')
    expect(r.code, r.stderr).toBe(0)
    parse(r.stdout).forEach((rec, k) => {
      const want = expected.hidden[k]
      const scale = Math.max(...want.flat().map(Math.abs))
      const err = Math.max(...(rec.hidden as number[][]).flatMap((row, t) => row.map((x, j) => Math.abs(x - want[t][j]))))
      expect(err / scale).toBeLessThan(1e-5)
    })
  })

  it('without vocab.txt: the error names --vocab; for vocab_size 28996, BERT\'s cased vocabulary', () => {
    const cased = join(tmp, 'cased')
    mkdirSync(cased)
    writeFileSync(join(cased, 'config.json'), JSON.stringify({vocab_size: 28996, hidden_size: 16, num_hidden_layers: 1, num_attention_heads: 2, intermediate_size: 32}))
    const r = span(['--model', cased], `${header('blocks')}\n`)
    expect(r.code).toBe(1) // a file the model directory lacks: a data error (issue 25 cause 9)
    expect(r.stderr).toMatch(/^span encode: .*cased: no vocab.txt; give the model's vocabulary with --vocab FILE \(vocab_size 28996 is BERT's cased vocabulary, as SpanBERT's README says/)
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
  })

  it('--spans: one vector per span, endpoints [h(s); h(e)], mean and max over the span', () => {
    const input = `${header('blocks')}\n{"ids":[2,7,8,9,10,3],"spans":[[1,3],[4,4]]}\n`
    const h = parse(span(['--precision', '8'], input).stdout)[0].hidden as number[][]
    const get = (pool: string) => parse(span(['--spans', '--span-pool', pool, '--precision', '8'], input).stdout)[0].spans as number[][]
    expect(get('endpoints')).toEqual([[...h[1], ...h[3]], [...h[4], ...h[4]]])
    get('mean')[0].forEach((x, j) => expect(x).toBeCloseTo((h[1][j] + h[2][j] + h[3][j]) / 3, 6))
    expect(get('max')[0]).toEqual(h[1].map((_, j) => Math.max(h[1][j], h[2][j], h[3][j])))
    expect(get('max')[1]).toEqual(h[4])
    const tokens = parse(span(['--spans', '--precision', '8'], `${header('tokens')}\n{"ids":[7,8,9,10],"spans":[[0,2]]}\n`).stdout)[0].spans as number[][]
    expect(tokens).toEqual([[...h[1], ...h[3]]]) // token records: positions of the record's ids, before [CLS] is added
    const bad = span(['--spans'], `${header('blocks')}\n{"ids":[2,7,3],"spans":[[1,3]]}\n`)
    expect(bad.code).toBe(1)
    expect(bad.stderr).toMatch(/^span encode: stdin:2: --spans: \[1,3\] is not a span \[start, end\] of this record's 3 tokens/)
  })
})
