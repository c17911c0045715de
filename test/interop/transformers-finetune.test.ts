// Hugging Face transformers reads span's fine-tuned checkpoints with its own head classes (issue 34):
// a tiny model fine-tuned one epoch by `span finetune` for each task whose head transformers has:
// squad → BertForQuestionAnswering, glue (SST-2) → BertForSequenceClassification, ner →
// BertForTokenClassification, swag → BertForMultipleChoice (span's swag scorer is the one-output
// sequence classifier, whose classifier.weight [1, H] is BertForMultipleChoice's). Each loads with
// no missing, unexpected or mismatched key, from best/ and from `span export --format pytorch`
// (pytorch_model.bin), and gives span's logits: the full logits of span's own model code on the same
// ids (max relative error ≤ 1e-5), the start/end logits `span predict squad` writes in
// nbest_predictions.json, and the labels, tags and choices `span predict` writes (the argmax).
// A copy with one weight renamed is shown to fail the same checks.
import {cpSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {lacking, python, titled, version} from '../helpers/interop.js'
import {ROOT, runSpan} from '../helpers/spawn.js'
import {context, qas, squad} from '../commands/squad-fixture.js'
import {fixtureVocab} from '../core/train/helpers.js'
import {initBackend} from '../../src/core/engine/index.js'
import {WordPieceTokenizer} from '../../src/core/text/tokenizer.js'
import {maxRel} from './compare.js'
import {type Feature, spanLogits} from './span-logits.js'

const why = lacking('torch', 'transformers', 'safetensors')
const tmp = mkdtempSync(join(tmpdir(), 'span-interop-finetune-'))
const tok = new WordPieceTokenizer(fixtureVocab, {lowercase: !fixtureVocab.cased})
const {cls, sep} = fixtureVocab.special
const file = (name: string, text: string): string => {
  writeFileSync(join(tmp, name), text)
  return join(tmp, name)
}
const pair = (a: string, b: string): Feature => {
  const [x, y] = [tok.encode(a), tok.encode(b)]
  return {ids: [cls, ...x, sep, ...y, sep], segments: [...x.map(() => 0), 0, 0, ...y.map(() => 1), 1]}
}
const single = (a: string): Feature => {
  const x = tok.encode(a)
  return {ids: [cls, ...x, sep], segments: [0, ...x.map(() => 0), 0]}
}
/** An example's choices padded to one length T (mask 0 on padding), one after another: [K·T]. */
const padChoices = (cs: Feature[]): Feature => {
  const T = Math.max(...cs.map((c) => c.ids.length))
  const pad = (xs: number[], v: number) => [...xs, ...Array<number>(T - xs.length).fill(v)]
  return {
    ids: cs.flatMap((c) => pad(c.ids, 0)),
    segments: cs.flatMap((c) => pad(c.segments, 0)),
    mask: cs.flatMap((c) =>
      pad(
        c.ids.map(() => 1),
        0,
      ),
    ),
  }
}

const SST = ['a fine and moving film .', 'the worst film of the year .', 'it is good', 'nothing happens .', 'a great story', 'bad and long']
const NER = [
  ['EU', 'I-ORG'],
  ['rejects', 'O'],
  ['German', 'I-MISC'],
  ['call', 'O'],
  ['Peter', 'I-PER'],
]
const swagRows = (f: string) =>
  readFileSync(join(ROOT, 'fixtures', 'swag', f), 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(','))

interface Task {
  name: string
  cls: string
  features: Feature[]
  choices?: number
}
const tasks: Record<string, Task & {dir: string}> = {}
const ours: Record<string, number[][]> = {} // task → per feature logits (QA: start then end)
const hf: Record<string, {info: Record<string, string[]>; outputs: Record<string, number[]>[]}> = {}
const predicted: Record<string, string> = {}
const common = ['--preset', 'tiny', '--epochs', '1', '--batch-size', '2', '--seed', '2', '--lr', '1e-3']

function finetune(task: string, args: string[]): string {
  const out = join(tmp, task)
  const r = runSpan(['finetune', task, ...common, ...args, '--out', out])
  expect(r.code, r.stderr).toBe(0)
  return join(out, 'best')
}

beforeAll(async () => {
  if (why) return
  await initBackend('auto', {}, () => {})
  const sq = file('squad.json', squad(qas))
  const sst = file('sst.tsv', 'sentence\tlabel\n' + SST.map((s, i) => `${s}\t${i % 2 ? 0 : 1}\n`).join(''))
  const ner = file('ner.conll', '-DOCSTART- -X- O O\n\n' + NER.map(([w, t]) => `${w} X X ${t}`).join('\n') + '\n')
  const swagDev = join(ROOT, 'fixtures', 'swag', 'handmade-dev.csv')
  const q = qas[0].question
  const qa = {name: 'squad', cls: 'BertForQuestionAnswering', features: [pair(q, context)]}
  tasks.squad = {...qa, dir: finetune('squad', ['--train', sq, '--max-len', '64', '--max-query-len', '16'])}
  tasks.glue = {
    name: 'glue',
    cls: 'BertForSequenceClassification',
    features: SST.map(single),
    dir: finetune('glue', ['--task', 'sst2', '--train', sst, '--dev', sst, '--max-len', '32']),
  }
  tasks.ner = {
    name: 'ner',
    cls: 'BertForTokenClassification',
    features: [single(NER.map(([w]) => w).join(' '))],
    dir: finetune('ner', ['--train', ner, '--dev', ner, '--max-len', '16']),
  }
  const mc = swagRows('handmade-dev.csv').map((r) => r.slice(7, 11).map((e) => pair(r[4], `${r[5]} ${e}`)))
  const K = mc[0].length
  const swag = {name: 'swag', cls: 'BertForMultipleChoice', choices: K, features: mc.map(padChoices)}
  tasks.swag = {...swag, dir: finetune('swag', ['--train', join(ROOT, 'fixtures', 'swag', 'handmade-train.csv'), '--dev', swagDev, '--max-len', '32'])}
  const exported = join(tmp, 'glue-pt')
  const ex = runSpan(['export', '--model', tasks.glue.dir, '--to', exported, '--format', 'pytorch'])
  expect(ex.code, ex.stderr).toBe(0)
  const jobs = Object.values(tasks).map((t) => ({job: 'load', cls: t.cls, dir: t.dir, inputs: t.features, choices: t.choices}))
  jobs.push({job: 'load', cls: 'BertForSequenceClassification', dir: exported, inputs: tasks.glue.features, choices: undefined})
  jobs.push({
    job: 'load',
    cls: 'BertForQuestionAnswering',
    dir: renamedCopy(tasks.squad.dir, 'qa_outputs.weight', 'qa_outputz.weight'),
    inputs: tasks.squad.features,
    choices: undefined,
  })
  const answers = JSON.parse(python('hf.py', [], JSON.stringify(jobs))) as (typeof hf)[string][]
  for (const t of Object.keys(tasks)) hf[t] = answers.shift()!
  hf.exported = answers.shift()!
  hf.renamed = answers.shift()!
  for (const [t, v] of Object.entries(tasks)) ours[t] = await spanLogits(t, v.dir, v.features, v.choices)
  const pr = (task: string, args: string[]) => {
    const r = runSpan(['predict', task, '--model', join(tmp, task), ...args])
    expect(r.code, r.stderr).toBe(0)
    return r.stdout
  }
  pr('squad', ['--data', sq, '--output', join(tmp, 'squad-pred')])
  predicted.glue = pr('glue', ['--data', sst])
  predicted.ner = pr('ner', ['--data', ner])
  predicted.swag = pr('swag', ['--data', swagDev])
}, 900_000)

/** A copy of a checkpoint with one tensor renamed in model.safetensors' header (a name of the same length: the offsets stay). */
function renamedCopy(dir: string, from: string, to: string): string {
  const out = join(tmp, 'renamed')
  cpSync(dir, out, {recursive: true})
  const file = join(out, 'model.safetensors')
  const b = readFileSync(file)
  const n = Number(b.readBigUInt64LE(0))
  const header = b.subarray(8, 8 + n).toString('utf8')
  expect(header).toContain(`"${from}"`)
  b.write(header.replace(`"${from}"`, `"${to}"`), 8, 'utf8')
  writeFileSync(file, b)
  return out
}

const argmax = (xs: number[]): number => xs.indexOf(Math.max(...xs))
const theirLogits = (t: string, i: number): number[] => {
  const o = hf[t].outputs[i]
  return t === 'squad' || t === 'renamed' ? [...o.start, ...o.end] : (o.logits as number[] | number[][]).flat()
}

describe.skipIf(why !== null)(titled(`transformers (${version('transformers')}) head classes on span's fine-tuned checkpoints`, why), () => {
  it.each(['squad', 'glue', 'ner', 'swag'])("%s: loads with no missing, unexpected or mismatched key and gives span's logits", (t) => {
    expect(hf[t].info).toEqual({missing_keys: [], unexpected_keys: [], mismatched_keys: []})
    tasks[t].features.forEach((_, i) => expect(maxRel(ours[t][i], theirLogits(t, i))).toBeLessThanOrEqual(1e-5))
  })

  it('a renamed weight (qa_outputs.weight → qa_outputz.weight) shows: missing and unexpected, and other logits', () => {
    expect(hf.renamed.info).toEqual({missing_keys: ['qa_outputs.weight'], unexpected_keys: ['qa_outputz.weight'], mismatched_keys: []})
    expect(maxRel(ours.squad[0], theirLogits('renamed', 0))).toBeGreaterThan(1e-3)
  })

  it('glue: span export --format pytorch loads the same, with the same logits', () => {
    expect(hf.exported.info).toEqual({missing_keys: [], unexpected_keys: [], mismatched_keys: []})
    tasks.glue.features.forEach((_, i) => expect(maxRel(ours.glue[i], hf.exported.outputs[i].logits as number[])).toBeLessThanOrEqual(1e-5))
  })

  it("squad: the start and end logits of span predict squad's n-best answers are transformers' logits at those tokens", () => {
    const nbest = JSON.parse(readFileSync(join(tmp, 'squad-pred', 'nbest_predictions.json'), 'utf8')) as Record<
      string,
      {start_logit: number; end_logit: number}[]
    >
    const {start, end} = hf.squad.outputs[0]
    const near = (xs: number[], v: number) => xs.some((x) => Math.abs(x - v) <= 1e-4 * Math.max(1, Math.abs(v)))
    expect(nbest.q1.length).toBeGreaterThan(0)
    for (const a of nbest.q1) {
      expect(near(start, a.start_logit), `start ${a.start_logit}`).toBe(true)
      expect(near(end, a.end_logit), `end ${a.end_logit}`).toBe(true)
    }
  })

  it("glue, ner, swag: span predict's labels, tags and choices are the argmax of transformers' logits", () => {
    const labels = predicted.glue
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split('\t')[1]) // below the "index<TAB>prediction" header
    const glueLabels = JSON.parse(readFileSync(join(tasks.glue.dir, 'config.json'), 'utf8')).id2label as Record<string, string>
    expect(labels).toEqual(hf.glue.outputs.map((o) => glueLabels[String(argmax(o.logits as number[]))]))
    const tags = predicted.ner
      .trim()
      .split('\n')
      .slice(2)
      .map((l) => l.split(' ').pop())
    const rows = hf.ner.outputs[0].logits as unknown as number[][]
    const labelsOf = JSON.parse(readFileSync(join(tasks.ner.dir, 'config.json'), 'utf8')).id2label as Record<string, string>
    let at = 1 // the first sub-token of each word
    const want = NER.map(([w]) => {
      const tag = labelsOf[String(argmax(rows[at]))]
      at += tok.encode(w).length
      return tag
    })
    expect(tags.map((t) => t?.replace(/^B-/, 'I-'))).toEqual(want.map((t) => t.replace(/^B-/, 'I-')))
    const choices = predicted.swag.trim().split('\n').map(Number)
    expect(choices).toEqual(hf.swag.outputs.map((o) => argmax(o.logits as number[])))
  })
})
