import {Flags} from '@oclif/core'
import {resolve} from 'node:path'
import {SpanCommand} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {type TagScheme, checkTagTypes, detectScheme, nerLabels, readConllFile} from '../../core/tasks/ner/read.js'
import {UsageError} from '../../core/stream/errors.js'
import {openSource} from '../../core/stream/lines.js'
import {type NerFinetuneConfig, nerAdapter, nerSpanFt, nerModel, nerUnits, randomSegmentation} from '../../core/tasks/ner/train.js'
import {readNgramDict} from '../../core/text/ngrams.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {backendOptions, finetuneFlags, loopSettings, modelSource, openRun, runLoop, runVocab} from '../../cli/finetune-flags.js'
import {tokenSpanFtFlags} from '../../cli/span-ft-flags.js'
import {checkTypesPresent, tagColumnFlags} from '../../cli/tag-column-flags.js'
import {parseTagColumn} from '../../core/tasks/ner/tag-column.js'

const log = (line: string) => process.stderr.write(`span finetune ner: ${line}\n`)

export default class FinetuneNer extends SpanCommand {
  static override summary = 'Fine-tune an encoder for named-entity recognition (CoNLL-2003)'
  static override description = `Reads CoNLL files as distributed (token POS chunk TAG, -DOCSTART- lines, blank lines between sentences),
tags IOB1 or IOB2 (--scheme, default detected), and trains a token classifier (BERT §4.3): each word's label,
in IOB2, sits on its first sub-token, the other sub-tokens are ignored by the loss. Sentences longer than
--max-len are cut into windows that move by --stride sub-tokens; each word is labelled in the window where it
has the most context. Dev is scored by conlleval (2004-01-26) on the tags in the file's scheme; the best
checkpoint by F1 goes to --out/best.
--tag-column picks the column the tags come from: ner (the last, default), chunk (CoNLL-2003's third: a chunker),
pos, or a column number; --tag-types keeps only those types (the others read as O): --tag-column chunk
--tag-types NP trains the noun-phrase chunker span tag uses for span mask --scheme noun-phrase.
--span-ft --dict D adds Span Fine-tuning's token-level variant (Bao et al. §5.4): each sentence is segmented
with the n-gram dictionary (as the reference's MultiTokenizer.tokenize), [CLS] and [SEP] are one-token spans,
a Conv1d(H→H, kernel 3, padding 1) → ReLU → dropout runs over each span's first --max-span-tokens sub-tokens
(no pooling), and each token's output is concatenated after its hidden state before the classifier (2H inputs).
Defaults are run_ner.py's (BAORONGZHOU/span-fine-tuning: max_chunk_number 64, max_chunk_len 16); --segmentation
random is its --do_random: every window's span lengths shuffled (seeded), dev and predict ner too.`
  static override examples = ['span finetune ner --init ckpt --train eng.train --dev eng.testa --out ner-run']
  static override flags = {
    ...finetuneFlags({lr: 5e-5, maxLen: 128, minLen: 8, unit: 'window'}),
    train: Flags.string({description: 'training CoNLL file'}),
    dev: Flags.string({description: 'dev CoNLL file (eng.testa), scored at each evaluation'}),
    scheme: Flags.string({description: 'tag scheme of the files (default: detected from --train)', options: ['iob1', 'iob2']}),
    stride: Flags.integer({description: 'sub-tokens a window moves over a long sentence', default: 64, min: 1}),
    ...tagColumnFlags(),
    ...tokenSpanFtFlags(),
  }

  async run(): Promise<void> {
    const {flags, lock} = await openRun(await this.parse(FinetuneNer), FinetuneNer.flags, 'ner', log, ['train']) // --resume: the saved settings; --out checked and locked (a fresh one by default), repaired
    const seg = flags.segmentation as 'dict' | 'random'
    if (seg !== 'dict' && !flags['span-ft']) throw new UsageError('--segmentation is for --span-ft')
    const src = await modelSource(flags, log)
    const column = parseTagColumn(flags['tag-column'], flags['tag-types'])
    const train = readConllFile(flags.train, {labeled: true, column})
    const dev = flags.dev ? readConllFile(flags.dev, {labeled: true, column}) : null
    const scheme = (flags.scheme as TagScheme | undefined) ?? detectScheme(train.sentences.map((s) => s.tags))
    const labels = nerLabels(train.sentences)
    checkTypesPresent(column, labels, flags.train)
    if (dev) checkTagTypes(dev, labels, flags.train)
    const {vocab, cased} = await runVocab(flags, src.dir)
    const sf = flags['span-ft']
      ? {'span-ft': true, dict: resolve(flags.dict as string), 'max-spans': flags['max-spans'], 'max-span-tokens': flags['max-span-tokens'], segmentation: seg}
      : {}
    const tagged = column.index === 'last' && !column.types ? {} : {'tag-column': flags['tag-column'], 'tag-types': flags['tag-types'] ?? null} // saved when not the default, so runs saved before these flags resume
    const config: NerFinetuneConfig = {...loopSettings(flags, 'ner', cased), task: 'ner', scheme, stride: flags.stride, ...tagged, labels, ...sf}
    const segs = flags['span-ft'] ? {dict: await readNgramDict(await openSource(flags.dict as string)), r: flags['max-spans']} : null
    log(`config: ${JSON.stringify(config)}`)
    const tokenizer = new WordPieceTokenizer(vocab, {lowercase: !cased})
    const read = nerUnits(train, labels, tokenizer, config['max-len'], config.stride, segs)
    const readDev = dev ? nerUnits(dev, labels, tokenizer, config['max-len'], config.stride, segs) : null
    const [trainUnits, devUnits] = seg === 'random' ? randomSegmentation(config.seed, read, readDev) : [read, readDev]
    log(`${train.sentences.length} sentences (${scheme}), ${trainUnits.length} windows, ${labels.length} labels`)
    await initBackend(config.backend as BackendChoice, backendOptions(flags, config))
    const span_ft = segs ? nerSpanFt(flags['max-spans'], flags['max-span-tokens'], seg) : null
    const head = {num_labels: labels.length, labels, finetuning_task: 'ner', span_ft}
    const model = await nerModel(src.dir, flags.preset, head, vocab.tokens.length, config['max-len'], config.seed, log)
    try {
      const fixed = ['scheme', 'stride', 'tag-column', 'tag-types', 'span-ft', 'max-spans', 'max-span-tokens', 'segmentation']
      await runLoop(nerAdapter({config, model, tokenizer, vocabPath: vocab.info.path, dev}, trainUnits, devUnits), config, src, flags, log, fixed)
    } finally {
      model.dispose()
      lock.release()
    }
  }
}
