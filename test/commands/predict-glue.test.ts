// `span predict glue` (dist/ must be built) on checkpoints saved in-process: a test file without
// labels (indices from its index column), STS-B scores with three decimals into a file, and a
// model whose head does not fit the task.
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'
import {describeShared, sharedPath} from '../helpers/shared-data.js'
import {initBackend} from '../../src/core/engine/index.js'
import {BertForSequenceClassification, type HeadConfig} from '../../src/core/model/classifier.js'
import {writeFilesAtomically} from '../../src/core/model/checkpoint.js'
import {type GlueFinetuneConfig, glueCheckpointFiles} from '../../src/core/tasks/glue/train.js'
import {GLUE_TASKS, type GlueTaskName} from '../../src/core/tasks/glue/tasks.js'
import {smallConfig} from '../core/model/helpers.js'
import {fixtureVocab} from '../core/train/helpers.js'

const describe = describeShared('glue/STS-B')

const STSB = sharedPath('glue', 'STS-B')
const tmp = mkdtempSync(join(tmpdir(), 'span-predict-glue-'))

function span(args: string[]) {
  return runSpan(['predict', 'glue', ...args])
}

/** A random model for `task` saved as `span finetune glue` saves its best checkpoint. */
async function saveModel(task: GlueTaskName, out: string): Promise<void> {
  const t = GLUE_TASKS[task]
  const head: HeadConfig = {num_labels: t.labels ? t.labels.length : 1, labels: t.labels ? [...t.labels] : [], finetuning_task: task, span_ft: null}
  const model = BertForSequenceClassification.init(smallConfig({vocab_size: fixtureVocab.tokens.length}), head, 2)
  const config = {task, out, cased: fixtureVocab.cased, 'max-len': 24, dict: null} as unknown as GlueFinetuneConfig
  await writeFilesAtomically(
    out,
    await glueCheckpointFiles({config, task: t, model, padId: 0, vocabPath: fixtureVocab.info.path, train: [], dev: null}, {epoch: 1}),
  )
  model.dispose()
}

beforeAll(async () => {
  await initBackend('cpu')
  await saveModel('SST-2', join(tmp, 'sst2'))
  await saveModel('STS-B', join(tmp, 'stsb'))
})

describe('span predict glue', () => {
  it('writes the submission TSV of a test file, indices from its index column', () => {
    const test = join(tmp, 'test.tsv')
    writeFileSync(test, 'index\tsentence\n10\ta gripping , funny film .\n11\tdull and far too long .\n12\tit works .\n')
    const r = span(['--model', join(tmp, 'sst2'), '--data', test, '--backend', 'wasm'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toBe('')
    const lines = r.stdout.trimEnd().split('\n')
    expect(lines[0]).toBe('index\tprediction')
    expect(lines.slice(1).map((l) => l.split('\t')[0])).toEqual(['10', '11', '12'])
    for (const l of lines.slice(1)) expect(l).toMatch(/^\d+\t[01]$/)
  })

  it('writes STS-B scores with three decimals to -o, atomically', () => {
    const dev = join(tmp, 'stsb-dev.tsv')
    writeFileSync(dev, readFileSync(join(STSB, 'dev.tsv'), 'utf8').split('\n').slice(0, 4).join('\n') + '\n')
    const out = join(tmp, 'STS-B.tsv')
    const r = span(['--model', join(tmp, 'stsb'), '--data', dev, '-o', out, '--backend', 'wasm'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe('')
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n')
    expect(lines).toHaveLength(4)
    for (const l of lines.slice(1)) expect(l).toMatch(/^\d+\t-?\d+\.\d{3}$/)
  })

  it('refuses a task the model has the wrong number of outputs for, writing nothing', () => {
    const out = join(tmp, 'never.tsv')
    const r = span(['--model', join(tmp, 'sst2'), '--data', join(tmp, 'test.tsv'), '--task', 'mnli', '-o', out])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/^span predict glue: .*sst2(\/best)? was fine-tuned on SST-2, not MNLI: its labels are SST-2's/) // the task first (issue 25 cause 8)
    expect(existsSync(out)).toBe(false)
  })
})
