import {Flags} from '@oclif/core'
import {SpanCommand} from '../../cli/base.js'
import {checkResumedHead, corefHeadFlags, headFromFlags, takeTypedHeadFlags} from '../../cli/coref-flags.js'
import {MAX_BATCH} from '../../cli/limits.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {type CorefFinetuneConfig, corefAdapter, corefModel, corefUnits, trainingUnits} from '../../core/tasks/coref/adapter.js'
import {readConll} from '../../core/tasks/coref/conll.js'
import {corefDevScores} from '../../core/tasks/coref/score.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {backendOptions, finetuneFlags, loopSettings, modelSource, openRun, runLoop, runVocab} from '../../cli/finetune-flags.js'

const log = (line: string) => process.stderr.write(`span finetune coref: ${line}\n`)
const {'max-len': _maxLen, ...loopFlags} = finetuneFlags({lr: 2e-5, maxLen: 384, minLen: 8, unit: 'document'})

export default class FinetuneCoref extends SpanCommand {
  static override summary = 'Fine-tune an encoder for coreference resolution (CoNLL-2012 files: LitBank, OntoGUM, OntoNotes)'
  static override description = `The model of Joshi et al. 2019, "BERT for Coreference Resolution" (mandarjoshi90/coref), which SpanBERT's
coreference numbers use: each document is cut into independent [CLS] … [SEP] segments of --max-segment-len
sub-tokens at sentence ends (word ends when a sentence is longer; OntoGUM has no sentence breaks); a step trains
on a random run of --max-training-segments segments. Candidate mentions are spans of at most --max-span-width
sub-tokens inside one sentence on word boundaries; a span's vector joins its boundary vectors, an
attention-weighted head and a width embedding; the top --top-span-ratio · N spans by mention score are kept
without crossing; coarse bilinear scores with a distance prior keep --max-top-antecedents antecedents, scored
again by an FFNN over [g_i; g_j; g_i∘g_j; φ] (distance, segment distance, and genre or speaker where the data
has them); --coref-depth 2 refines the span vectors once. The loss is the marginal log-likelihood of the gold
antecedents (a dummy scored 0 when none); decoding links each span to its best antecedent, left to right.
--head s2e is Kirstain et al. 2021's start-to-end model instead: no span vectors; token FFNNs give start and end
vectors, mention and antecedent scores are bilinear in them, every earlier top span an antecedent (--ffnn-size,
--top-span-ratio, --max-span-width, --coref-dropout, --singletons and --mention-loss apply; the pair features do not).
Documents without sentence breaks (OntoGUM) get them from punctuation (a run of . ! ? and closing quotes).
The encoder trains at --lr, the head at --task-lr, one warm-up/decay schedule. Dev documents are predicted
whole and scored as MUC, B³, CEAFe and their mean, the CoNLL F1; the best checkpoint by CoNLL F1 goes to --out/best.
--train/--dev: a .conll file, a folder of them (with --train-split/--dev-split), or a LitBank .ids list.`
  static override examples = [
    'span finetune coref --init ckpt --train litbank/tenfold_splits/0/train.ids --dev litbank/tenfold_splits/0/dev.ids --out coref-run',
    'span finetune coref --init ckpt --train ontogum/conll --train-split train --dev ontogum/conll --dev-split dev --out gum-run',
  ]
  static override flags = {
    ...loopFlags,
    'batch-size': Flags.integer({description: 'documents per micro-batch', default: 1, min: 1, max: MAX_BATCH}),
    epochs: Flags.integer({description: 'passes over the training documents', default: 20, min: 1}),
    train: Flags.string({description: 'training documents (CoNLL-2012)'}),
    dev: Flags.string({description: 'dev documents, scored at each evaluation'}),
    ...corefHeadFlags(),
  }

  async run(): Promise<void> {
    const parsed = await this.parse(FinetuneCoref)
    const typedHead = takeTypedHeadFlags(parsed) // --resume: head flags typed again, checked against the saved head below
    const {flags, lock} = await openRun(parsed, FinetuneCoref.flags, 'coref', log, ['train']) // --resume: the saved settings; --out checked and locked (a fresh one by default), repaired
    try {
      checkResumedHead(typedHead, flags.head, String(flags.resume))
    } catch (err) {
      lock.release()
      throw err
    }
    const src = await modelSource(flags, log)
    const train = readConll(flags.train as string, {split: flags['train-split']})
    const dev = flags.dev ? readConll(flags.dev, {split: flags['dev-split']}) : null
    const head = headFromFlags(flags, train)
    const {vocab, cased} = await runVocab(flags, src.dir)
    const config: CorefFinetuneConfig = {
      ...loopSettings({...flags, 'max-len': head.max_segment_len}, 'coref', cased),
      task: 'coref',
      'task-lr': flags['task-lr'],
      head,
    }
    log(`config: ${JSON.stringify(config)}`)
    const tok = new WordPieceTokenizer(vocab, {lowercase: !cased})
    const units = trainingUnits(corefUnits(train, tok, head), log)
    const devRun = dev ? {gold: dev, units: corefUnits(dev, tok, head)} : null
    log(`${train.length} documents, ${units.reduce((t, u) => t + u.segments.length, 0)} segments; singletons ${head.singletons ? 'on' : 'off'}`)
    await initBackend(config.backend as BackendChoice, backendOptions(flags, config))
    const model = await corefModel(src.dir, flags.preset, head, vocab.tokens.length, config.seed, log)
    try {
      const run = {config, model, vocabPath: vocab.info.path, dev: devRun, scorer: corefDevScores}
      await runLoop(corefAdapter(run, units), config, src, flags, log, ['task-lr', 'head'])
    } finally {
      model.dispose()
      lock.release()
    }
  }
}
