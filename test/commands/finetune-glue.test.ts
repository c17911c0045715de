// `span finetune glue` as a user runs it (dist/ must be built): a couple of steps with Span
// Fine-tuning from a span pre-training checkpoint on a handful of MRPC rows, then `span predict
// glue` and `span eval glue` on its output; bad TSVs and a bad dictionary are one-line errors.
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'
import {describeShared, sharedPath} from '../helpers/shared-data.js'
import {initBackend} from '../../src/core/engine/index.js'
import {saveCheckpoint} from '../../src/core/model/checkpoint.js'
import {SpanBertForPreTraining} from '../../src/core/model/pretraining.js'
import {headerLine} from '../../src/core/text/ngrams.js'
import {smallConfig} from '../core/model/helpers.js'
import {fixtureVocab} from '../core/train/helpers.js'

const describe = describeShared('glue/MRPC')

const MRPC = sharedPath('glue', 'MRPC')
const tmp = mkdtempSync(join(tmpdir(), 'span-finetune-glue-'))
const ckpt = join(tmp, 'pre')
const train = join(tmp, 'train.tsv')
const dev = join(tmp, 'dev.tsv')
const dict = join(tmp, 'ngrams.txt')
const small = ['--max-len', '32', '--batch-size', '4', '--epochs', '1', '--lr', '1e-3', '--log-every', '1', '--backend', 'wasm']

function span(args: string[]) {
  return runSpan(args)
}
const head = (path: string, n: number) => readFileSync(path, 'utf8').split('\n').slice(0, n).join('\n') + '\n'

beforeAll(async () => {
  await initBackend('cpu')
  const model = SpanBertForPreTraining.init(smallConfig({vocab_size: fixtureVocab.tokens.length}), 3)
  await saveCheckpoint(ckpt, model, fixtureVocab.info.path)
  model.dispose()
  writeFileSync(train, head(join(MRPC, 'train.tsv'), 9)) // header + 8 pairs
  writeFileSync(dev, head(join(MRPC, 'dev.tsv'), 6)) // header + 5 pairs
  const grams = ['of the', 'in the', 'the company', 'more than']
  writeFileSync(dict, [headerLine({maxN: 5, minCount: 1, maxSize: null, entries: grams.length}), ...grams.map((g) => `${g}\t3`)].join('\n') + '\n')
})

describe('span finetune glue', () => {
  it('fine-tunes with --span-ft from a pretrain checkpoint; predict and eval read its output', () => {
    const out = join(tmp, 'ft')
    const r = span(['finetune', 'glue', '--task', 'mrpc', '--init', ckpt, '--train', train, '--dev', dev, '--out', out, '--span-ft', '--dict', dict, ...small])
    expect(r.code, r.stderr).toBe(0)
    // H = 16, 2 classes: 2 × (3·16·16 + 16) + 2·16
    expect(r.stderr).toContain('Span Fine-tuning adds 1600 (convolutions 1568, classifier 32)')
    expect(r.stderr).toContain('initialised classifier.weight, classifier.bias, span_ft.token_conv.weight')
    const recs = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
    const keys = ['step', 'epoch', 'loss', 'lr', 'grad_norm', 'tokens_per_s']
    expect(recs.slice(0, 2).map((x) => Object.keys(x))).toEqual([keys, keys])
    const devRecs = recs.filter((x) => x.split === 'dev')
    expect(devRecs).toHaveLength(1)
    expect(devRecs[0]).toMatchObject({split: 'dev', epoch: 1, step: 2, n: 5, best: true})
    expect(recs.at(-1)).toEqual({step: 2, checkpoint: join(out, 'checkpoint-2')})
    expect(Object.keys(devRecs[0])).toEqual(expect.arrayContaining(['acc', 'f1', 'acc_and_f1', 'score']))
    for (const f of ['config.json', 'model.safetensors', 'vocab.txt', 'tokenizer_config.json', 'special_tokens_map.json', 'finetune_config.json', 'span_ft_ngrams.txt']) expect(existsSync(join(out, 'best', f)), f).toBe(true)
    const cfg = JSON.parse(readFileSync(join(out, 'best', 'config.json'), 'utf8'))
    expect(cfg).toMatchObject({architectures: ['BertForSequenceClassification'], num_labels: 2, problem_type: 'single_label_classification', span_ft: {max_spans: 64, max_span_tokens: 16, padding: 0, pool: 'reference', cls: 'raw', segmentation: 'dict'}}) // run_glue.sh's r for MRPC, l 16

    const p = span(['predict', 'glue', '--model', out, '--data', dev, '--backend', 'wasm'])
    expect(p.code, p.stderr).toBe(0)
    expect(p.stderr).toBe('')
    const lines = p.stdout.trimEnd().split('\n')
    expect(lines[0]).toBe('index\tprediction')
    expect(lines.slice(1).map((l) => l.split('\t')[0])).toEqual(['0', '1', '2', '3', '4'])
    for (const l of lines.slice(1)) expect(l).toMatch(/^\d+\t[01]$/)
    const preds = join(tmp, 'preds.tsv')
    writeFileSync(preds, p.stdout)
    const e = span(['eval', 'glue', '--task', 'mrpc', '--gold', dev, '--pred', preds, '--json'])
    expect(e.code, e.stderr).toBe(0)
    expect(JSON.parse(e.stdout)).toMatchObject({task: 'MRPC', n: 5})
  })

  it('stops at a row with the wrong number of columns: one file:line error, nothing written', () => {
    const bad = join(tmp, 'bad-cols.tsv')
    const rows = head(join(MRPC, 'train.tsv'), 4).split('\n')
    rows[2] = rows[2].split('\t').slice(0, 3).join('\t')
    writeFileSync(bad, rows.join('\n'))
    const out = join(tmp, 'never')
    const r = span(['finetune', 'glue', '--task', 'mrpc', '--init', ckpt, '--train', bad, '--out', out, ...small])
    expect(r.code).not.toBe(0)
    expect(r.stdout).toBe('')
    expect(r.stderr).toBe(`span finetune glue: ${bad}:3: expected 5 tab-separated columns for MRPC, got 3\n`)
    expect(existsSync(out)).toBe(false)
  })

  it('rejects an unknown label and a dictionary of the wrong format with one clear line each', () => {
    const bad = join(tmp, 'bad-label.tsv')
    const rows = head(join(MRPC, 'train.tsv'), 4).split('\n')
    rows[3] = ['2', ...rows[3].split('\t').slice(1)].join('\t')
    writeFileSync(bad, rows.join('\n'))
    const r = span(['finetune', 'glue', '--task', 'mrpc', '--init', ckpt, '--train', bad, '--out', join(tmp, 'never2'), ...small])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toBe(`span finetune glue: ${bad}:4: unknown MRPC label "2" (expected 0 or 1)\n`)
    const notDict = join(tmp, 'not-a-dict.txt')
    writeFileSync(notDict, 'of the 3\n')
    const d = span(['finetune', 'glue', '--task', 'mrpc', '--init', ckpt, '--train', train, '--out', join(tmp, 'never3'), '--span-ft', '--dict', notDict, ...small])
    expect(d.code).not.toBe(0)
    expect(d.stdout).toBe('')
    expect(d.stderr).toMatch(/^span finetune glue: .*not-a-dict\.txt:1: expected "ngram<TAB>count" \(or a "#span-ngrams v1" header, or a JSON object\)/)
    expect(d.stderr.trimEnd().split('\n')).toHaveLength(1)
  })
})
