import {existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {describeShared, sharedPath} from '../../helpers/shared-data.js'
import {collectOutputs, detectVersion, jsonErrorAt, objectKeysInFileOrder, parseJsonText, parseSquad, readNaProbsFile, readSquadFile, writeSquadOutputs, type QuestionPrediction} from '../../../src/core/tasks/squad/index.js'

const describeData = describeShared('squad')

const DATA = sharedPath('squad')
const tmp = mkdtempSync(join(tmpdir(), 'span-squad-read-'))

const squad = (qas: unknown[], context = 'Rollo founded Normandy in 911.', extra = {}) => ({version: '1.1', ...extra, data: [{title: 'T', paragraphs: [{context, qas}]}]})

describeData('reading SQuAD files', () => {
  it('reads XQuAD as v1.1 and the SQuAD 2.0 subset as v2.0, with every offset checked', () => {
    const x = readSquadFile(join(DATA, 'xquad.en.json'), {checkOffsets: true})
    expect([x.version, x.declaredVersion, x.examples.length]).toEqual(['1.1', '1.1', 1190])
    const r = readSquadFile(join(DATA, 'squad-v2.0-dev-subset-normans-rhine.json'), {checkOffsets: true})
    expect([r.version, r.declaredVersion, r.examples.length, r.examples.filter((e) => e.isImpossible).length]).toEqual(['2.0', 'v2.0', 706, 320])
    expect(r.examples[0]).toMatchObject({id: '56ddde6b9a695914005b9628', title: 'Normans', question: 'In what country is Normandy located?', isImpossible: false})
    expect(r.examples[0].answers[0]).toEqual({text: 'France', start: 159})
  })

  it('detects the version from "version", else from is_impossible', () => {
    expect([detectVersion('1.1', true), detectVersion('v2.0', false), detectVersion('2.0', false), detectVersion(null, true), detectVersion('x', false)]).toEqual(['1.1', '2.0', '2.0', '2.0', '1.1'])
  })

  it('counts answer offsets in code points, as Python does', () => {
    const ok = squad([{id: 'e', question: '?', answers: [{text: 'Rollo', answer_start: 2}]}], '🙂 Rollo')
    expect(parseSquad(ok, 'f.json', {checkOffsets: true}).examples[0].answers[0].start).toBe(2)
    const utf16 = squad([{id: 'e', question: '?', answers: [{text: 'Rollo', answer_start: 3}]}], '🙂 Rollo')
    expect(() => parseSquad(utf16, 'f.json', {checkOffsets: true})).toThrow('(found "ollo")')
  })

  it('names the question whose answer is not at its answer_start', () => {
    const bad = squad([{id: 'q7', question: '?', answers: [{text: 'Normandy', answer_start: 3}]}])
    expect(() => parseSquad(bad, 'f.json', {checkOffsets: true})).toThrow('f.json: question q7: answer 0 "Normandy" is not at answer_start 3 of its context (found "lo found")')
    expect(parseSquad(bad, 'f.json').examples).toHaveLength(1) // the scorer only needs the texts
  })

  it.each([
    [[1, 2], 'f.json: not a SQuAD dataset: the top level is not an object'],
    [{version: '1.1'}, 'f.json: not a SQuAD dataset: the top level has no "data" list'],
    [{data: [{paragraphs: [{qas: []}]}]}, 'f.json: not a SQuAD dataset: data[0].paragraphs[0] has no "context" string'],
    [squad([{question: '?', answers: []}]), 'f.json: not a SQuAD dataset: data[0].paragraphs[0].qas[0] has no "id" string'],
    [squad([{id: 'q1', question: '?'}]), 'f.json: not a SQuAD dataset: data[0].paragraphs[0].qas[0] (question q1) has no "answers" list'],
    [squad([{id: 'q1', question: '?', answers: [{text: 'x', answer_start: -1}]}]), 'answers[0] (question q1) has no "answer_start" integer ≥ 0'],
    [squad([{id: 'q1', question: '?', answers: [], is_impossible: 'yes'}]), '(question q1) "is_impossible" is not a boolean'],
    [squad([]), 'f.json: no questions in the dataset'],
  ])('refuses %j', (json, message) => {
    expect(() => parseSquad(json, 'f.json')).toThrow(message)
  })
})

describe('JSON files', () => {
  it('places syntax errors by line and column', () => {
    expect(() => parseJsonText('{\n "a": [1,\n 2,,]\n}', 'p.json')).toThrow('p.json:3: invalid JSON at column 4: unexpected character ","')
    expect(() => parseJsonText('{"a": "x\ny"}', 'p.json')).toThrow('p.json:1: invalid JSON at column 7: bad string')
    expect(() => parseJsonText('{"a": 01}', 'p.json')).toThrow("p.json:1: invalid JSON at column 8: expected ',' or '}'")
    expect(() => parseJsonText('{} x', 'p.json')).toThrow('p.json:1: invalid JSON at column 4: unexpected data after the JSON value')
    expect(() => parseJsonText('\ufeff', 'p.json')).toThrow('p.json: empty file, expected JSON')
    expect(parseJsonText('\ufeff{"a": 1}', 'p.json')).toEqual({a: 1})
    expect(jsonErrorAt('[1, tru]')).toEqual({offset: 4, message: 'unexpected character "t"'})
  })

  it('keeps the file order of keys, integer-like ones included (find_best_thresh ties depend on it)', () => {
    const text = '{"b": 1, "2": {"x": "y", "z": [1, "q"]}, "a\\"c": 2, "1": 3, "b": 4}'
    expect(objectKeysInFileOrder(text)).toEqual(['b', '2', 'a"c', '1'])
    writeFileSync(join(tmp, 'na.json'), '{"9": 0.5, "10": 0.5, "x": 0.25}')
    expect([...readNaProbsFile(join(tmp, 'na.json'))]).toEqual([['9', 0.5], ['10', 0.5], ['x', 0.25]])
    writeFileSync(join(tmp, 'na-bad.json'), '{"x": "0.5"}')
    expect(() => readNaProbsFile(join(tmp, 'na-bad.json'))).toThrow('the na-prob of x is not a number ("0.5")')
  })
})

describe('writing predictions.json, nbest_predictions.json, null_odds.json', () => {
  const preds: QuestionPrediction[] = [
    {qid: 'a', text: 'Rollo', nbest: [{text: 'Rollo', probability: 1, start_logit: 2, end_logit: 3}], nullOdds: -4.5},
    {qid: 'b', text: '', nbest: [{text: '', probability: 1, start_logit: 1, end_logit: 1}], nullOdds: 2},
  ]
  it('writes the three files whole, with no temporary file left', async () => {
    const dir = mkdtempSync(join(tmp, 'out-'))
    const paths = await writeSquadOutputs(dir, collectOutputs(preds))
    expect(readdirSync(dir).sort()).toEqual(['nbest_predictions.json', 'null_odds.json', 'predictions.json'])
    expect(paths.map((p) => p.slice(dir.length + 1))).toEqual(['predictions.json', 'nbest_predictions.json', 'null_odds.json'])
    expect(JSON.parse(readFileSync(join(dir, 'predictions.json'), 'utf8'))).toEqual({a: 'Rollo', b: ''})
    expect(JSON.parse(readFileSync(join(dir, 'null_odds.json'), 'utf8'))).toEqual({a: -4.5, b: 2})
    expect(JSON.parse(readFileSync(join(dir, 'nbest_predictions.json'), 'utf8')).a[0]).toEqual({text: 'Rollo', probability: 1, start_logit: 2, end_logit: 3})
  })

  it('writes no null_odds.json for v1.1 predictions, and nothing into a missing folder', async () => {
    const dir = mkdtempSync(join(tmp, 'out-'))
    await writeSquadOutputs(dir, collectOutputs(preds.map(({nullOdds: _nullOdds, ...p}) => p)))
    expect(existsSync(join(dir, 'null_odds.json'))).toBe(false)
    await expect(writeSquadOutputs(join(dir, 'nope'), collectOutputs(preds))).rejects.toThrow()
    expect(existsSync(join(dir, 'nope'))).toBe(false)
  })
})
