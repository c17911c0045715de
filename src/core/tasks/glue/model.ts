/**
 * The classifier `span finetune glue` fine-tunes: a checkpoint's (encoder, and the head where it
 * fits) or a fresh --preset one, checked against the vocabulary and --max-len.
 */
import {BertForSequenceClassification, type HeadConfig, loadClassifier} from '../../model/classifier.js'
import {type BertConfig, type PresetName, presetConfig} from '../../model/config.js'
import {type SpanFtConfig, spanFtExtraParams} from '../../model/span-ft.js'
import {SpanError} from '../../stream/errors.js'
import type {Vocab} from '../../text/vocab.js'
import type {GlueTask} from './tasks.js'

export interface GlueModelOptions {
  dir: string | null
  preset: string | undefined
  task: GlueTask
  vocab: Vocab
  maxLen: number
  seed: number
  spanFt: SpanFtConfig | null
  log: (line: string) => void
}

export async function glueModel(o: GlueModelOptions): Promise<BertForSequenceClassification> {
  const {task, vocab} = o
  const head: HeadConfig = {
    num_labels: task.labels ? task.labels.length : 1,
    labels: task.labels ? [...task.labels] : [],
    finetuning_task: task.name,
    span_ft: o.spanFt,
  }
  let model: BertForSequenceClassification
  if (o.dir) {
    const loaded = await loadClassifier(o.dir, head, o.seed)
    model = loaded.model
    if (loaded.initialised.length) o.log(`initialised ${loaded.initialised.join(', ')}`)
    const ig = loaded.ignored
    if (ig.length) o.log(`ignored ${ig.length} checkpoint tensors (${ig.slice(0, 3).join(', ')}${ig.length > 3 ? ', …' : ''})`)
  } else {
    const config: BertConfig = presetConfig(o.preset as PresetName, vocab.tokens.length, {
      pad_token_id: vocab.special.pad,
      max_position_embeddings: Math.max(512, o.maxLen),
    })
    model = BertForSequenceClassification.init(config, head, o.seed)
  }
  const m = model.config
  const why =
    o.maxLen > m.max_position_embeddings
      ? `--max-len ${o.maxLen} exceeds ${o.dir ?? 'the model'}'s ${m.max_position_embeddings} positions (max_position_embeddings)`
      : vocab.tokens.length > m.vocab_size
        ? `${vocab.info.path} has ${vocab.tokens.length} entries, ${o.dir ?? 'the model'} only ${m.vocab_size} (vocab_size)`
        : null
  if (why) {
    model.dispose()
    throw new SpanError(why)
  }
  return model
}

/** The parameter count, and what Span Fine-tuning adds. */
export function paramsLine(model: BertForSequenceClassification): string {
  const total = model.params.size()
  if (!model.head.span_ft) return `${total} parameters`
  const x = spanFtExtraParams(model.config.hidden_size, model.head.num_labels)
  const classifier = model.head.span_ft.cls === 'none' ? 0 : x.classifier
  const extra = x.convs + classifier
  return `${total} parameters; Span Fine-tuning adds ${extra} (convolutions ${x.convs}, classifier ${classifier}), ${((100 * extra) / total).toFixed(2)}% of the model`
}
