import {Flags} from '@oclif/core'
import {numberFlag} from './base.js'

/**
 * Dynamic loss scaling of --precision fp16 (issue 35; src/core/train/loss-scale.ts): every setting
 * of fairseq's DynamicLossScaler as SpanBERT trained with it and of torch.amp.GradScaler, defaults
 * fairseq's. `withDefaults`: oclif defaults (fine-tuning); pretrain passes false (its settings come
 * from defaults, a resumed run, a config file, then the flags given).
 */
export function lossScaleFlags(withDefaults: boolean) {
  const d = <T>(v: T) => (withDefaults ? {default: v} : {})
  return {
    'loss-scale-init': numberFlag('fp16: the first loss scale (fairseq --fp16-init-scale 128; torch GradScaler 65536)', {min: 1e-30, ...d(128)}),
    'loss-scale-growth': numberFlag('fp16: the scale is multiplied by this after --loss-scale-window clean steps (fairseq, torch: 2)', {min: 1, ...d(2)}),
    'loss-scale-backoff': numberFlag('fp16: the scale is multiplied by this on an overflow, whose step is skipped (torch 0.5; fairseq halves)', {
      min: 0,
      max: 1,
      ...d(0.5),
    }),
    'loss-scale-window': Flags.integer({
      description:
        "fp16: clean steps since the last overflow before the scale grows (default fairseq's 16384 / (processes × --accumulate); torch GradScaler 2000)",
      min: 1,
    }),
    'loss-scale-min': numberFlag('fp16: an overflow taking the scale to this or below stops the run (fairseq --min-loss-scale 1e-4)', {min: 0, ...d(1e-4)}),
  }
}
