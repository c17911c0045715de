import {Flags} from '@oclif/core'
import {SpanCommand} from '../../base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {type TagScheme, checkTagTypes, detectScheme, nerLabels, readConllFile} from '../../core/tasks/ner/read.js'
import {type NerFinetuneConfig, nerAdapter, nerModel, nerUnits} from '../../core/tasks/ner/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {finetuneFlags, loopSettings, modelSource, runLoop, runVocab} from '../../finetune-flags.js'

const log = (line: string) => process.stderr.write(`span finetune ner: ${line}\n`)

export default class FinetuneNer extends SpanCommand {
  static override summary = 'Fine-tune an encoder for named-entity recognition (CoNLL-2003)'
  static override description = `Reads CoNLL files as distributed (token POS chunk TAG, -DOCSTART- lines, blank lines between sentences),
tags IOB1 or IOB2 (--scheme, default detected), and trains a token classifier (BERT §4.3): each word's label,
in IOB2, sits on its first sub-token, the other sub-tokens are ignored by the loss. Sentences longer than
--max-len are cut into windows that move by --stride sub-tokens; each word is labelled in the window where it
has the most context. Dev is scored by conlleval (2004-01-26) on the tags in the file's scheme; the best
checkpoint by F1 goes to --out/best.`
  static override examples = ['span finetune ner --init ckpt --train eng.train --dev eng.testa --out ner-run']
  static override flags = {
    ...finetuneFlags({lr: 5e-5, maxLen: 128, minLen: 8, unit: 'window'}),
    train: Flags.string({description: 'training CoNLL file', required: true}),
    dev: Flags.string({description: 'dev CoNLL file (eng.testa), scored at each evaluation'}),
    scheme: Flags.string({description: 'tag scheme of the files (default: detected from --train)', options: ['iob1', 'iob2']}),
    stride: Flags.integer({description: 'sub-tokens a window moves over a long sentence', default: 64, min: 1}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(FinetuneNer)
    const src = await modelSource(flags, log)
    const train = readConllFile(flags.train, {labeled: true})
    const dev = flags.dev ? readConllFile(flags.dev, {labeled: true}) : null
    const scheme = (flags.scheme as TagScheme | undefined) ?? detectScheme(train.sentences.map((s) => s.tags))
    const labels = nerLabels(train.sentences)
    if (dev) checkTagTypes(dev, labels, flags.train)
    const {vocab, cased} = await runVocab(flags, src.dir)
    const config: NerFinetuneConfig = {...loopSettings(flags, 'ner', cased), task: 'ner', scheme, stride: flags.stride, labels}
    log(`config: ${JSON.stringify(config)}`)
    const tokenizer = new WordPieceTokenizer(vocab, {lowercase: !cased})
    const trainUnits = nerUnits(train, labels, tokenizer, config['max-len'], config.stride)
    const devUnits = dev ? nerUnits(dev, labels, tokenizer, config['max-len'], config.stride) : null
    log(`${train.sentences.length} sentences (${scheme}), ${trainUnits.length} windows, ${labels.length} labels`)
    await initBackend(config.backend as BackendChoice, config.threads ?? undefined)
    const head = {num_labels: labels.length, labels, finetuning_task: 'ner', span_ft: null}
    const model = await nerModel(src.dir, flags.preset, head, vocab.tokens.length, config['max-len'], config.seed, log)
    try {
      await runLoop(nerAdapter({config, model, tokenizer, vocabPath: vocab.info.path, dev}, trainUnits, devUnits), config, src, flags, log, [
        'scheme',
        'stride',
      ])
    } finally {
      model.dispose()
    }
  }
}
