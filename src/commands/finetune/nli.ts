import {Flags} from '@oclif/core'
import {SpanCommand} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {spanFtSettings} from '../../core/model/span-ft.js'
import {SpanError} from '../../core/stream/errors.js'
import {classifierFor} from '../../core/tasks/common/classify.js'
import {GlueFeaturizer} from '../../core/tasks/glue/features.js'
import {paramsLine} from '../../core/tasks/glue/model.js'
import {shuffleTrainSpans} from '../../core/tasks/glue/span-ft.js'
import {NLI_LABELS, readNliFile} from '../../core/tasks/nli/read.js'
import {NLI_TASK, SNLI_SPAN_DEFAULTS, nliAdapter, nliFeatures} from '../../core/tasks/nli/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {backendOptions, finetuneFlags, loopSettings, modelSource, openRun, runLoop, runVocab} from '../../cli/finetune-flags.js'
import {sentenceSpanFt, spanFtFlags} from '../../cli/span-ft-flags.js'

const log = (line: string) => process.stderr.write(`span finetune nli: ${line}\n`)

export default class FinetuneNli extends SpanCommand {
  static override summary = 'Fine-tune an encoder for natural language inference (SNLI, MultiNLI), optionally with Span Fine-tuning'
  static override description = `Reads SNLI/MultiNLI JSON lines (sentence1, sentence2, gold_label; "-" rows dropped) or premise/hypothesis/label
JSON lines; [CLS] premise [SEP] hypothesis [SEP] with segment ids 0/1, cut by BERT's truncate_seq_pair; a
classifier over entailment, neutral, contradiction on the pooled [CLS] vector, trained in the fine-tuning loop
every task shares; dev accuracy keeps the best checkpoint. GLUE's TSVs (MNLI, QNLI, RTE, WNLI) go through
span finetune glue. --span-ft --dict D adds Span Fine-tuning (Bao et al. §3, evaluated on SNLI in §4) exactly as
span finetune glue runs it for a sentence pair, with the same flags; r and l default to the reference's
run_glue.sh snli line (r 128, l 16; its max_seq_len is 256, --max-len here stays 128 unless given).`
  static override examples = [
    'span finetune nli --init ckpt --train snli_1.0_train.jsonl --dev snli_1.0_dev.jsonl --out snli-run',
    'span finetune nli --init ckpt --train snli_1.0_train.jsonl --dev snli_1.0_dev.jsonl --span-ft --dict ngrams.txt --out snli-sf',
  ]
  static override flags = {
    ...finetuneFlags({lr: 2e-5, maxLen: 128, minLen: 8, unit: 'pair'}),
    train: Flags.string({description: 'training pairs (JSON lines)'}),
    dev: Flags.string({description: 'dev pairs, scored at each evaluation'}),
    ...spanFtFlags(),
  }

  async run(): Promise<void> {
    const {flags, lock} = await openRun(await this.parse(FinetuneNli), FinetuneNli.flags, 'nli', log, ['train']) // --resume: the saved settings; --out checked and locked (a fresh one by default), repaired
    const src = await modelSource(flags, log)
    const {sf, config: sfConfig, resumeKeys, readDict} = sentenceSpanFt(flags, SNLI_SPAN_DEFAULTS, flags['max-len'])
    const train = readNliFile(flags.train, {requireLabel: true})
    const dev = flags.dev ? readNliFile(flags.dev, {requireLabel: true}) : null
    if (train.examples.length === 0) throw new SpanError(`${flags.train}: no labelled pairs`)
    const {vocab, cased} = await runVocab(flags, src.dir)
    const config = {...loopSettings(flags, 'nli', cased), labels: [...NLI_LABELS], ...(sf ? sfConfig : {})}
    log(`config: ${JSON.stringify(config)}`)
    const tokenizer = new WordPieceTokenizer(vocab, {lowercase: !cased})
    const fz = new GlueFeaturizer(NLI_TASK, tokenizer, {maxLen: config['max-len'], dict: await readDict(), spanFt: sf && spanFtSettings(sf)})
    const read = nliFeatures(train.examples, fz)
    const trainUnits = sf?.segmentation === 'random' ? shuffleTrainSpans(read, config.seed) : read
    log(`${train.examples.length} training pairs (${train.dropped} "-" rows dropped)`)
    await initBackend(config.backend as BackendChoice, backendOptions(flags, config))
    const head = {num_labels: 3, labels: [...NLI_LABELS], finetuning_task: 'nli', span_ft: sf}
    const model = await classifierFor(src.dir, flags.preset, head, vocab.tokens.length, config['max-len'], config.seed, log)
    try {
      if (sf) log(paramsLine(model))
      const devUnits = dev ? nliFeatures(dev.examples, fz) : null
      await runLoop(nliAdapter({config, model, tokenizer, vocabPath: vocab.info.path}, trainUnits, devUnits), config, src, flags, log, resumeKeys)
    } finally {
      model.dispose()
      lock.release()
    }
  }
}
