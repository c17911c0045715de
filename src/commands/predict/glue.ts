import {Flags} from '@oclif/core'
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {SpanCommand} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {checkpointVocab} from '../../core/model/checkpoint.js'
import {type HeadConfig, headFromJson, loadClassifier, readConfigJson} from '../../core/model/classifier.js'
import {spanFtSettings} from '../../core/model/span-ft.js'
import {SpanError} from '../../core/stream/errors.js'
import {openSource} from '../../core/stream/lines.js'
import {GlueFeaturizer} from '../../core/tasks/glue/features.js'
import {formatPredictions} from '../../core/tasks/glue/predictions.js'
import {predictValues} from '../../core/tasks/glue/predict.js'
import {readGlueFile} from '../../core/tasks/glue/read.js'
import {type GlueTask, glueTask} from '../../core/tasks/glue/tasks.js'
import {SPAN_FT_DICT_FILE} from '../../core/tasks/glue/train.js'
import {readNgramDict} from '../../core/text/ngrams.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {loadVocab} from '../../core/text/vocab.js'
import {savedNumber} from '../../core/train/finetune-config.js'
import {predictFlags, predictModel} from '../../cli/finetune-flags.js'

export default class PredictGlue extends SpanCommand {
  static override summary = "Predict a GLUE task file with a fine-tuned model: GLUE's submission TSV (index, prediction)"
  static override description = `Reads a GLUE TSV (test files without labels, or train/dev), encodes it as the model was fine-tuned
(--max-len defaults to its finetune_config.json; a Span Fine-tuning model segments with the dictionary saved beside
it), and writes "index<TAB>prediction" rows: the task's label strings, STS-B scores with three decimals. The index is
the file's index column (the row number for CoLA train/dev). Dropout is off. A file output is written to a
temporary name and renamed when complete.`
  static override examples = [
    'span predict glue --model sst2-ckpt --data SST-2/test.tsv -o SST-2.tsv',
    'span predict glue --model sst2-ckpt --data SST-2/dev.tsv | span eval glue --task sst2 --gold SST-2/dev.tsv --pred -',
  ]
  static override flags = {
    ...predictFlags('glue', 'example'),
    task: Flags.string({description: 'GLUE task (default: the one the model was fine-tuned on)'}),
    output: Flags.string({char: 'o', description: 'predictions file, - for stdout', default: '-'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(PredictGlue)
    const {dir, saved} = await predictModel(flags.model, 'glue')
    const {json} = await readConfigJson(dir)
    const head = headFromJson(json, join(dir, 'config.json'))
    const task = glueTask(flags.task ?? head.finetuning_task)
    checkHead(task, head, dir)
    const maxLen = flags['max-len'] ?? savedNumber(saved, 'max-len', 128)
    const sf = head.span_ft ? spanFtSettings(head.span_ft) : null
    const dict = sf && sf.segmentation !== 'none' ? await readNgramDict(await openSource(join(dir, SPAN_FT_DICT_FILE))) : null
    const vocab = loadVocab(await checkpointVocab(dir, flags.vocab))
    const fz = new GlueFeaturizer(task, new WordPieceTokenizer(vocab, {lowercase: !vocab.cased}), {maxLen, dict, spanFt: sf})
    const src = await openSource(flags.data)
    const {examples} = await readGlueFile(src, task)
    const features = examples.map((ex) => fz.feature(ex))
    await initBackend(flags.backend as BackendChoice, flags)
    const {model} = await loadClassifier(dir, head, 0, true)
    try {
      if (maxLen > model.config.max_position_embeddings) throw new SpanError(`--max-len ${maxLen} exceeds ${dir}'s ${model.config.max_position_embeddings} positions`)
      const values = await predictValues(model, features, flags['batch-size'], vocab.special.pad)
      const text = formatPredictions(task, features.map((f, i) => ({index: f.index, value: values[i]})))
      await this.withOutput(flags.output, (w) => w.raw(text))
    } finally {
      model.dispose()
    }
  }
}

/** The model's head must be the task's: as many outputs as labels (1 for STS-B). */
function checkHead(task: GlueTask, head: HeadConfig, dir: string): void {
  const want = task.labels ? task.labels.length : 1
  const trained = head.finetuning_task ? glueTask(head.finetuning_task).name : task.name
  if (trained !== task.name) throw new SpanError(`${dir} was fine-tuned on ${trained}, not ${task.name}: its labels are ${trained}'s (drop --task, or give a ${task.name} model)`)
  if (head.num_labels !== want) throw new SpanError(`${dir} has ${head.num_labels} outputs, ${task.name} needs ${want} (fine-tuned on another task?)`)
  if (head.span_ft && head.span_ft.segmentation !== 'none' && !existsSync(join(dir, SPAN_FT_DICT_FILE))) throw new SpanError(`${dir}: a Span Fine-tuning model without its dictionary ${SPAN_FT_DICT_FILE}`)
}
