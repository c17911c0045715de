import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {describeShared, sharedPath} from '../../helpers/shared-data.js'
import {openSource} from '../../../src/core/stream/lines.js'
import {
  GLUE_TASKS,
  align,
  compareGlue,
  evaluateGlue,
  formatPredictions,
  glueTask,
  predictionLine,
  readGlueFile,
  readGold,
  readPredictions,
  type GlueTask,
} from '../../../src/core/tasks/glue/index.js'

const describeData = describeShared('glue')

const DATA = sharedPath('glue')
const tmp = mkdtempSync(join(tmpdir(), 'span-glue-'))
let fileNo = 0

function file(text: string): string {
  const path = join(tmp, `f${fileNo++}.tsv`)
  writeFileSync(path, text)
  return path
}

async function read(task: GlueTask, path: string) {
  return readGlueFile(await openSource(path), task)
}

function counts(labels: (string | null)[]): Record<string, number> {
  const c: Record<string, number> = {}
  for (const l of labels) c[String(l)] = (c[String(l)] ?? 0) + 1
  return c
}

describeData('GLUE readers on the distributed files', () => {
  it('CoLA dev: no header, 4 columns, no final newline', async () => {
    const {examples, labeled} = await read(GLUE_TASKS.CoLA, join(DATA, 'CoLA', 'dev.tsv'))
    expect([examples.length, labeled]).toEqual([1043, true])
    expect(counts(examples.map((e) => e.label))).toEqual({0: 322, 1: 721})
    expect(examples[0]).toEqual({index: '0', a: 'The sailors rode the breeze clear of the rocks.', b: null, label: '1', line: 1})
    expect(examples[1042]).toMatchObject({index: '1042', a: 'John talked to Bill about himself.', line: 1043})
  })

  it('SST-2 dev and train: header sentence, label', async () => {
    const dev = await read(GLUE_TASKS['SST-2'], join(DATA, 'SST-2', 'dev.tsv'))
    expect(counts(dev.examples.map((e) => e.label))).toEqual({0: 428, 1: 444})
    expect(dev.examples[0]).toEqual({index: '0', a: "it 's a charming and often affecting journey . ", b: null, label: '1', line: 2})
    const train = await read(GLUE_TASKS['SST-2'], join(DATA, 'SST-2', 'train.tsv'))
    expect(counts(train.examples.map((e) => e.label))).toEqual({0: 29780, 1: 37569})
  })

  it('MRPC dev and train: the UTF-8 BOM before the header is skipped', async () => {
    const dev = await read(GLUE_TASKS.MRPC, join(DATA, 'MRPC', 'dev.tsv'))
    expect(counts(dev.examples.map((e) => e.label))).toEqual({0: 129, 1: 279})
    expect(dev.examples[0].a).toBe("He said the foodservice pie business doesn't fit the company's long-term growth strategy.")
    expect(dev.examples[0].b).toBe('"The foodservice pie business does not fit our long-term growth strategy.') // quotes are text
    const train = await read(GLUE_TASKS.MRPC, join(DATA, 'MRPC', 'train.tsv'))
    expect(counts(train.examples.map((e) => e.label))).toEqual({0: 1194, 1: 2474})
  })

  it('STS-B dev: sentence1, sentence2 and the score from the 10-column header; index from the file', async () => {
    const {examples} = await read(GLUE_TASKS['STS-B'], join(DATA, 'STS-B', 'dev.tsv'))
    expect(examples).toHaveLength(1500)
    expect(examples[0]).toEqual({index: '0', a: 'A man with a hard hat is dancing.', b: 'A man wearing a hard hat is dancing.', label: '5.000', line: 2})
    expect(examples.every((e) => Number(e.label) >= 0 && Number(e.label) <= 5)).toBe(true)
  })

  it('RTE dev: index, sentence1, sentence2, entailment/not_entailment', async () => {
    const {examples} = await read(GLUE_TASKS.RTE, join(DATA, 'RTE', 'dev.tsv'))
    expect(counts(examples.map((e) => e.label))).toEqual({entailment: 146, not_entailment: 131})
    expect(examples[276].index).toBe('276')
    expect(examples[0].b).toBe('Christopher Reeve had an accident.')
  })
})

