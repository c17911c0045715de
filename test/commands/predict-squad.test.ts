// `span predict squad` as a user runs it (dist/ must be built): the files of run_squad's
// write_predictions with their keys, v2.0's null_odds.json, and bad input that writes nothing.
import {copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'
import {initBackend} from '../../src/core/engine/index.js'
import {writeFilesAtomically} from '../../src/core/model/checkpoint.js'
import {BertForQuestionAnswering, qaModelFiles} from '../../src/core/model/qa.js'
import {smallConfig} from '../core/model/helpers.js'
import {fixtureVocab} from '../core/train/helpers.js'
import {context, qas, squad} from './squad-fixture.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-predict-squad-'))
const model = join(tmp, 'qa')
const v1 = join(tmp, 'v1.json')
const v2 = join(tmp, 'v2.json')

function span(args: string[], dir = model) {
  return runSpan(['predict', 'squad', '--model', dir, '--backend', 'wasm', '--batch-size', '3', ...args])
}
const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'))

beforeAll(async () => {
  await initBackend('cpu')
  const qa = BertForQuestionAnswering.init(smallConfig({vocab_size: fixtureVocab.tokens.length, max_position_embeddings: 40}), 4)
  await writeFilesAtomically(model, await qaModelFiles(qa))
  qa.dispose()
  copyFileSync(fixtureVocab.info.path, join(model, 'vocab.txt'))
  writeFileSync(join(model, 'finetune_config.json'), JSON.stringify({'max-len': 32, 'doc-stride': 8, 'max-query-len': 8}))
  writeFileSync(v1, squad(qas))
  writeFileSync(v2, squad([...qas, {id: 'q4', question: 'Who flew?', answers: [], is_impossible: true}], 'v2.0'))
})

describe('span predict squad', () => {
  it('v1.1: predictions.json and nbest_predictions.json, every question, texts from the passage', () => {
    const out = join(tmp, 'out-v1')
    const r = span(['--data', v1, '-o', out, '--n-best', '20'])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(readdirSync(out).sort()).toEqual(['nbest_predictions.json', 'predictions.json']) // its own files only: no manifest in the user's folder
    const preds = readJson(join(out, 'predictions.json'))
    expect(Object.keys(preds)).toEqual(['q1', 'q2', 'q3'])
    for (const text of Object.values(preds)) expect(context).toContain(text as string)
    const nbest = readJson(join(out, 'nbest_predictions.json'))
    expect(Object.keys(nbest)).toEqual(['q1', 'q2', 'q3'])
    for (const [id, list] of Object.entries(nbest) as [string, Record<string, unknown>[]][]) {
      expect(list.length).toBeGreaterThan(0)
      expect(list.length).toBeLessThanOrEqual(20)
      expect(Object.keys(list[0]).sort()).toEqual(['end_logit', 'probability', 'start_logit', 'text'])
      expect(list[0].text).toBe(preds[id])
    }
    expect(readFileSync(join(out, 'predictions.json'), 'utf8')).toMatch(/^\{\n {4}"q1"/) // run_squad's indent 4
  })

  it('v2.0: null_odds.json too, and --null-threshold decides between the null and the best span', () => {
    const low = join(tmp, 'out-v2-low')
    const high = join(tmp, 'out-v2-high')
    expect(span(['--data', v2, '-o', low, '--null-threshold', '-1e9']).code).toBe(0)
    expect(span(['--data', v2, '-o', high, '--null-threshold', '1e9']).code).toBe(0)
    const odds = readJson(join(low, 'null_odds.json'))
    expect(Object.keys(odds)).toEqual(['q1', 'q2', 'q3', 'q4'])
    for (const v of Object.values(odds)) expect(typeof v).toBe('number')
    expect(Object.values(readJson(join(low, 'predictions.json')))).toEqual(['', '', '', ''])
    for (const v of Object.values(readJson(join(high, 'predictions.json')))) expect((v as string).length).toBeGreaterThan(0)
  })

  it('bad input: one line on stderr, non-zero exit, earlier outputs in -o left as they were', () => {
    const out = join(tmp, 'out-kept')
    mkdirSync(out)
    writeFileSync(join(out, 'predictions.json'), '{"old": "answer"}')
    for (const text of ['', '{"data": [', '{"data": 3}']) {
      const bad = join(tmp, 'bad.json')
      writeFileSync(bad, text)
      const r = span(['--data', bad, '-o', out])
      expect(r.code).not.toBe(0)
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(r.stderr).toMatch(/^span predict squad: .*bad\.json/)
      expect(readdirSync(out)).toEqual(['predictions.json'])
      expect(readFileSync(join(out, 'predictions.json'), 'utf8')).toBe('{"old": "answer"}')
    }
    const r = span(['--data', v1, '-o', join(tmp, 'never')], tmp)
    expect(r.stderr.trim()).toBe(`span predict squad: ${tmp}: not a checkpoint directory (no config.json)`)
    expect(existsSync(join(tmp, 'never'))).toBe(false)
  })
})
