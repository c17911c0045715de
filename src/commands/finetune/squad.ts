import {Flags} from '@oclif/core'
import {SpanCommand, numberFlag} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {type BertConfig, type PresetName, presetConfig} from '../../core/model/config.js'
import {BertForQuestionAnswering, loadQaModel} from '../../core/model/qa.js'
import {SpanError} from '../../core/stream/errors.js'
import {readSquadFile, type SquadVersion} from '../../core/tasks/squad/index.js'
import {SQUAD_EVAL_METRICS, type SquadFinetuneConfig, squadAdapter} from '../../core/tasks/squad/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import type {Vocab} from '../../core/text/vocab.js'
import {backendOptions, finetuneFlags, loopSettings, modelSource, openRun, runLoop, runVocab} from '../../cli/finetune-flags.js'

const log = (line: string) => process.stderr.write(`span finetune squad: ${line}\n`)

export default class FinetuneSquad extends SpanCommand {
  static override summary = 'Fine-tune a BERT/SpanBERT encoder for extractive QA on SQuAD v1.1 or v2.0'
  static override description = `Builds run_squad's windows ([CLS] question [SEP] passage window [SEP], --max-len, --doc-stride,
--max-query-len) with the answer's token span as the label ([CLS] where the window lacks it or the question
is unanswerable), and trains a Linear(H→2) start/end layer on the last hidden states together with the encoder
(loss: mean of the start and end cross-entropies; BERT §4.2, SpanBERT appendix B) in the fine-tuning loop every
task shares: AdamW, linear warm-up over --warmup-proportion then linear decay, clipping at --clip, --accumulate.
The dev set is scored at each epoch's end (and every --eval-every steps) by the official scorer; v2.0 as
SpanBERT's run_squad: best non-null spans with their null odds, the best checkpoint by best_f1 (--eval-metric),
its best_f1_thresh saved for span predict squad. stdout: {step, epoch, loss, lr, grad_norm, tokens_per_s} every
--log-every steps; {"split":"dev", epoch, step, exact, f1, …, best}; {step, checkpoint}. --out DIR receives
best/ (config.json, model.safetensors, vocab.txt, tokenizer_config.json, finetune_config.json) and the newest
--keep checkpoint-STEP/ (the same plus optimizer.safetensors, trainer_state.json) for --resume.`
  static override examples = [
    'span finetune squad --init ckpt --train train-v1.1.json --dev dev-v1.1.json --out squad-run',
    'span finetune squad --init bert-base-cased --train train-v2.0.json --dev dev-v2.0.json --batch-size 12 --accumulate 4 --eval-every 1000 --out out',
  ]
  static override flags = {
    ...finetuneFlags({lr: 5e-5, maxLen: 384, minLen: 8, unit: 'window'}),
    train: Flags.string({description: 'SQuAD training set (JSON)'}),
    dev: Flags.string({description: 'SQuAD dev set: scored at each evaluation; the best is kept in best/'}),
    version: Flags.string({description: 'SQuAD version (default: detected from the file)', options: ['1.1', '2.0']}),
    'doc-stride': Flags.integer({description: 'how far the window moves over a long passage', default: 128, min: 1}),
    'max-query-len': Flags.integer({description: 'question tokens kept', default: 64, min: 1}),
    'n-best': Flags.integer({description: 'dev decoding: start and end candidates', default: 20, min: 1}),
    'max-answer-len': Flags.integer({description: 'dev decoding: longest answer in tokens', default: 30, min: 1}),
    'null-threshold': numberFlag('dev scoring (v2.0): no answer when null score − best span score exceeds this (exact, f1)', {default: 0}),
    'eval-metric': Flags.string({description: 'dev metric that keeps the best checkpoint (default: best_f1 for v2.0, f1 for v1.1)', options: [...SQUAD_EVAL_METRICS]}),
  }

  async run(): Promise<void> {
    const {flags, lock} = await openRun(await this.parse(FinetuneSquad), FinetuneSquad.flags, 'squad', log, ['train']) // --resume: the saved settings; --out checked and locked (a fresh one by default), repaired
    const src = await modelSource(flags, log)
    const train = readSquadFile(flags.train, {checkOffsets: true})
    const dev = flags.dev ? readSquadFile(flags.dev) : null
    const {vocab, cased} = await runVocab(flags, src.dir)
    const config = runConfig(flags, (flags.version as SquadVersion | undefined) ?? train.version, cased)
    await initBackend(config.backend as BackendChoice, backendOptions(flags, config))
    const model = await loadModel(src.dir, flags.preset, config, vocab)
    try {
      log(`config: ${JSON.stringify(config)}`)
      const run = {config, model, tokenizer: new WordPieceTokenizer(vocab, {lowercase: !cased}), vocabPath: vocab.info.path, train, dev}
      await runLoop(squadAdapter(run, log), config, src, flags, log, ['version', 'doc-stride', 'max-query-len'])
    } finally {
      model.dispose()
      lock.release()
    }
  }
}

function runConfig(flags: Record<string, unknown>, version: SquadVersion, cased: boolean): SquadFinetuneConfig {
  const f = flags as Record<string, never>
  return {
    ...loopSettings(flags, 'squad', cased), task: 'squad', version, 'doc-stride': f['doc-stride'], 'max-query-len': f['max-query-len'],
    'n-best': f['n-best'], 'max-answer-len': f['max-answer-len'], 'null-threshold': f['null-threshold'], 'eval-metric': f['eval-metric'] ?? null,
  }
}

/** The model to fine-tune (a checkpoint's, else a fresh --preset one), checked against the vocabulary and --max-len. */
async function loadModel(dir: string | null, preset: string | undefined, c: SquadFinetuneConfig, vocab: Vocab): Promise<BertForQuestionAnswering> {
  let model: BertForQuestionAnswering
  if (dir) {
    const loaded = await loadQaModel(dir, c.seed, vocab.info.path)
    model = loaded.model
    if (loaded.initialised.length) log(`initialised ${loaded.initialised.join(', ')}`)
    if (loaded.ignored.length) log(`ignored ${loaded.ignored.length} checkpoint tensors (${loaded.ignored.slice(0, 3).join(', ')}${loaded.ignored.length > 3 ? ', …' : ''})`)
  } else {
    const config: BertConfig = presetConfig(preset as PresetName, vocab.tokens.length, {pad_token_id: vocab.special.pad, max_position_embeddings: Math.max(512, c['max-len'])})
    model = BertForQuestionAnswering.init(config, c.seed)
  }
  const m = model.config
  const why = c['max-len'] > m.max_position_embeddings ? `--max-len ${c['max-len']} exceeds ${dir ?? 'the model'}'s ${m.max_position_embeddings} positions (max_position_embeddings)`
    : vocab.tokens.length > m.vocab_size ? `${vocab.info.path} has ${vocab.tokens.length} entries, ${dir ?? 'the model'} only ${m.vocab_size} (vocab_size)`
      : c['max-len'] < c['max-query-len'] + 4 ? `--max-len ${c['max-len']} leaves no room for the passage after --max-query-len ${c['max-query-len']}` : null
  if (why) {
    model.dispose()
    throw new SpanError(why)
  }
  return model
}
