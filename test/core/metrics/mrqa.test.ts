import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {answerDict, evaluateMrqa} from '../../../src/core/metrics/mrqa.js'
import {formatV1Json} from '../../../src/core/metrics/squad-format.js'

const golden = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'fixtures', 'mrqa', 'golden-eval.json'), 'utf8'))
interface Case {
  name: string
  data: {qas: {qid: string; answers: string[]}[]}[]
  predictions: Record<string, string>
  skip_no_answer: boolean
  expected: {exact_match: number; f1: number}
  stdout: string
}

describe('MRQA scorer port against mrqa_official_eval.py (fixtures/mrqa/golden-eval.json)', () => {
  it.each((golden.cases as Case[]).map((c) => [c.name, c]))('%s', (_, c) => {
    const k = c as Case
    const answers = answerDict(k.data.flatMap((ctx) => ctx.qas))
    const r = evaluateMrqa(answers, new Map(Object.entries(k.predictions)), k.skip_no_answer)
    expect(r).toEqual(k.expected)
    expect(k.stdout.endsWith(formatV1Json(r))).toBe(true)
  })
})
