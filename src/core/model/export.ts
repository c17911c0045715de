import {copyFile} from 'node:fs/promises'
import {join} from 'node:path'
import {SpanError} from '../stream/errors.js'
import {writeFilesInto} from '../util/write-into.js'
import {CONFIG_FILE, type CheckpointFile, WEIGHTS_FILE, checkEncoderWeights, checkpointVocab, readConfig, tokenizerFiles} from './checkpoint.js'
import {writeSafetensors} from './safetensors.js'
import {loadVocab} from '../text/vocab.js'
import {writeTorchFile} from './torch/torch-save.js'
import {TORCH_WEIGHTS_FILE, readWeights} from './weights.js'

export type ExportFormat = 'pytorch' | 'safetensors'

/**
 * A checkpoint directory rewritten in the other weights format, tensors under the same names
 * and in the same dtypes: `pytorch_model.bin` (torch.save's zip format) or `model.safetensors`,
 * with config.json, vocab.txt, tokenizer_config.json and special_tokens_map.json beside it, all
 * or nothing (span-manifest.json, written last, lists them). Returns the number of tensors written.
 */
export async function exportCheckpoint(dir: string, out: string, format: ExportFormat, vocab?: string): Promise<number> {
  const config = await readConfig(dir)
  const vocabPath = await checkpointVocab(dir, vocab)
  loadVocab(vocabPath) // a BERT vocabulary ([PAD], [UNK], [CLS], [SEP], [MASK]), else refused by name: one without [CLS] was exported
  const {tensors, source} = await readWeights(dir)
  if (tensors.size === 0) throw new SpanError(`${dir}: the checkpoint holds no tensors`)
  checkEncoderWeights(config, tensors, source) // config.json is copied as it is: it must describe these weights
  const list = [...tensors]
  const weights: CheckpointFile =
    format === 'pytorch'
      ? {name: TORCH_WEIGHTS_FILE, write: (p) => writeTorchFile(p, list)}
      : {name: WEIGHTS_FILE, write: (p) => writeSafetensors(p, list, {format: 'pt'})}
  const files = [
    {name: CONFIG_FILE, write: (p: string) => copyFile(join(dir, CONFIG_FILE), p)},
    weights,
    ...tokenizerFiles(vocabPath, config.max_position_embeddings),
  ]
  await writeFilesInto(out, files, {manifest: true}) // into --to: its other files (a checkpoint's state, a user's) stay as they are
  return list.length
}