describeData('GLUE readers on hand-built layouts', () => {
  it('MNLI train/dev by column name (gold_label last, after label1..label5)', async () => {
    const head = 'index\tpromptID\tpairID\tgenre\ts1b\ts2b\ts1p\ts2p\tsentence1\tsentence2\tlabel1\tlabel2\tlabel3\tlabel4\tlabel5\tgold_label'
    const row = '7\tp\tq\tfiction\tb\tb\tp\tp\tA man.\tA person.\tneutral\tentailment\tentailment\tentailment\tentailment\tentailment'
    const {examples} = await read(GLUE_TASKS.MNLI, file(`${head}\n${row}\n`))
    expect(examples).toEqual([{index: '7', a: 'A man.', b: 'A person.', label: 'entailment', line: 2}])
  })

  it('test files (index first, no label) are read unlabelled', async () => {
    const rte = await read(GLUE_TASKS.RTE, file('index\tsentence1\tsentence2\n0\tA.\tB.\n1\tC.\tD.\n'))
    expect([rte.labeled, rte.examples[1]]).toEqual([false, {index: '1', a: 'C.', b: 'D.', label: null, line: 3}])
    const cola = await read(GLUE_TASKS.CoLA, file('index\tsentence\n0\tBill left.\n'))
    expect(cola.examples).toEqual([{index: '0', a: 'Bill left.', b: null, label: null, line: 2}])
    const qqp = await read(GLUE_TASKS.QQP, file('id\tquestion1\tquestion2\n9\tWhy?\tHow?\n'))
    expect(qqp.examples[0]).toMatchObject({index: '9', a: 'Why?', b: 'How?', label: null})
    const mrpc = await read(GLUE_TASKS.MRPC, file('\uFEFFindex\t#1 ID\t#2 ID\t#1 String\t#2 String\n3\t1\t2\tx\ty\n'))
    expect(mrpc.examples[0]).toMatchObject({index: '3', a: 'x', b: 'y', label: null})
  })

  it('QQP and QNLI labelled layouts', async () => {
    const qqp = await read(GLUE_TASKS.QQP, file('id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n133\t1\t2\tWhy?\tHow?\t1\n'))
    expect(qqp.examples[0]).toEqual({index: '133', a: 'Why?', b: 'How?', label: '1', line: 2})
    const qnli = await read(GLUE_TASKS.QNLI, file('index\tquestion\tsentence\tlabel\n0\tQ?\tS.\tnot_entailment\n'))
    expect(qnli.examples[0]).toMatchObject({a: 'Q?', b: 'S.', label: 'not_entailment'})
  })

  it('errors name the file and line, in one line', async () => {
    const wide = file('index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n1\ta\tb\n')
    await expect(read(GLUE_TASKS.RTE, wide)).rejects.toThrow(`${wide}:3: expected 4 tab-separated columns for RTE, got 3`)
    const bad = file('index\tsentence1\tsentence2\tlabel\n0\ta\tb\tcontradiction\n')
    await expect(read(GLUE_TASKS.RTE, bad)).rejects.toThrow(`${bad}:2: unknown RTE label "contradiction" (expected entailment or not_entailment)`)
    const cola = file('gj04\t1\t\tFine.\ngj04\t2\t*\tBad.\n')
    await expect(read(GLUE_TASKS.CoLA, cola)).rejects.toThrow(`${cola}:2: unknown CoLA label "2" (expected 0 or 1)`)
    const sts = join(DATA, 'STS-B', 'dev.tsv')
    const wrong = join(DATA, 'SST-2', 'dev.tsv')
    await expect(read(GLUE_TASKS['STS-B'], wrong)).rejects.toThrow(`${wrong}:1: not a STS-B file: the header has no "sentence1" and "sentence2" column`)
    await expect(readGold(sts, GLUE_TASKS.RTE)).rejects.toThrow(`${sts}: no RTE labels in this file (a test file?)`) // no label column
    const score = file('index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore\n0\tg\tf\ty\to\ts\ts\ta\tb\thigh\n')
    await expect(read(GLUE_TASKS['STS-B'], score)).rejects.toThrow(`${score}:2: STS-B score must be a number, got "high"`)
    await expect(read(GLUE_TASKS.RTE, file(''))).rejects.toThrow(/:1: empty RTE file$/)
  })

  it('task names are case- and hyphen-insensitive', () => {
    expect(glueTask('sst2').name).toBe('SST-2')
    expect(glueTask('sts-b').name).toBe('STS-B')
    expect(glueTask('cola').metric).toBe('mcc')
    expect(glueTask('mnli-mm').name).toBe('MNLI')
    expect(glueTask('MNLI').labels).toEqual(['contradiction', 'entailment', 'neutral'])
    expect(() => glueTask('snli')).toThrow('unknown GLUE task "snli" (one of CoLA, SST-2, MRPC, STS-B, QQP, MNLI, QNLI, RTE, WNLI)')
  })
})

