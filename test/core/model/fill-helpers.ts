// A tiny model that memorised one sentence (trained in-process, full batch, Adam), for the
// span fill tests: every span of 1–3 words of the sentence masked, one example each.
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import * as tf from '@tensorflow/tfjs'
import {type MaskedExample, collate, disposeBatch, toTensors} from '../../../src/core/model/batch.js'
import {presetConfig} from '../../../src/core/model/config.js'
import {SpanBertForPreTraining} from '../../../src/core/model/pretraining.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {loadVocab} from '../../../src/core/text/vocab.js'

export const TEXT = 'the old man walked to the river in the morning and saw a small boat'
const WORDS = [...new Set(TEXT.split(' '))]
const tmp = mkdtempSync(join(tmpdir(), 'span-fill-'))
export const vocabPath = join(tmp, 'vocab.txt')
writeFileSync(vocabPath, ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...WORDS, '##s', 'x'].join('\n') + '\n')
writeFileSync(join(tmp, 'tokenizer_config.json'), '{"do_lower_case": true}')
export const vocab = loadVocab(vocabPath)
export const tok = new WordPieceTokenizer(vocab, {lowercase: true})

/** Every span of 1–3 words of TEXT masked, one example each: what the model memorises. */
function examples(): MaskedExample[] {
  const ids = [2, ...tok.encode(TEXT), 3]
  const out: MaskedExample[] = []
  for (let len = 1; len <= 3; len++) {
    for (let s = 1; s + len < ids.length; s++) {
      const masked = ids.map((id, i) => (i >= s && i < s + len ? 4 : id))
      out.push({ids: masked, targets: Array.from({length: len}, (_, i) => [s + i, ids[s + i]] as [number, number]), spans: [[s, s + len - 1, 'mask']]})
    }
  }
  return out
}

/** A one-layer model trained to memorise TEXT (full batch, Adam), in-process. */
export function memorised(): SpanBertForPreTraining {
  const c = presetConfig('tiny', vocab.tokens.length, {
    hidden_size: 32,
    num_attention_heads: 2,
    intermediate_size: 64,
    num_hidden_layers: 1,
    max_position_embeddings: 24,
    hidden_dropout_prob: 0,
    attention_probs_dropout_prob: 0,
    sbo: {position_embedding_size: 8, max_targets: 4},
  })
  const model = SpanBertForPreTraining.init(c, 1)
  const b = toTensors(collate(examples(), {padId: 0, maxTargets: 4, maxPositions: 24}))
  const opt = tf.train.adam(2e-2)
  for (let i = 0; i < 80; i++) opt.minimize(() => model.losses(b, {training: false, rng: null}).total, false, model.trainableVariables())
  opt.dispose()
  disposeBatch(b)
  return model
}
