import {SpanError} from '../stream/errors.js'

/** Pre-training objectives (docs/algorithms.md#pre-training-loss: `mlm,sbo` is SpanBERT's default; `mlm,nsp` the BERT baseline). */
export const OBJECTIVES = ['mlm', 'sbo', 'nsp'] as const
export type Objective = (typeof OBJECTIVES)[number]

/** SBO head sizes (SpanBERT §4.2: 200-dim position embeddings; at most 15 targets per span). */
export interface SboConfig {
  position_embedding_size: number
  max_targets: number
}

/**
 * The model's configuration, in Hugging Face BertConfig keys plus ours
 * (`objectives`, `sbo`), so config.json loads with transformers' BertConfig.
 */
export interface BertConfig {
  model_type: 'bert'
  architectures?: string[]
  vocab_size: number
  hidden_size: number
  num_hidden_layers: number
  num_attention_heads: number
  intermediate_size: number
  hidden_act: 'gelu'
  hidden_dropout_prob: number
  attention_probs_dropout_prob: number
  max_position_embeddings: number
  type_vocab_size: number
  initializer_range: number
  layer_norm_eps: number
  pad_token_id?: number
  objectives: Objective[]
  sbo: SboConfig
}

/** Sizes of the presets (docs/algorithms.md#model-and-optimisation). */
export const PRESETS = {
  tiny: {num_hidden_layers: 2, hidden_size: 128, num_attention_heads: 2},
  mini: {num_hidden_layers: 4, hidden_size: 256, num_attention_heads: 4},
  small: {num_hidden_layers: 4, hidden_size: 512, num_attention_heads: 8},
  medium: {num_hidden_layers: 8, hidden_size: 512, num_attention_heads: 8},
  base: {num_hidden_layers: 12, hidden_size: 768, num_attention_heads: 12},
  large: {num_hidden_layers: 24, hidden_size: 1024, num_attention_heads: 16},
} as const
export type PresetName = keyof typeof PRESETS

/** A config from a preset: intermediate = 4H, 512 positions, 2 token types, BERT's dropout and init. */
export function presetConfig(preset: PresetName, vocabSize: number, overrides: Partial<BertConfig> = {}): BertConfig {
  const p = PRESETS[preset]
  if (!p) throw new SpanError(`unknown model preset "${preset}" (one of ${Object.keys(PRESETS).join(', ')})`)
  return checkConfig({
    model_type: 'bert',
    vocab_size: vocabSize,
    hidden_size: p.hidden_size,
    num_hidden_layers: p.num_hidden_layers,
    num_attention_heads: p.num_attention_heads,
    intermediate_size: 4 * p.hidden_size,
    hidden_act: 'gelu',
    hidden_dropout_prob: 0.1,
    attention_probs_dropout_prob: 0.1,
    max_position_embeddings: 512,
    type_vocab_size: 2,
    initializer_range: 0.02,
    layer_norm_eps: 1e-12,
    objectives: ['mlm', 'sbo'],
    sbo: {position_embedding_size: 200, max_targets: 15},
    ...overrides,
  })
}

/** Parses `mlm,sbo` style lists; `mlm` is required (both SBO and NSP ride along with it). */
export function parseObjectives(text: string): Objective[] {
  const list = text.split(',').map((s) => s.trim()).filter((s) => s.length > 0)
  for (const o of list) {
    if (!(OBJECTIVES as readonly string[]).includes(o)) throw new SpanError(`unknown objective "${o}" (use mlm, sbo, nsp)`)
  }
  if (!list.includes('mlm')) throw new SpanError('objectives must include mlm')
  return OBJECTIVES.filter((o) => list.includes(o))
}

/**
 * A config read from a config.json (ours or any Hugging Face BERT's): missing fields of
 * ours get their defaults; BERT fields are required.
 */
export function configFromJson(json: unknown, source: string): BertConfig {
  if (json === null || typeof json !== 'object') throw new SpanError(`${source}: not a JSON object`)
  const j = json as Record<string, unknown>
  const act = j.hidden_act ?? 'gelu'
  if (act !== 'gelu') throw new SpanError(`${source}: hidden_act "${String(act)}" is not supported (only gelu)`)
  const num = (k: string, dflt?: number): number => {
    const v = j[k] ?? dflt
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new SpanError(`${source}: "${k}" must be a number`)
    return v
  }
  const sbo = (j.sbo ?? {}) as Partial<SboConfig>
  return checkConfig({
    model_type: 'bert',
    vocab_size: num('vocab_size'),
    hidden_size: num('hidden_size'),
    num_hidden_layers: num('num_hidden_layers'),
    num_attention_heads: num('num_attention_heads'),
    intermediate_size: num('intermediate_size'),
    hidden_act: 'gelu',
    hidden_dropout_prob: num('hidden_dropout_prob', 0.1),
    attention_probs_dropout_prob: num('attention_probs_dropout_prob', 0.1),
    max_position_embeddings: num('max_position_embeddings', 512),
    type_vocab_size: num('type_vocab_size', 2),
    initializer_range: num('initializer_range', 0.02),
    layer_norm_eps: num('layer_norm_eps', 1e-12),
    ...(typeof j.pad_token_id === 'number' ? {pad_token_id: j.pad_token_id} : {}),
    objectives: Array.isArray(j.objectives) ? parseObjectives(j.objectives.join(',')) : ['mlm', 'sbo'],
    sbo: {position_embedding_size: sbo.position_embedding_size ?? 200, max_targets: sbo.max_targets ?? 15},
  })
}

/** The JSON written to config.json. */
export function configToJson(c: BertConfig): Record<string, unknown> {
  return {...c, architectures: ['BertForPreTraining']}
}

export function checkConfig(c: BertConfig): BertConfig {
  const ints: (keyof BertConfig)[] = ['vocab_size', 'hidden_size', 'num_hidden_layers', 'num_attention_heads',
    'intermediate_size', 'max_position_embeddings', 'type_vocab_size']
  for (const k of ints) {
    const v = c[k]
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new SpanError(`model config: ${k} must be a positive integer, got ${String(v)}`)
  }
  if (c.hidden_size % c.num_attention_heads !== 0) {
    throw new SpanError(`model config: hidden_size ${c.hidden_size} is not a multiple of num_attention_heads ${c.num_attention_heads}`)
  }
  if (!Number.isInteger(c.sbo.max_targets) || c.sbo.max_targets < 1) throw new SpanError('model config: sbo.max_targets must be a positive integer')
  if (!Number.isInteger(c.sbo.position_embedding_size) || c.sbo.position_embedding_size < 1) {
    throw new SpanError('model config: sbo.position_embedding_size must be a positive integer')
  }
  return c
}
