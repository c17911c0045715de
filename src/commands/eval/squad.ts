import {Flags} from '@oclif/core'
import {SpanCommand, print} from '../../cli/base.js'
import {evaluateV1, evaluateV2, type GoldQuestion} from '../../core/metrics/squad.js'
import {formatV1Json, formatV1Table, formatV2Json, formatV2Table} from '../../core/metrics/squad-format.js'
import {SpanError, UsageError} from '../../core/stream/errors.js'
import {describeIds, matchIds, readNaProbsFile, readPredictionsFile, readSquadFile, type SquadDataset, type SquadVersion} from '../../core/tasks/squad/index.js'

export default class EvalSquad extends SpanCommand {
  static override summary = 'Score SQuAD predictions as the official v1.1 / v2.0 scripts do'
  static override description = [
    'Exact match and token F1 after normalize_answer, the maximum over the gold answers (evaluate-v1.1.py); for v2.0 also the HasAns/NoAns breakdown and, with --na-prob, best_exact/best_f1 and their thresholds (evaluate-v2.0.py). --json prints exactly what the official script prints.',
    'The version comes from the dataset\'s "version" field (or the presence of is_impossible) unless --version is given.',
    'A question without a prediction counts as wrong; predictions for unknown ids are ignored; both are reported on stderr.',
  ].join('\n\n')
  static override examples = [
    'span eval squad --data dev-v1.1.json --pred predictions.json',
    'span eval squad --data dev-v2.0.json --pred predictions.json --na-prob null_odds.json --json',
  ]
  static override flags = {
    data: Flags.string({description: 'the gold SQuAD dataset (JSON)', required: true}),
    pred: Flags.string({description: 'predictions.json: {"question id": "answer text"}', required: true}),
    'na-prob': Flags.string({description: 'v2.0: {"question id": no-answer probability or score}, e.g. null_odds.json'}),
    'na-prob-thresh': Flags.string({description: 'v2.0: predict "" where the na-prob exceeds this', default: '1.0'}),
    version: Flags.string({description: 'score as this SQuAD version instead of the detected one', options: ['1.1', '2.0']}),
    json: Flags.boolean({description: "print the official script's JSON instead of a table", default: false}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(EvalSquad)
    const thresh = Number(flags['na-prob-thresh'])
    if (flags['na-prob-thresh'].trim() === '' || !Number.isFinite(thresh)) throw new UsageError(`--na-prob-thresh must be a number, got ${JSON.stringify(flags['na-prob-thresh'])}`)
    const dataset = readSquadFile(flags.data)
    const version = (flags.version as SquadVersion | undefined) ?? dataset.version
    if (version === '1.1' && flags['na-prob']) throw new SpanError('--na-prob applies to SQuAD v2.0 only (see --version)')
    const questions = goldQuestions(dataset, version)
    const preds = readPredictionsFile(flags.pred)
    this.checkIds(questions, preds, flags)
    const naProbs = flags['na-prob'] ? readNaProbsFile(flags['na-prob']) : undefined
    if (naProbs) this.checkNaProbs(questions, preds, naProbs, flags['na-prob'] as string)
    await print(version === '1.1' ? this.v1(questions, preds, flags.json) : this.v2(questions, preds, {naProbs, naProbThresh: thresh}, flags.json))
  }

  private v1(questions: GoldQuestion[], preds: Map<string, string>, json: boolean): string {
    const r = evaluateV1(questions, preds)
    return json ? formatV1Json(r) : formatV1Table(r, questions.length)
  }

  private v2(questions: GoldQuestion[], preds: Map<string, string>, opts: Parameters<typeof evaluateV2>[2], json: boolean): string {
    const r = evaluateV2(questions, preds, opts)
    return json ? formatV2Json(r) : formatV2Table(r)
  }

  /** No overlap is an error (another dataset's predictions); missing and unknown ids are warnings. */
  private checkIds(questions: GoldQuestion[], preds: Map<string, string>, flags: {data: string; pred: string}): void {
    const {missing, unknown} = matchIds(questions.map((q) => q.id), preds.keys())
    const distinct = new Set(questions.map((q) => q.id)).size
    if (preds.size === 0) throw new SpanError(`${flags.pred}: no predictions (an empty JSON object)`)
    if (missing.length === distinct) throw new SpanError(`${flags.pred}: none of its ${preds.size} predictions is for a question of ${flags.data} (predictions for another dataset?)`)
    if (missing.length > 0) this.warn1(describeIds(missing, 'questions without a prediction, counted as wrong'))
    if (unknown.length > 0) this.warn1(describeIds(unknown, 'predictions for ids not in the dataset, ignored'))
  }

  private checkNaProbs(questions: GoldQuestion[], preds: Map<string, string>, naProbs: Map<string, number>, path: string): void {
    const lacking = [...new Set(questions.map((q) => q.id))].filter((id) => preds.has(id) && !naProbs.has(id))
    if (lacking.length > 0) this.warn1(`${path}: ${describeIds(lacking, 'predicted questions without a na-prob, taken as answered')}`)
  }

  private warn1(message: string): void {
    process.stderr.write(`span eval squad: warning: ${message}\n`)
  }
}

/** The scorer's view of the dataset; v1.1 needs at least one gold answer per question (as the official max()). */
function goldQuestions(dataset: SquadDataset, version: SquadVersion): GoldQuestion[] {
  const questions = dataset.examples.map((ex) => ({id: ex.id, answers: ex.answers.map((a) => a.text)}))
  const empty = questions.find((q) => q.answers.length === 0)
  if (version === '1.1' && empty) {
    throw new SpanError(`${dataset.source}: question ${empty.id} has no answers, which SQuAD v1.1 cannot score (a v2.0 dataset? use --version 2.0)`)
  }
  return questions
}
