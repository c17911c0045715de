import type * as tf from '@tensorflow/tfjs'
import type {CheckpointFile} from '../model/checkpoint.js'
import type {BertConfig} from '../model/config.js'
import type {ForwardContext} from '../model/layers.js'
import type {ParamStore} from '../model/params.js'

/** A task's dev scores: numbers the metrics NDJSON and finetune_config.json carry. */
export type DevScores = Record<string, number>

/**
 * A fine-tuning task as the one fine-tuning loop (finetune-loop.ts) sees it. The loop owns
 * epochs, the seeded order, --max-train-examples, --group-by-length, accumulation, clipping,
 * AdamW and its schedule, evaluation every --eval-every steps and at each epoch's end, keeping
 * the best checkpoint, --keep, --patience, --stop-at and --resume; the adapter owns what differs
 * between tasks. Adding a task is a folder in `tasks/` that builds one of these plus thin
 * command files (see tasks/squad/adapter.ts and tasks/glue/adapter.ts):
 *
 * - read + featurise happen before the loop (in the task's own code, with its own error
 *   messages): they produce `units`, the training units (a SQuAD window, a GLUE feature),
 *   each already token ids, in file order;
 * - `tokens(u)`: a unit's length in tokens (--group-by-length batches by it; tokens/s counts it);
 * - `collate(units)`: pads a micro-batch of units into the task's host batch;
 * - `loss(batch, ctx)`: the task's training loss of a collated batch (called under the
 *   gradient tape; ctx carries dropout's generator);
 * - `evaluate()`: predicts the dev set with dropout off and scores it with the task's official
 *   scorer, or null when there is no dev set;
 * - `metric` / `higherIsBetter`: which of the scores decides the best checkpoint, and its
 *   direction (SQuAD v1.1 f1; v2.0 best_f1, as SpanBERT's run_squad; GLUE the task's score);
 * - `files(state)`: the model's checkpoint files (config.json, model.safetensors, vocab.txt,
 *   tokenizer_config.json, task extras such as a Span Fine-tuning dictionary) with `state`
 *   (epoch, step, dev scores…) merged into the finetune_config.json it writes; the loop adds
 *   the optimiser's and its own state for resumable checkpoints;
 * - `lrScale(name)` (optional): a parameter's learning rate as a multiple of the schedule's
 *   (coref trains its head at --task-lr, the encoder at --lr: Joshi et al.'s two optimisers);
 * - `params`: the parameters trained (the model's ParamStore); `config`: the model's config
 *   (--dropout sets its dropout rates, which the layers read at every forward).
 */
export interface TaskAdapter<Unit, HostBatch> {
  readonly task: string
  readonly params: ParamStore
  readonly config: BertConfig
  readonly units: readonly Unit[]
  tokens(u: Unit): number
  collate(units: Unit[]): HostBatch
  loss(batch: HostBatch, ctx: ForwardContext): tf.Scalar
  evaluate(): Promise<DevScores | null>
  readonly metric: string
  readonly higherIsBetter: boolean
  files(state: Record<string, unknown>): Promise<CheckpointFile[]>
  lrScale?(name: string): number
}
