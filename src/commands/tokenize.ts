import {Args, Flags} from '@oclif/core'
import {SpanCommand, VERSION, binaryFlag, ioFlags} from '../cli/base.js'
import {type BinaryMode, readLineBatches} from '../core/stream/bytelines.js'
import {nextHeader, openSource, readNdjson} from '../core/stream/index.js'
import {longLines} from '../core/text/long-line.js'
import {docStartPattern, parseShard, tokenizeJsonl, tokenizeText} from '../core/text/tokenize-stage.js'
import {WordPieceTokenizer} from '../core/text/tokenizer.js'
import {DEFAULT_VOCAB, loadVocab} from '../core/text/vocab.js'

export default class Tokenize extends SpanCommand {
  static override summary = 'Split text into BERT WordPiece token records'
  static override description =
    'Raw text: one sentence or paragraph per line, a blank line ends a document (or --doc-start marks where documents start). ' +
    'JSONL with --field: one document per record. Writes a header, then {"doc":N,"ids":[...]} per non-blank line.'
  static override examples = [
    'cat wiki.txt | span tokenize | span block --len 512 > blocks.ndjson',
    "span tokenize --doc-start '^ = [^=]' wikitext-2.train.txt -o tokens.ndjson",
    'span tokenize --field text --vocab vocab.txt docs.jsonl',
  ]
  static override args = {file: Args.string({description: 'input file (instead of --input)', ignoreStdin: true})}
  static override flags = {
    ...ioFlags,
    vocab: Flags.string({description: 'WordPiece vocabulary, one token per line (default: the bundled fixtures/vocab.txt)'}),
    uncased: Flags.boolean({description: 'lowercase and strip accents (overrides the vocabulary)', exclusive: ['cased']}),
    cased: Flags.boolean({description: 'keep case and accents (overrides the vocabulary)', exclusive: ['uncased']}),
    tokens: Flags.boolean({description: 'also write the token strings ("tokens":[...])'}),
    field: Flags.string({description: 'read JSONL and tokenize this string field of each record (one document per record)'}),
    binary: binaryFlag,
    shard: Flags.string({description: 'keep every N-th document starting at K (K/N, e.g. 0/4): N processes split one corpus'}),
    'doc-start': Flags.string({description: 'a line matching this regular expression starts a document; blank lines then do not', exclusive: ['field']}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Tokenize)
    const docStart = docStartPattern(flags['doc-start'])
    const shard = parseShard(flags.shard)
    const vocab = loadVocab(flags.vocab ?? DEFAULT_VOCAB)
    const cased = flags.cased ? true : flags.uncased ? false : vocab.cased
    const tok = new WordPieceTokenizer(vocab, {lowercase: !cased})
    const src = await openSource(args.file ?? flags.input)
    const header = nextHeader(
      null,
      'tokens',
      {stage: 'tokenize', version: VERSION, flags: {vocab: vocab.info.path, cased, tokens: Boolean(flags.tokens), field: flags.field ?? null, docStart: flags['doc-start'] ?? null, ...(shard ? {shard: flags.shard} : {})}},
      {vocab: vocab.info, cased, special: vocab.special},
    )
    const opts = {tokens: Boolean(flags.tokens), docStart, shard}
    await this.withOutput(flags.output, async (w) => {
      await w.record(header)
      if (flags.field === undefined) await tokenizeText(readLineBatches(src, Infinity, flags.binary as BinaryMode, longLines(tok.chars)), tok, w, opts)
      else await tokenizeJsonl(readNdjson(src), src.name, flags.field, tok, w, opts)
    })
  }
}
