import {Flags} from '@oclif/core'
import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {SpanCommand} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {VOCAB_FILE} from '../../core/model/checkpoint.js'
import {writeFilesInto} from '../../core/util/write-into.js'
import {loadQaModel} from '../../core/model/qa.js'
import {SpanError} from '../../core/stream/errors.js'
import {readMrqaFile} from '../../core/tasks/mrqa/read.js'
import {predictMrqa} from '../../core/tasks/mrqa/train.js'
import type {SquadFinetuneConfig} from '../../core/tasks/squad/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {loadVocab} from '../../core/text/vocab.js'
import {predictFlags, predictModel} from '../../cli/finetune-flags.js'

export default class PredictMrqa extends SpanCommand {
  static override summary = 'Answer MRQA questions with a model from span finetune mrqa: predictions.json {qid: text}'
  static override description = `Windows as the model was fine-tuned (--max-len, --doc-stride, --max-query-len from its finetune_config.json),
SQuAD v1.1 decoding (always an answer). -o names the folder that receives predictions.json (written whole, then
renamed), the file span eval mrqa and mrqa_official_eval.py read.`
  static override examples = [
    'span predict mrqa --model mrqa-run --data SQuAD.jsonl.gz -o out && span eval mrqa --data SQuAD.jsonl.gz --pred out/predictions.json',
  ]
  static override flags = {
    ...predictFlags('mrqa', 'window'),
    output: Flags.string({char: 'o', description: 'folder for predictions.json', default: '.'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(PredictMrqa)
    const {dir, saved} = await predictModel(flags.model, 'mrqa')
    if (saved.task !== 'mrqa') throw new SpanError(`${flags.model}: not a span finetune mrqa model (task ${JSON.stringify(saved.task ?? null)})`)
    const c = {...(saved as unknown as SquadFinetuneConfig), 'max-len': flags['max-len'] ?? (saved['max-len'] as number)}
    const data = readMrqaFile(flags.data, {needSpans: false})
    const vocab = loadVocab(join(dir, VOCAB_FILE))
    await initBackend(flags.backend as BackendChoice, flags)
    const {model} = await loadQaModel(dir, 0)
    try {
      const preds = await predictMrqa({model, tokenizer: new WordPieceTokenizer(vocab, {lowercase: !c.cased})}, c, data, flags['batch-size'])
      await writeFilesInto(flags.output, [{name: 'predictions.json', write: (p: string) => writeFile(p, JSON.stringify(preds, null, 2) + '\n')}], {
        manifest: false,
      })
    } finally {
      model.dispose()
    }
  }
}
