import {EventWriter} from './tensorboard.js'
import type {Tally} from './objective.js'

/** One metrics record on stdout (NDJSON). */
export type MetricsRecord = Record<string, number | string | null>

/** Per-objective fields of a tally: mean cross-entropy per target and argmax accuracy. */
function objectiveFields(t: Tally, objectives: readonly string[]): MetricsRecord {
  const out: MetricsRecord = {mlm_loss: t.lossOf('mlm'), sbo_loss: null, mlm_acc: t.accOf('mlm'), sbo_acc: null}
  if (objectives.includes('sbo')) {
    out.sbo_loss = t.lossOf('sbo')
    out.sbo_acc = t.accOf('sbo')
  } else {
    delete out.sbo_loss
    delete out.sbo_acc
  }
  if (objectives.includes('nsp')) {
    out.nsp_loss = t.lossOf('nsp')
    out.nsp_acc = t.accOf('nsp')
  }
  return out
}

/**
 * A training record for the steps of a --log-every window: `loss` is the mean of the steps'
 * losses (each MLM_sum/n_mlm + SBO_sum/n_sbo, SpanBERT's loss), the per-objective figures pool
 * the window's targets; tokens_per_s counts real (non-padding) tokens over the steps' wall time.
 */
export function trainRecord(step: number, epoch: number, t: Tally, objectives: readonly string[], lr: number, gradNorm: number, seconds: number): MetricsRecord {
  return {
    step, epoch,
    loss: t.batches > 0 ? t.loss / t.batches : null,
    ...objectiveFields(t, objectives),
    lr, grad_norm: gradNorm,
    tokens_per_s: seconds > 0 ? Math.round((10 * t.tokens) / seconds) / 10 : null,
  }
}

/** An evaluation record: the whole eval file, pooled; loss = sum of the objectives' mean losses. */
export function evalRecord(step: number, t: Tally, objectives: readonly string[]): MetricsRecord {
  const fields = objectiveFields(t, objectives)
  let loss: number | null = null
  for (const k of ['mlm_loss', 'sbo_loss', 'nsp_loss']) {
    const v = fields[k]
    if (typeof v === 'number') loss = (loss ?? 0) + v
  }
  return {split: 'eval', step, loss, ...fields, targets: t.sums.mlm[2], tokens: t.tokens}
}

/** Where a run's scalars go besides metrics NDJSON (TensorBoard); a no-op without --tensorboard. */
export interface ScalarSink {
  /** every numeric field of a metrics record but step and epoch, as `${prefix}/${key}` at the record's step */
  record(prefix: string, rec: Record<string, unknown>): void
  flush(): Promise<void>
  close(): Promise<void>
}

const NOT_SCALARS = new Set(['step', 'epoch', 'best'])

/** A TensorBoard event file in dir (train/tensorboard.ts), or a sink that drops everything. */
export async function openScalars(dir: string | null | undefined): Promise<ScalarSink> {
  if (!dir) return {record: () => {}, flush: async () => {}, close: async () => {}}
  const w = await EventWriter.open(dir)
  return {
    record(prefix, rec) {
      if (typeof rec.step !== 'number') return
      for (const [k, v] of Object.entries(rec)) if (typeof v === 'number' && Number.isFinite(v) && !NOT_SCALARS.has(k)) w.scalar(`${prefix}/${k}`, v, rec.step)
    },
    flush: () => w.flush(),
    close: () => w.close(),
  }
}
