import {stat} from 'node:fs/promises'
import {Args, Flags} from '@oclif/core'
import {tmpdir} from 'node:os'
import {fsError} from '../core/util/fs-errors.js'
import {SpanCommand, VERSION, binaryFlag, ioFlags} from '../cli/base.js'
import type {BinaryMode} from '../core/stream/bytelines.js'
import {Rng} from '../core/data/rng.js'
import {SpanError, UsageError, openSource, type Line} from '../core/stream/index.js'
import {NgramCounter} from '../core/text/ngrams-count.js'
import {countNgrams, inputLines, peek, segmentTexts, segmentTokenRecords, writeDictionary, type Segmenter} from '../core/text/ngrams-stream.js'
import {WordSplitter, randomSegments, readNgramDict} from '../core/text/ngrams.js'

export default class SegmentNgrams extends SpanCommand {
  static override summary = 'Build an n-gram dictionary (--build), or segment sentences with one (--dict) or at random (--random)'
  static override description = `Span Fine-tuning (Bao et al. §3.1, §4.1). Words are BERT BasicTokenizer words, uncased.
--build counts the n-grams (2 ≤ n ≤ --max-n) of each line (never across a line end; none with a
punctuation-only word) in bounded memory (sorted runs spilled to --tmp-dir past --memory MB, then merged)
and writes those seen at least --min-count times, most frequent first.
--dict segments each sentence greedily from the left, longest dictionary n-gram first, unmatched words
alone. Text lines in: {"text","words","segments":[[start,end),…]} out. Token records from
span tokenize --tokens in: the same records with "spans":[[first,last],…] over tokens (inclusive).
--random: the random-segmentation ablation, lengths uniform in 1..--max-n, seeded by --seed.`
  static override examples = [
    'span segment-ngrams --build wiki.txt -o ngrams.tsv',
    'span segment-ngrams --dict ngrams.tsv sentences.txt',
    'span tokenize --tokens --uncased s.txt | span segment-ngrams --dict ngrams.tsv',
    'span segment-ngrams --random --seed 1 sentences.txt',
  ]
  static override args = {file: Args.string({description: 'input file (instead of --input)', ignoreStdin: true})}
  static override flags = {
    ...ioFlags,
    build: Flags.boolean({description: 'count n-grams and write the dictionary', default: false, exclusive: ['dict', 'random']}),
    dict: Flags.string({description: 'segment with this dictionary (from --build)', exclusive: ['build', 'random']}),
    random: Flags.boolean({description: 'random segmentation (ablation)', default: false, exclusive: ['build', 'dict']}),
    field: Flags.string({description: 'read JSONL and use this string field of each record'}),
    'max-n': Flags.integer({description: 'longest n-gram (--build, --random)', default: 5, min: 2}),
    'min-count': Flags.integer({description: 'keep n-grams seen at least this often (--build)', default: 10, min: 1}),
    'max-size': Flags.integer({description: 'keep only the K most frequent (--build)', min: 0}),
    memory: Flags.integer({description: 'MB of counts held in memory before spilling a sorted run (--build)', default: 512, min: 1}),
    'tmp-dir': Flags.string({description: 'directory for run files (--build)', default: tmpdir()}),
    seed: Flags.integer({description: 'seed of the random generator (--random)', default: 12345}),
    binary: binaryFlag,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(SegmentNgrams)
    if (!flags.build && flags.dict === undefined && !flags.random) throw new UsageError('give one of --build (count n-grams and write the dictionary), --dict FILE (segment with it) or --random (random segmentation)')
    const src = await openSource(args.file ?? flags.input)
    if (flags.build) return this.build(src.name, inputLines(src, flags.field, flags.binary as BinaryMode), flags)
    const split = new WordSplitter()
    const seg = await segmenter(flags)
    const {lines, records} = await peek(inputLines(src, flags.field, flags.binary as BinaryMode), flags.field === undefined)
    const entry = {stage: 'segment-ngrams', version: VERSION, flags: {dict: flags.dict ?? null, random: flags.random, maxN: flags['max-n'], seed: flags.random ? flags.seed : null}}
    await this.withOutput(flags.output, async (w) => {
      if (records) await segmentTokenRecords(lines, src.name, split, seg, w, entry)
      else await segmentTexts(lines, src.name, flags.field, split, seg, w)
    })
  }

  private async build(source: string, lines: AsyncIterable<Line>, flags: BuildFlags): Promise<void> {
    await checkTmpDir(flags['tmp-dir'])
    const counter = new NgramCounter({maxN: flags['max-n'], minCount: flags['min-count'], maxSize: flags['max-size'] ?? null, memoryBytes: flags.memory * 2 ** 20, tmpDir: flags['tmp-dir']})
    try {
      let kept = 0
      await this.withOutput(flags.output, async (w) => {
        await countNgrams(lines, source, flags.field, counter, new WordSplitter())
        await writeDictionary(counter, w, (n) => (kept = n))
      })
      const runs = counter.spills > 0 ? `, ${counter.spills} sorted runs spilled` : ''
      process.stderr.write(`span segment-ngrams: ${counter.sentences} sentences, ${counter.occurrences} n-grams counted, ${kept} kept (count ≥ ${flags['min-count']})${runs}\n`)
    } finally {
      await counter.cleanup()
    }
  }
}

interface BuildFlags {
  output: string
  field?: string
  'max-n': number
  'min-count': number
  'max-size'?: number
  memory: number
  'tmp-dir': string
}

/** --tmp-dir must be a directory, found before the counting (where a spill would find out late). */
async function checkTmpDir(dir: string): Promise<void> {
  const s = await stat(dir).catch((err) => Promise.reject(fsError(err, `--tmp-dir ${dir}`)))
  if (!s.isDirectory()) throw new SpanError(`--tmp-dir ${dir}: not a directory (ENOTDIR)`)
}

async function segmenter(flags: {dict?: string; random: boolean; 'max-n': number; seed: number}): Promise<Segmenter> {
  if (flags.random) {
    const rng = new Rng(flags.seed)
    return (words) => randomSegments(words, flags['max-n'], rng)
  }
  const dict = await readNgramDict(await openSource(flags.dict as string))
  return (words) => dict.segment(words)
}
