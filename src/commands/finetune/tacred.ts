import {Flags} from '@oclif/core'
import {SpanCommand} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {classifierFor} from '../../core/tasks/common/classify.js'
import {FEATURE_MODES, type FeatureMode, MarkerVocab} from '../../core/tasks/tacred/features.js'
import {readRelationFile, relationLabels} from '../../core/tasks/tacred/read.js'
import {type TacredFinetuneConfig, relationUnits, tacredAdapter} from '../../core/tasks/tacred/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {backendOptions, finetuneFlags, loopSettings, modelSource, openRun, runLoop, runVocab} from '../../cli/finetune-flags.js'

const log = (line: string) => process.stderr.write(`span finetune tacred: ${line}\n`)

export default class FinetuneTacred extends SpanCommand {
  static override summary = 'Fine-tune an encoder for relation extraction (TACRED; SemEval-2010 Task 8 with --negative-label Other)'
  static override description = `Input as SpanBERT's run_tacred builds it: --feature-mode ner (default) replaces the subject's and the
object's words by one marker each, typed by subj_type/obj_type ([SUBJ-PERSON], [OBJ-CITY]) or untyped ([SUBJ],
[OBJ]) when the data has no types (SemEval); text keeps the words between [SUBJ-START]..[SUBJ-END] and
[OBJ-START]..[OBJ-END]; ner_text is ner followed by [SEP] subject words [SEP] object words. Markers are new
tokens with new embedding rows after the vocabulary. A classifier on the pooled [CLS] vector is trained in the
fine-tuning loop every task shares; dev is scored by TACRED's official micro P/R/F1 without the negative label,
and the best checkpoint by F1 goes to --out/best.`
  static override examples = [
    'span finetune tacred --init ckpt --train train.json --dev dev.json --out tacred-run',
    'span finetune tacred --preset tiny --train semeval-train.jsonl --dev semeval-test.jsonl --negative-label Other --out re-run',
  ]
  static override flags = {
    ...finetuneFlags({lr: 2e-5, maxLen: 128, minLen: 8, unit: 'example'}),
    train: Flags.string({description: 'training data: TACRED JSON list or JSON lines'}),
    dev: Flags.string({description: 'dev data, scored at each evaluation'}),
    'feature-mode': Flags.string({description: 'how subject and object are marked', options: [...FEATURE_MODES], default: 'ner'}),
    'negative-label': Flags.string({description: 'the "no relation" label, left out of P/R/F1', default: 'no_relation'}),
  }

  async run(): Promise<void> {
    const {flags, lock} = await openRun(await this.parse(FinetuneTacred), FinetuneTacred.flags, 'tacred', log, ['train']) // --resume: the saved settings; --out checked and locked (a fresh one by default), repaired
    const src = await modelSource(flags, log)
    const train = readRelationFile(flags.train, {requireLabel: true})
    const labels = relationLabels(train, flags['negative-label'])
    const dev = flags.dev ? readRelationFile(flags.dev, {requireLabel: true, labels}) : null
    const {vocab, cased} = await runVocab(flags, src.dir)
    const markers = new MarkerVocab(vocab.tokens.length)
    const config: TacredFinetuneConfig = {
      ...loopSettings(flags, 'tacred', cased),
      task: 'tacred',
      'feature-mode': flags['feature-mode'] as FeatureMode,
      'negative-label': flags['negative-label'],
      labels,
      markers: [],
    }
    const run0 = {config, tokenizer: new WordPieceTokenizer(vocab, {lowercase: !cased}), markers}
    const trainUnits = relationUnits(train, run0)
    const devUnits = dev ? relationUnits(dev, run0) : null
    config.markers = markers.list
    log(`config: ${JSON.stringify(config)}`)
    log(`${train.length} training examples, ${labels.length} labels, ${markers.list.length} marker tokens`)
    await initBackend(config.backend as BackendChoice, backendOptions(flags, config))
    const head = {num_labels: labels.length, labels, finetuning_task: 'tacred', span_ft: null}
    const model = await classifierFor(src.dir, flags.preset, head, vocab.tokens.length + markers.list.length, config['max-len'], config.seed, log)
    try {
      await runLoop(tacredAdapter({...run0, model, vocabPath: vocab.info.path, train, dev}, trainUnits, devUnits), config, src, flags, log, [
        'feature-mode',
        'negative-label',
      ])
    } finally {
      model.dispose()
      lock.release()
    }
  }
}
