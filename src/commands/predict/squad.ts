import {Flags} from '@oclif/core'
import {readFile, writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {SpanCommand} from '../../base.js'
import {backendFlags} from '../../backend-flags.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {checkpointVocab, isCheckpoint, writeFilesAtomically} from '../../core/model/checkpoint.js'
import {loadQaModel} from '../../core/model/qa.js'
import {SpanError} from '../../core/stream/errors.js'
import {collectOutputs, DEFAULT_WINDOWS, readSquadFile, type SquadVersion, type WindowOptions} from '../../core/tasks/squad/index.js'
import {predictSquad} from '../../core/tasks/squad/predict.js'
import {FINETUNE_CONFIG_FILE} from '../../core/tasks/squad/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {loadVocab} from '../../core/text/vocab.js'

export default class PredictSquad extends SpanCommand {
  static override summary = 'Answer SQuAD questions with a fine-tuned model: predictions.json, nbest_predictions.json (and null_odds.json)'
  static override description = `Decodes as run_squad's write_predictions: the top --n-best starts × ends of each window, end ≥ start,
at most --max-answer-len tokens, the start token in its window of maximal context, the text mapped back to the
passage's own characters; for SQuAD v2.0 the best span's score is compared with the null score
(--null-threshold) and null_odds.json is written for threshold tuning (span eval squad --na-prob).
Windows (--max-len, --doc-stride, --max-query-len) default to the model's fine-tuning settings. Features are
built per batch, dropout is off. The files are written to temporary names and renamed only when all are done.`
  static override examples = [
    'span predict squad --model squad-ckpt --data dev-v1.1.json -o out && span eval squad --data dev-v1.1.json --pred out/predictions.json',
    'span predict squad --model squad2-ckpt --data dev-v2.0.json -o out --null-threshold -1.5',
  ]
  static override flags = {
    model: Flags.string({description: 'fine-tuned checkpoint directory (span finetune squad)', required: true}),
    vocab: Flags.string({description: 'vocabulary file, for a checkpoint without vocab.txt'}),
    data: Flags.string({description: 'SQuAD dataset to answer (JSON)', required: true}),
    output: Flags.string({char: 'o', description: 'folder for the output files', default: '.'}),
    version: Flags.string({description: 'SQuAD version (default: detected from the file)', options: ['1.1', '2.0']}),
    'max-len': Flags.integer({description: 'tokens per window (default: the model\'s fine-tuning setting, else 384)', min: 8}),
    'doc-stride': Flags.integer({description: 'window stride (default: as fine-tuned, else 128)', min: 1}),
    'max-query-len': Flags.integer({description: 'question tokens kept (default: as fine-tuned, else 64)', min: 1}),
    'n-best': Flags.integer({description: 'start and end candidates, and entries of nbest_predictions.json', default: 20, min: 1}),
    'max-answer-len': Flags.integer({description: 'longest answer in tokens', default: 30, min: 1}),
    'null-threshold': Flags.string({description: 'v2.0: predict no answer when null score − best span score exceeds this', default: '0'}),
    'batch-size': Flags.integer({description: 'windows per forward pass', default: 32, min: 1}),
    ...backendFlags(),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(PredictSquad)
    const nullThreshold = Number(flags['null-threshold'])
    if (flags['null-threshold'].trim() === '' || !Number.isFinite(nullThreshold)) throw new SpanError(`--null-threshold must be a number, got ${JSON.stringify(flags['null-threshold'])}`)
    if (!(await isCheckpoint(flags.model))) throw new SpanError(`${flags.model}: not a checkpoint directory (no config.json)`)
    const data = readSquadFile(flags.data)
    const v2 = ((flags.version as SquadVersion | undefined) ?? data.version) === '2.0'
    const windows = await windowSettings(flags.model, flags)
    const vocab = loadVocab(await checkpointVocab(flags.model, flags.vocab))
    await initBackend(flags.backend as BackendChoice, flags.threads)
    const {model, initialised} = await loadQaModel(flags.model, 0, vocab.info.path)
    if (windows.maxLen > model.config.max_position_embeddings) {
      model.dispose()
      throw new SpanError(`--max-len ${windows.maxLen} exceeds ${flags.model}'s ${model.config.max_position_embeddings} positions`)
    }
    if (initialised.length > 0) this.warn1(`${flags.model} has no ${initialised.join('/')} (not fine-tuned for QA): its start/end layer is random`)
    try {
      const tokenizer = new WordPieceTokenizer(vocab, {lowercase: !vocab.cased})
      const decode = {nBest: flags['n-best'], maxAnswerLen: flags['max-answer-len'], v2, nullThreshold}
      const preds = await predictSquad(model, tokenizer, data.examples, {windows, decode, batchSize: flags['batch-size']})
      const out = collectOutputs(preds)
      const files: [string, unknown][] = [['predictions.json', out.predictions], ['nbest_predictions.json', out.nbest]]
      if (out.nullOdds) files.push(['null_odds.json', out.nullOdds])
      await writeFilesAtomically(flags.output, files.map(([name, value]) => ({name, write: (p: string) => writeJson(p, value)})))
    } finally {
      model.dispose()
    }
  }

  private warn1(message: string): void {
    process.stderr.write(`span predict squad: warning: ${message}\n`)
  }
}

/** Flags over the model's finetune_config.json over run_squad's defaults. */
async function windowSettings(dir: string, flags: {'max-len'?: number; 'doc-stride'?: number; 'max-query-len'?: number}): Promise<WindowOptions> {
  let saved: Record<string, unknown> = {}
  try {
    saved = JSON.parse(await readFile(join(dir, FINETUNE_CONFIG_FILE), 'utf8')) as Record<string, unknown>
  } catch {
    // not fine-tuned here (a Hugging Face QA checkpoint): run_squad's defaults
  }
  const pick = (flag: number | undefined, key: string, dflt: number): number => flag ?? (typeof saved[key] === 'number' ? (saved[key] as number) : dflt)
  const w = {
    maxLen: pick(flags['max-len'], 'max-len', DEFAULT_WINDOWS.maxLen),
    docStride: pick(flags['doc-stride'], 'doc-stride', DEFAULT_WINDOWS.docStride),
    maxQueryLen: pick(flags['max-query-len'], 'max-query-len', DEFAULT_WINDOWS.maxQueryLen),
  }
  if (w.maxLen < w.maxQueryLen + 4) throw new SpanError(`--max-len ${w.maxLen} leaves no room for the passage after --max-query-len ${w.maxQueryLen}`)
  return w
}

/** run_squad writes its JSON with indent 4. */
async function writeJson(path: string, value: unknown): Promise<void> {
  await writeFile(path, JSON.stringify(value, null, 4) + '\n')
}
