import {Flags} from '@oclif/core'
import {existsSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import {join} from 'node:path'
import {SpanCommand} from '../../base.js'
import {backendFlags} from '../../backend-flags.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {checkpointVocab, isCheckpoint} from '../../core/model/checkpoint.js'
import {type HeadConfig, headFromJson, loadClassifier, readConfigJson} from '../../core/model/classifier.js'
import {SpanError} from '../../core/stream/errors.js'
import {openSource} from '../../core/stream/lines.js'
import {GlueFeaturizer} from '../../core/tasks/glue/features.js'
import {formatPredictions} from '../../core/tasks/glue/predictions.js'
import {predictValues} from '../../core/tasks/glue/predict.js'
import {readGlueFile} from '../../core/tasks/glue/read.js'
import {type GlueTask, glueTask} from '../../core/tasks/glue/tasks.js'
import {FINETUNE_CONFIG_FILE, SPAN_FT_DICT_FILE} from '../../core/tasks/glue/train.js'
import {readNgramDict} from '../../core/text/ngrams.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {loadVocab} from '../../core/text/vocab.js'

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
    model: Flags.string({description: 'fine-tuned checkpoint directory (span finetune glue)', required: true}),
    vocab: Flags.string({description: 'vocabulary file, for a checkpoint without vocab.txt'}),
    data: Flags.string({description: 'GLUE TSV to predict', required: true}),
    task: Flags.string({description: 'GLUE task (default: the one the model was fine-tuned on)'}),
    output: Flags.string({char: 'o', description: 'predictions file, - for stdout', default: '-'}),
    'max-len': Flags.integer({description: 'tokens per example (default: as fine-tuned, else 128)', min: 4}),
    'batch-size': Flags.integer({description: 'examples per forward pass', default: 32, min: 1}),
    ...backendFlags(),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(PredictGlue)
    if (!(await isCheckpoint(flags.model))) throw new SpanError(`${flags.model}: not a checkpoint directory (no config.json)`)
    const {json} = await readConfigJson(flags.model)
    const head = headFromJson(json, join(flags.model, 'config.json'))
    const task = glueTask(flags.task ?? head.finetuning_task)
    checkHead(task, head, flags.model)
    const saved = await savedConfig(flags.model)
    const maxLen = flags['max-len'] ?? (typeof saved['max-len'] === 'number' ? saved['max-len'] : 128)
    const dict = head.span_ft ? await readNgramDict(await openSource(join(flags.model, SPAN_FT_DICT_FILE))) : null
    const vocab = loadVocab(await checkpointVocab(flags.model, flags.vocab))
    const fz = new GlueFeaturizer(task, new WordPieceTokenizer(vocab, {lowercase: !vocab.cased}), {maxLen, dict})
    const src = await openSource(flags.data)
    const {examples} = await readGlueFile(src, task)
    const features = examples.map((ex) => fz.feature(ex))
    await initBackend(flags.backend as BackendChoice, flags.threads)
    const {model} = await loadClassifier(flags.model, head, 0)
    try {
      if (maxLen > model.config.max_position_embeddings) throw new SpanError(`--max-len ${maxLen} exceeds ${flags.model}'s ${model.config.max_position_embeddings} positions`)
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
  if (head.num_labels !== want) throw new SpanError(`${dir} has ${head.num_labels} outputs, ${task.name} needs ${want} (fine-tuned on another task?)`)
  if (head.span_ft && !existsSync(join(dir, SPAN_FT_DICT_FILE))) throw new SpanError(`${dir}: a Span Fine-tuning model without its dictionary ${SPAN_FT_DICT_FILE}`)
}

async function savedConfig(dir: string): Promise<Record<string, unknown>> {
  try {
    return JSON.parse(await readFile(join(dir, FINETUNE_CONFIG_FILE), 'utf8')) as Record<string, unknown>
  } catch {
    return {} // not fine-tuned here: defaults
  }
}
