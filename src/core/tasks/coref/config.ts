/**
 * The coreference head's settings, saved as `coref` in config.json (defaults: Joshi et al. 2019,
 * mandarjoshi90/coref @bd04f2e1 experiments.conf `best`, and the issue's --max-segment-len 384 for base).
 */
export interface CorefHeadConfig {
  /** joshi: span vectors, coarse-to-fine pair scores (Joshi et al. 2019); s2e: start/end vectors and bilinear scores (Kirstain et al. 2021). Absent in configs saved before --head: joshi */
  head_type?: 'joshi' | 's2e'
  /** sub-tokens per segment, [CLS] and [SEP] included */
  max_segment_len: number
  /** segments in one training run (max_training_sentences) */
  max_training_segments: number
  /** longest candidate span in sub-tokens */
  max_span_width: number
  /** spans kept per sub-token (top_span_ratio) */
  top_span_ratio: number
  /** antecedents kept per span by the coarse scores (max_top_antecedents) */
  max_top_antecedents: number
  ffnn_size: number
  feature_size: number
  /** 1: fine scores once; 2: one higher-order refinement of the span vectors (Lee et al. 2018) */
  coref_depth: number
  /** the head's dropout (dropout_rate) */
  dropout: number
  /** the genres of the training data ([]: no genre feature) */
  genres: string[]
  /** a same-speaker feature (the training data has speakers) */
  speakers: boolean
  /** keep a span without antecedent whose mention score is above 0 (fast-coref's rule) */
  singletons: boolean
  /** fast-coref's mention loss added to the antecedent loss: summed BCE over the top spans, all candidates, or none (Joshi et al.) */
  mention_loss: 'none' | 'topk' | 'all'
}

export const COREF_DEFAULTS: CorefHeadConfig = {
  head_type: 'joshi',
  max_segment_len: 384,
  max_training_segments: 3,
  max_span_width: 30,
  top_span_ratio: 0.4,
  max_top_antecedents: 50,
  ffnn_size: 1000,
  feature_size: 20,
  coref_depth: 1,
  dropout: 0.3,
  genres: [],
  speakers: false,
  singletons: false,
  mention_loss: 'none',
}

/** Width of a span vector: start, end and head vectors (H each) and the width embedding. */
export const spanDim = (hidden: number, h: CorefHeadConfig): number => 3 * hidden + h.feature_size

/** Width of the pair features φ: antecedent distance, segment distance, same speaker, genre. */
export const pairFeatureDim = (h: CorefHeadConfig): number => h.feature_size * (2 + (h.speakers ? 1 : 0) + (h.genres.length > 0 ? 1 : 0))
