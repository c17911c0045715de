// The reference for the tokenizer tests: Hugging Face `tokenizers` (npm, a devDependency; its
// Rust core is what transformers' BertTokenizerFast runs), assembled as BERT's tokenizer:
// BertNormalizer + BertPreTokenizer + WordPiece(`[UNK]`, `##`, 100 chars), no special tokens.
import {createRequire} from 'node:module'
import {join} from 'node:path'
import {SHARED_DATA} from '../../helpers/shared-data.js'

const require = createRequire(import.meta.url)

interface Encoding {
  getIds(): number[]
  getTokens(): string[]
}
interface HfTokenizer {
  setNormalizer(n: unknown): void
  setPreTokenizer(p: unknown): void
  encodeBatch(inputs: string[], opts?: {addSpecialTokens?: boolean}): Promise<Encoding[]>
}
interface Normalizer {
  normalizeString(s: string): string
}
interface PreTokenizer {
  preTokenizeString(s: string): [string, [number, number]][]
}
interface Tokenizers {
  Tokenizer: new (model: unknown) => HfTokenizer
  WordPiece: {fromFile(path: string, opts: Record<string, unknown>): Promise<unknown>}
  bertNormalizer(opts: Record<string, boolean>): Normalizer
  bertPreTokenizer(): PreTokenizer
}

const tk = require('tokenizers') as Tokenizers

export const DATA = SHARED_DATA
export const VOCABS = {
  cased: join(DATA, 'vocab', 'bert-base-cased.txt'),
  uncased: join(DATA, 'vocab', 'bert-base-uncased.txt'),
}
export const WIKITEXT_VALID = join(DATA, 'wikitext', 'wikitext-2.valid.txt')

export interface Oracle {
  ids(lines: string[]): Promise<number[][]>
  tokens(lines: string[]): Promise<string[][]>
  /** The words after BertNormalizer + BertPreTokenizer: what BasicScanner.basic must give. */
  words(line: string): string[]
}

export async function oracle(vocabPath: string, lowercase: boolean): Promise<Oracle> {
  const model = await tk.WordPiece.fromFile(vocabPath, {unkToken: '[UNK]', continuingSubwordPrefix: '##', maxInputCharsPerWord: 100})
  const t = new tk.Tokenizer(model)
  const normalizer = tk.bertNormalizer({cleanText: true, handleChineseChars: true, stripAccents: lowercase, lowercase})
  const pre = tk.bertPreTokenizer()
  t.setNormalizer(normalizer)
  t.setPreTokenizer(pre)
  const encode = (lines: string[]) => t.encodeBatch(lines, {addSpecialTokens: false})
  return {
    ids: async (lines) => (await encode(lines)).map((e) => e.getIds()),
    tokens: async (lines) => (await encode(lines)).map((e) => e.getTokens()),
    words: (line) => pre.preTokenizeString(normalizer.normalizeString(line)).map(([w]) => w),
  }
}
