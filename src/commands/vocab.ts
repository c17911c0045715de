import {Args, Flags} from '@oclif/core'
import {SpanCommand, binaryFlag, ioFlags} from '../cli/base.js'
import type {BinaryMode} from '../core/stream/bytelines.js'
import {SpanError, errorAt, openSource, readNdjson} from '../core/stream/index.js'
import {BasicScanner} from '../core/text/basic.js'
import {rawPieces} from '../core/text/long-line.js'
import {WordCounter, learnWordPiece} from '../core/text/vocab-learn.js'

export default class Vocab extends SpanCommand {
  static override summary = 'Learn a WordPiece vocabulary (vocab.txt) from raw text'
  static override description =
    'Words come from BERT\'s BasicTokenizer (cased by default; --uncased lowercases and strips accents); the vocabulary is ' +
    '[PAD] [UNK] [CLS] [SEP] [MASK], the characters, then merges of the most frequent adjacent pieces (Hugging Face WordPieceTrainer) ' +
    'until --size entries. Memory grows with the number of distinct words, not with the input.'
  static override examples = ['span vocab --size 8000 corpus.txt -o vocab.txt', 'cat *.txt | span vocab --uncased --size 30522 > vocab.txt']
  static override args = {file: Args.string({description: 'input file (instead of --input)', ignoreStdin: true})}
  static override flags = {
    ...ioFlags,
    size: Flags.integer({description: 'vocabulary size, special tokens included', default: 30000, min: 6}),
    cased: Flags.boolean({description: 'keep case and accents (the default)', exclusive: ['uncased']}),
    uncased: Flags.boolean({description: 'lowercase and strip accents, as BERT uncased', exclusive: ['cased']}),
    'min-frequency': Flags.integer({description: 'a merge must occur at least this often', default: 2, min: 1}),
    'limit-alphabet': Flags.integer({description: 'keep at most this many distinct characters (the most frequent)', default: 1000, min: 1}),
    field: Flags.string({description: 'read JSONL and learn from this string field of each record'}),
    binary: binaryFlag,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Vocab)
    const src = await openSource(args.file ?? flags.input)
    const scanner = new BasicScanner(Boolean(flags.uncased))
    const counter = new WordCounter()
    if (flags.field === undefined) {
      for await (const text of rawPieces(src, flags.binary as BinaryMode, scanner.table)) counter.add(scanner.basic(text))
    } else {
      for await (const rec of readNdjson(src)) {
        const text = rec.value[flags.field]
        if (typeof text !== 'string') throw errorAt(src.name, rec.line, `field "${flags.field}" must be a string`)
        counter.add(scanner.basic(text))
      }
    }
    if (counter.counts.size === 0) throw new SpanError(`${src.name}: no words to learn a vocabulary from`)
    const vocab = learnWordPiece(counter.counts, {size: flags.size, minFrequency: flags['min-frequency'], limitAlphabet: flags['limit-alphabet']})
    await this.withOutput(flags.output, async (w) => {
      for (const token of vocab) await w.line(token)
    })
    const short = vocab.length < flags.size ? ` (asked for ${flags.size}: no more pairs occur ${flags['min-frequency']} times)` : ''
    process.stderr.write(`span vocab: ${counter.counts.size} distinct words, ${vocab.length} entries${short}\n`)
  }
}
