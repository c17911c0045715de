import {FUSED_KERNELS} from '../fused-kernels.js'

/**
 * The kernels every step of the census calls (an encoder's forward and backward, dropout, the
 * clipping norm and AdamW); each step below lists only its own beyond these.
 */
const EVERY_STEP = [
  'Add',
  'Cast',
  'ExpandDims',
  'GatherV2',
  'Identity',
  'Multiply',
  'Range',
  'RealDiv',
  'Reshape',
  'ScatterNd',
  'SpanAdamW',
  'SpanAttention',
  'SpanAttentionGrad',
  'SpanDropout',
  'SpanLayerNorm',
  'SpanLayerNormGrad',
  'SpanLinear',
  'SpanLinearGrad',
  'SpanResidualLayerNorm',
  'SpanResidualLayerNormGrad',
  'SpanSumSquares',
  'Sub',
  'Sum',
  'ZerosLike',
]

/** A step's kernels, sorted as the census tool prints them: every step's and its own. */
const census = (...own: string[]): readonly string[] => [...EVERY_STEP, ...own].sort()

/**
 * The kernels the `cuda` backend must provide: the census of every tfjs kernel span's
 * pre-training and fine-tuning steps call on the native backend (forward, backward, clipping
 * and AdamW), by step, as tools/kernel-census.ts records it (`npx tsx tools/kernel-census.ts`
 * prints it; test/core/engine/cuda/census.test.ts fails when this copy is out of date), each step
 * written as EVERY_STEP and its own kernels.
 */
export const KERNEL_CENSUS: Record<string, readonly string[]> = {
  pretrain: census('ArgMax', 'Concat', 'Equal', 'Pack', 'SpanCrossEntropy', 'SpanCrossEntropyGrad', 'SplitV'),
  'glue-classification': census('SpanCrossEntropy', 'SpanCrossEntropyGrad', 'Square', 'Tanh'),
  'glue-regression': census('Mean', 'Square', 'Tanh'),
  'glue-span-ft': census(
    'ArgMax',
    'BatchMatMul',
    'Concat',
    'Equal',
    'Greater',
    'LogicalNot',
    'Max',
    'PadV2',
    'Relu',
    'Select',
    'Slice',
    'SpanCrossEntropy',
    'SpanCrossEntropyGrad',
    'SplitV',
    'Square',
    'Step',
    'Tanh',
    'Tile',
    'Transpose',
  ),
  squad: census('PadV2', 'Slice', 'SpanCrossEntropy', 'SpanCrossEntropyGrad'),
}

/** Every kernel of the census, sorted. */
export const CUDA_KERNELS: readonly string[] = [...new Set(Object.values(KERNEL_CENSUS).flat())].sort()

/** span's fused kernels (fused-kernels.ts): the cuda backend implements these itself, never their composites. */
export const CUDA_FUSED_KERNELS: readonly string[] = Object.values(FUSED_KERNELS)

/** The census' other kernels: tfjs' own, each a cuda kernel (or an alias: Reshape, Identity, ExpandDims). */
export const CUDA_STANDARD_KERNELS: readonly string[] = CUDA_KERNELS.filter((k) => !CUDA_FUSED_KERNELS.includes(k))

/** Kernels that only re-describe their input (same storage, new shape): refcount aliases on the device, no launch. */
export const CUDA_ALIAS_KERNELS: readonly string[] = ['Reshape', 'Identity', 'ExpandDims']