describe('GLUE submission format', () => {
  it('writes label strings, class numbers as labels, STS-B scores with 3 decimals', () => {
    expect(predictionLine(GLUE_TASKS.RTE, 0, 1)).toBe('0\tnot_entailment')
    expect(predictionLine(GLUE_TASKS.MNLI, 5, 'neutral')).toBe('5\tneutral')
    expect(predictionLine(GLUE_TASKS.CoLA, 2, 1)).toBe('2\t1')
    expect(predictionLine(GLUE_TASKS['STS-B'], 3, 4.12345)).toBe('3\t4.123')
    expect(formatPredictions(GLUE_TASKS.MRPC, [{index: 0, value: 1}, {index: 1, value: '0'}])).toBe('index\tprediction\n0\t1\n1\t0\n')
    expect(() => predictionLine(GLUE_TASKS.RTE, 0, 2)).toThrow('RTE has no class 2 (0..1)')
    expect(() => predictionLine(GLUE_TASKS.RTE, 0, 'yes')).toThrow('unknown RTE label "yes"')
    expect(() => predictionLine(GLUE_TASKS['STS-B'], 0, Number.NaN)).toThrow('STS-B prediction must be a number')
  })

  it('reads what it writes, and rejects a missing header, bad labels and repeats with file:line', async () => {
    const ok = file(formatPredictions(GLUE_TASKS.RTE, [{index: 0, value: 0}, {index: 1, value: 1}]))
    const map = await readPredictions(await openSource(ok), GLUE_TASKS.RTE)
    expect([...map]).toEqual([['0', {value: 'entailment', line: 2}], ['1', {value: 'not_entailment', line: 3}]])
    const noHeader = file('0\tentailment\n')
    await expect(readPredictions(await openSource(noHeader), GLUE_TASKS.RTE)).rejects.toThrow(`${noHeader}:1: expected the GLUE prediction header`)
    const rep = file('index\tprediction\n0\tentailment\n0\tentailment\n')
    await expect(readPredictions(await openSource(rep), GLUE_TASKS.RTE)).rejects.toThrow(`${rep}:3: index 0 repeated (first at line 2)`)
    const cols = file('index\tprediction\n0\n')
    await expect(readPredictions(await openSource(cols), GLUE_TASKS.RTE)).rejects.toThrow(`${cols}:2: expected 2 tab-separated columns (index, prediction), got 1`)
    const lab = file('index\tprediction\n0\t1\n')
    await expect(readPredictions(await openSource(lab), GLUE_TASKS.RTE)).rejects.toThrow(`${lab}:2: unknown RTE label "1"`)
  })
})

describe('scoring aligned predictions', () => {
  const gold = file('index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n1\ta\tb\tnot_entailment\n2\ta\tb\tentailment\n3\ta\tb\tentailment\n')

  it('matches by index, in any order', async () => {
    const pred = file('index\tprediction\n3\tentailment\n1\tnot_entailment\n0\tnot_entailment\n2\tentailment\n')
    expect(await evaluateGlue(GLUE_TASKS.RTE, gold, pred)).toEqual({n: 4, score: 0.75, acc: 0.75})
  })

  it('names missing and extra indices', async () => {
    const short = file('index\tprediction\n0\tentailment\n')
    await expect(evaluateGlue(GLUE_TASKS.RTE, gold, short)).rejects.toThrow(`${short}: no prediction for 3 of 4 gold examples (index 1, 2, 3)`)
    const extra = file('index\tprediction\n0\tentailment\n1\tentailment\n9\tentailment\n2\tentailment\n3\tentailment\n')
    await expect(evaluateGlue(GLUE_TASKS.RTE, gold, extra)).rejects.toThrow(`${extra}:4: index 9 is not in the gold file ${gold} (1 extra predictions)`)
  })

  it('refuses a test file as gold, and a repeated gold index', async () => {
    const test = file('index\tsentence1\tsentence2\n0\ta\tb\n')
    await expect(readGold(test, GLUE_TASKS.RTE)).rejects.toThrow(`${test}: no RTE labels in this file (a test file?)`)
    const rep = file('index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n0\ta\tb\tentailment\n')
    await expect(readGold(rep, GLUE_TASKS.RTE)).rejects.toThrow(`${rep}:3: index 0 repeated (first at line 2)`)
  })

  it('align keeps gold order', () => {
    const preds = new Map([['b', {value: '1', line: 3}], ['a', {value: '0', line: 2}]])
    expect(align({source: 'g', indices: ['a', 'b'], labels: ['0', '0']}, preds, 'p')).toEqual(['0', '1'])
  })

  it("compares two systems with McNemar's test; not on STS-B", async () => {
    const a = file('index\tprediction\n0\tentailment\n1\tnot_entailment\n2\tentailment\n3\tnot_entailment\n')
    const b = file('index\tprediction\n0\tnot_entailment\n1\tentailment\n2\tentailment\n3\tnot_entailment\n')
    const r = await compareGlue(GLUE_TASKS.RTE, gold, a, b)
    expect([r.accA, r.accB, r.mcnemar.b, r.mcnemar.c, r.mcnemar.test, r.mcnemar.pValue]).toEqual([0.75, 0.25, 2, 0, 'exact', 0.5])
    await expect(compareGlue(GLUE_TASKS['STS-B'], gold, a, b)).rejects.toThrow("McNemar's test needs a classification task; STS-B is a regression task")
  })
})
