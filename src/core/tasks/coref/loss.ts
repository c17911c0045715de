/**
 * The training objective (Joshi et al. 2019; mandarjoshi90/coref @bd04f2e1, independent.py
 * get_predictions_and_loss and softmax_loss): the marginal log-likelihood of the correct
 * antecedents of every top span, the dummy antecedent (score 0) correct when none is.
 */
import * as tf from '@tensorflow/tfjs'
import type {Antecedents} from './spans.js'

/**
 * Gold labels [k, c + 1] (row-major), column 0 the dummy: antecedent t of span i is correct when
 * it is a real antecedent and both are mentions of the same gold cluster (cluster ids > 0); the
 * dummy is correct when no antecedent is.
 */
export function antecedentLabels(cluster: ArrayLike<number>, ant: Antecedents): Uint8Array {
  const k = cluster.length
  const {c} = ant
  const labels = new Uint8Array(k * (c + 1))
  for (let i = 0; i < k; i++) {
    let any = false
    for (let t = 0; t < c; t++) {
      const j = ant.index[i * c + t]
      const yes = ant.mask[i * c + t] === 1 && cluster[i] > 0 && cluster[j] === cluster[i]
      if (yes) labels[i * (c + 1) + 1 + t] = 1
      any ||= yes
    }
    if (!any) labels[i * (c + 1)] = 1
  }
  return labels
}

/**
 * fast-coref's mention loss (shtoshni/fast-coref @50e0e179, mention_proposal_module.py
 * pred_mentions: BCEWithLogitsLoss(reduction="sum")): Σ softplus(s) − s·y over the given mention
 * scores, y = 1 for gold mentions. It calibrates s > 0 as "a mention", which --singletons reads.
 */
export function mentionLoss(scores: tf.Tensor1D, cluster: ArrayLike<number>): tf.Scalar {
  const y = tf.tensor1d(Float32Array.from(cluster, (c) => (c > 0 ? 1 : 0))) // [K]
  return tf.softplus(scores).sub(scores.mul(y)).sum() as tf.Scalar // []
}

/** softmax_loss summed over spans: Σ_i logsumexp(scores_i) − logsumexp(scores_i + log labels_i). scores [k, c + 1]. */
export function marginalLoss(scores: tf.Tensor2D, labels: Uint8Array): tf.Scalar {
  const logLabels = tf.tensor2d(
    Float32Array.from(labels, (y) => (y ? 0 : -Infinity)),
    scores.shape,
  ) // [k, c + 1]
  const gold = tf.logSumExp(scores.add(logLabels), 1) // [k]
  return tf.logSumExp(scores, 1).sub(gold).sum() as tf.Scalar // []
}
