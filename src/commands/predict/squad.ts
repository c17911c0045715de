import {Flags} from '@oclif/core'
import {writeFile} from 'node:fs/promises'
import {SpanCommand} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {checkpointVocab} from '../../core/model/checkpoint.js'
import {loadQaModel} from '../../core/model/qa.js'
import {SpanError, UsageError} from '../../core/stream/errors.js'
import {collectOutputs, DEFAULT_WINDOWS, readSquadFile, type SquadVersion, type WindowOptions} from '../../core/tasks/squad/index.js'
import {predictSquad} from '../../core/tasks/squad/predict.js'
import {writeFilesInto} from '../../core/util/write-into.js'
import {SQUAD_EVAL_METRICS} from '../../core/tasks/squad/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {loadVocab} from '../../core/text/vocab.js'
import {savedNumber} from '../../core/train/finetune-config.js'
import {predictFlags, predictModel} from '../../cli/finetune-flags.js'

export default class PredictSquad extends SpanCommand {
  static override summary = 'Answer SQuAD questions with a fine-tuned model: predictions.json, nbest_predictions.json (and null_odds.json)'
  static override description = `Decodes as run_squad's write_predictions: the top --n-best starts × ends of each window, end ≥ start,
at most --max-answer-len tokens, the start token in its window of maximal context, the text mapped back to the
passage's own characters; for SQuAD v2.0 the best span's score is compared with the null score and null_odds.json
is written for threshold tuning (span eval squad --na-prob). The null threshold is --null-threshold, else the one
span finetune squad tuned on dev and saved with the best checkpoint (dev_scores.best_f1_thresh, or the
--eval-metric's), as SpanBERT's run_squad applies it, else 0. Windows (--max-len, --doc-stride, --max-query-len)
default to the model's fine-tuning settings. Dropout is off. The files are written to temporary names in the folder
and renamed only when all are done; nothing else in the folder is touched.`
  static override examples = [
    'span predict squad --model squad-run --data dev-v1.1.json -o out && span eval squad --data dev-v1.1.json --pred out/predictions.json',
    'span predict squad --model squad2-run/best --data dev-v2.0.json -o out --null-threshold -1.5',
  ]
  static override flags = {
    ...predictFlags('squad', 'window'),
    output: Flags.string({char: 'o', description: 'folder for the output files', default: '.'}),
    version: Flags.string({description: 'SQuAD version (default: detected from the file)', options: ['1.1', '2.0']}),
    'doc-stride': Flags.integer({description: 'window stride (default: as fine-tuned, else 128)', min: 1}),
    'max-query-len': Flags.integer({description: 'question tokens kept (default: as fine-tuned, else 64)', min: 1}),
    'n-best': Flags.integer({description: 'start and end candidates, and entries of nbest_predictions.json (at most 1000)', default: 20, min: 1, max: 1000}),
    'max-answer-len': Flags.integer({description: 'longest answer in tokens', default: 30, min: 1}),
    'null-threshold': Flags.string({description: 'v2.0: predict no answer when null score − best span score exceeds this (default: the tuned one, else 0)'}),
    'eval-metric': Flags.string({description: 'v2.0: whose tuned threshold to apply (default: the one fine-tuning kept the best by)', options: SQUAD_EVAL_METRICS.filter((m) => m.startsWith('best_'))}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(PredictSquad)
    if (flags['null-threshold'] !== undefined) threshold(flags['null-threshold'], undefined, {}) // a usage error before the model is read
    const {dir, saved} = await predictModel(flags.model, 'squad')
    const data = readSquadFile(flags.data)
    const v2 = ((flags.version as SquadVersion | undefined) ?? data.version) === '2.0'
    const nullThreshold = threshold(flags['null-threshold'], flags['eval-metric'], saved)
    const windows = windowSettings(saved, flags)
    const vocab = loadVocab(await checkpointVocab(dir, flags.vocab))
    await initBackend(flags.backend as BackendChoice, flags)
    const {model, initialised} = await loadQaModel(dir, 0, vocab.info.path)
    try {
      if (windows.maxLen > model.config.max_position_embeddings) throw new SpanError(`--max-len ${windows.maxLen} exceeds ${dir}'s ${model.config.max_position_embeddings} positions`)
      if (initialised.length > 0) this.warnLine(`${dir} has no ${initialised.join('/')} (not fine-tuned for QA): its start/end layer is random`)
      const tokenizer = new WordPieceTokenizer(vocab, {lowercase: !vocab.cased})
      const decode = {nBest: flags['n-best'], maxAnswerLen: flags['max-answer-len'], v2, nullThreshold}
      const out = collectOutputs(await predictSquad(model, tokenizer, data.examples, {windows, decode, batchSize: flags['batch-size']}))
      const files: [string, unknown][] = [['predictions.json', out.predictions], ['nbest_predictions.json', out.nbest]]
      if (out.nullOdds) files.push(['null_odds.json', out.nullOdds])
      await writeFilesInto(flags.output, files.map(([name, value]) => ({name, write: (p: string) => writeJson(p, value)})), {manifest: false})
    } finally {
      model.dispose()
    }
  }

  private warnLine(message: string): void {
    process.stderr.write(`span predict squad: warning: ${message}\n`)
  }
}

/** --null-threshold, else the threshold fine-tuning tuned for the metric (dev_scores.<metric>_thresh), else 0. */
function threshold(flag: string | undefined, metric: string | undefined, saved: Record<string, unknown>): number {
  if (flag !== undefined) {
    const t = Number(flag)
    if (flag.trim() === '' || !Number.isFinite(t)) throw new UsageError(`--null-threshold must be a number, got ${JSON.stringify(flag)}`)
    return t
  }
  const scores = (saved.dev_scores ?? {}) as Record<string, unknown>
  const m = metric ?? (typeof saved['eval-metric'] === 'string' ? saved['eval-metric'] : 'best_f1')
  return savedNumber(scores, `${m}_thresh`, 0)
}

/** Flags over the model's finetune_config.json over run_squad's defaults. */
function windowSettings(saved: Record<string, unknown>, flags: {'max-len'?: number; 'doc-stride'?: number; 'max-query-len'?: number}): WindowOptions {
  const w = {
    maxLen: flags['max-len'] ?? savedNumber(saved, 'max-len', DEFAULT_WINDOWS.maxLen),
    docStride: flags['doc-stride'] ?? savedNumber(saved, 'doc-stride', DEFAULT_WINDOWS.docStride),
    maxQueryLen: flags['max-query-len'] ?? savedNumber(saved, 'max-query-len', DEFAULT_WINDOWS.maxQueryLen),
  }
  if (w.maxLen < w.maxQueryLen + 4) throw new UsageError(`--max-len ${w.maxLen} leaves no room for the passage after --max-query-len ${w.maxQueryLen}`)
  return w
}

/** run_squad writes its JSON with indent 4. */
async function writeJson(path: string, value: unknown): Promise<void> {
  await writeFile(path, JSON.stringify(value, null, 4) + '\n')
}
