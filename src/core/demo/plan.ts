/**
 * The files and commands of `span demo` (README.md, "span demo"): every stage is a real `span`
 * command line, so the demo can print it for a user to run, and every file stays in one folder.
 */
import {readFile, writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {DEFAULT_CORPUS, DEFAULT_VOCAB, FIXTURES} from '../text/vocab.js'
import type {Stage} from './pipeline.js'

export const DEMO_HELD_OUT = 20 // masked examples kept out of pre-training, for its evaluation
const SQUAD_TRAIN = join(FIXTURES, 'squad-demo', 'train.json')
export const SQUAD_DEV = join(FIXTURES, 'squad-demo', 'dev.json')

/** Where each file of the demo goes, inside `dir`. */
export function demoFiles(dir: string) {
  const at = (name: string) => join(dir, name)
  return {
    dir,
    masked: at('train.ndjson'),
    spanSvg: at('span-lengths.svg'),
    pretrainTrain: at('pretrain-train.ndjson'),
    pretrainEval: at('pretrain-eval.ndjson'),
    model: at('model'),
    pretrainMetrics: at('pretrain-metrics.ndjson'),
    pretrainSvg: at('pretrain-curves.svg'),
    qaModel: at('squad-model'),
    qaPred: at('squad-pred'),
    squadMetrics: at('squad-metrics.ndjson'),
    squadSvg: at('squad-curves.svg'),
    squadEval: at('squad-eval.json'),
    eraTrain: at('era-train.tsv'),
    eraDev: at('era-dev.tsv'),
    eraModel: at('era-model'),
    eraMetrics: at('era-metrics.ndjson'),
    eraPred: at('era-pred.tsv'),
    eraEval: at('era-eval.json'),
  }
}
export type DemoFiles = ReturnType<typeof demoFiles>

export interface DemoOptions {
  seed: number
  len: number
  steps: number
  epochs: number
  eraEpochs: number
  backend: string
}

/** tokenize | block | mask: the embedded corpus, as span-masked examples. */
export function dataStages(o: DemoOptions): Stage[] {
  return [
    ['tokenize', '--vocab', DEFAULT_VOCAB, DEFAULT_CORPUS],
    ['block', '--len', String(o.len)],
    ['mask', '--scheme', 'span', '--p', '0.2', '--seed', String(o.seed)],
  ]
}

/** The masked examples split in two files: the last DEMO_HELD_OUT for pre-training's evaluation. */
export async function splitHeldOut(f: DemoFiles): Promise<void> {
  const [header, ...examples] = (await readFile(f.masked, 'utf8')).trimEnd().split('\n')
  await writeFile(f.pretrainTrain, [header, ...examples.slice(0, -DEMO_HELD_OUT)].join('\n') + '\n')
  await writeFile(f.pretrainEval, [header, ...examples.slice(-DEMO_HELD_OUT)].join('\n') + '\n')
}

/** span pretrain of the tiny model, logging and evaluating four times. */
export function pretrainStage(f: DemoFiles, o: DemoOptions): Stage {
  const every = String(Math.max(1, Math.round(o.steps / 4)))
  return [
    'pretrain',
    f.pretrainTrain,
    '--preset',
    'tiny',
    '--backend',
    o.backend,
    '--max-steps',
    String(o.steps),
    '--batch-size',
    '8',
    '--lr',
    '1e-3',
    '--warmup',
    String(Math.ceil(o.steps / 10)),
    '--log-every',
    every,
    '--eval',
    f.pretrainEval,
    '--eval-every',
    every,
    '--out',
    f.model,
  ]
}

/** Fine-tune for extractive QA on the embedded questions, predict the held-out ones, score them. */
export function squadStages(f: DemoFiles, o: DemoOptions): {finetune: Stage; predict: Stage; evaluate: Stage} {
  return {
    finetune: [
      'finetune',
      'squad',
      '--init',
      f.model,
      '--train',
      SQUAD_TRAIN,
      '--dev',
      SQUAD_DEV,
      '--out',
      f.qaModel,
      '--backend',
      o.backend,
      '--max-len',
      '128',
      '--doc-stride',
      '64',
      '--max-query-len',
      '32',
      '--epochs',
      String(o.epochs),
      '--batch-size',
      '16',
      '--lr',
      '1e-3',
      '--log-every',
      '10',
    ],
    predict: ['predict', 'squad', '--model', f.qaModel, '--data', SQUAD_DEV, '-o', f.qaPred, '--backend', o.backend],
    evaluate: ['eval', 'squad', '--data', SQUAD_DEV, '--pred', join(f.qaPred, 'predictions.json'), '--json'],
  }
}

/** Fine-tune on the era task (era.ts) from the pre-trained model (no --dev: its last checkpoint, nothing chosen on the dev set), predict its dev set, score it. */
export function eraStages(f: DemoFiles, o: DemoOptions): {finetune: Stage; predict: Stage; evaluate: Stage} {
  return {
    finetune: [
      'finetune',
      'glue',
      '--task',
      'sst2',
      '--init',
      f.model,
      '--train',
      f.eraTrain,
      '--out',
      f.eraModel,
      '--backend',
      o.backend,
      '--max-len',
      '64',
      '--epochs',
      String(o.eraEpochs),
      '--batch-size',
      '32',
      '--lr',
      '1e-3',
      '--seed',
      String(o.seed),
      '--log-every',
      '10',
    ],
    predict: ['predict', 'glue', '--model', f.eraModel, '--data', f.eraDev, '-o', f.eraPred, '--backend', o.backend],
    evaluate: ['eval', 'glue', '--task', 'sst2', '--gold', f.eraDev, '--pred', f.eraPred, '--json'],
  }
}
