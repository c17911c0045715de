import {Flags} from '@oclif/core'
import {SpanCommand} from '../cli/base.js'
import {type ExportFormat, exportCheckpoint} from '../core/model/export.js'
import {UsageError} from '../core/stream/errors.js'
import {modelDir, realPathOf} from '../core/train/run-dir.js'

export default class Export extends SpanCommand {
  static override summary = 'Write a checkpoint in the other weights format: pytorch_model.bin or model.safetensors'
  static override description = `Reads a checkpoint directory (model.safetensors, pytorch_model.bin, or their sharded forms) and
writes --to DIR with the weights in --format pytorch (pytorch_model.bin, torch.save's zip format, which
torch.load reads) or safetensors (model.safetensors), tensors under the same names and dtypes, with
config.json, vocab.txt, tokenizer_config.json and special_tokens_map.json beside them, so that
transformers' from_pretrained loads the directory. Nothing is half-written.`
  static override examples = [
    'span export --model ckpt --to ckpt-pt --format pytorch',
    'span export --model spanbert_hf_base --vocab bert-base-cased-vocab.txt --to spanbert-st --format safetensors',
  ]
  static override flags = {
    model: Flags.string({description: 'checkpoint directory (a run directory means its best/, else its newest checkpoint-STEP/)', required: true}),
    to: Flags.string({description: 'output directory', required: true}),
    format: Flags.string({description: 'weights format to write', options: ['pytorch', 'safetensors'], required: true}),
    vocab: Flags.string({description: 'vocabulary file, for a checkpoint without vocab.txt'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Export)
    if (flags.to === flags.model) throw new UsageError('--to must differ from --model')
    const model = modelDir(flags.model, (l) => process.stderr.write(`span export: ${l}\n`)) // a run directory: its best/, else its newest checkpoint
    if ([model, flags.model].some((m) => realPathOf(m) === realPathOf(flags.to))) throw new UsageError('--to must differ from --model')
    const n = await exportCheckpoint(model, flags.to, flags.format as ExportFormat, flags.vocab)
    process.stderr.write(`span export: ${n} tensors written to ${flags.to} (${flags.format})\n`)
  }
}
