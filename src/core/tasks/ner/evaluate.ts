/**
 * `span eval ner`: the rows conlleval reads (token ... GOLD PRED) from a prediction file in one
 * of three forms, checked against the gold CoNLL file line by line:
 *   token GOLD PRED              what conlleval reads (its gold column must equal G's tags)
 *   G's layout + PRED            what `span predict ner` writes
 *   token PRED                   aligned with G's token lines
 * Blank and -DOCSTART- lines come from G; a prediction file with another number of -DOCSTART- lines
 * is aligned on its token lines (those lines then get O, as conlleval sees them in G).
 */
import {errorAt, errorIn} from '../../util/errors.js'
import {ConllFormatError, conllCount, splitConllLine, type ConllCounts} from '../../metrics/conlleval.js'
import {readTaskText} from '../common/records.js'
import {parseConll, goldRows, type ConllFile, type ConllLine} from './read.js'
import {LAST_COLUMN, type TagColumn} from './tag-column.js'

/** Rows for conlleval from gold and prediction files. */
export function conllRows(gold: ConllFile, pred: ConllFile): string[][] {
  const docs = (f: ConllFile) => f.lines.filter((l) => l.kind === 'docstart').length
  const tokensOnly = docs(pred) !== docs(gold)
  const keep = (l: ConllLine) => (tokensOnly ? l.kind === 'token' : l.kind !== 'blank')
  const pl = pred.lines.filter(keep)
  const gt = gold.lines.filter(keep)
  if (pl.length !== gt.length)
    throw errorIn(pred.source, `${pl.length} token lines for ${gt.length} in ${gold.source} (predictions must follow the gold file line by line)`)
  const goldOf = new Map(goldRows(gold, () => undefined).map((r, i) => [gold.lines[i], r[1]]))
  const predOf = new Map<ConllLine, string>()
  gt.forEach((g, i) => predOf.set(g, predictedTag(g, pl[i], gold, pred, goldOf.get(g) ?? 'O')))
  const at = new Map(gold.lines.map((g, i) => [i, predOf.get(g)]))
  return goldRows(gold, (i) => at.get(i))
}

/** `goldTag`: the gold file's tag (its tag column); a prediction in the gold file's layout repeats that file's last column. */
function predictedTag(g: ConllLine, p: ConllLine, gold: ConllFile, pred: ConllFile, goldTag: string): string {
  if (p.fields[0] !== g.fields[0])
    throw errorAt(pred.source, p.line, `token ${JSON.stringify(p.fields[0])} where ${gold.source}:${g.line} has ${JSON.stringify(g.fields[0])}`)
  const tag = p.fields[p.fields.length - 1]
  if (p.fields.length < 2) throw errorAt(pred.source, p.line, 'no predicted tag (expected token PRED, token GOLD PRED or the gold layout with PRED last)')
  if (p.fields.length === g.fields.length + 1) goldTag = g.fields[g.fields.length - 1] // what span predict ner writes: the gold line, PRED appended
  const theirs = p.fields[p.fields.length - 2]
  if (p.kind === 'token' && p.fields.length >= 3 && theirs !== goldTag) {
    throw errorAt(pred.source, p.line, `gold column ${JSON.stringify(theirs)} differs from ${gold.source}:${g.line} (${JSON.stringify(goldTag)})`)
  }
  return tag
}

/** Counts of a gold/prediction pair, or of a conlleval file alone (gold = null). */
export function evaluateNerFiles(goldPath: string | null, predPath: string, column: TagColumn = LAST_COLUMN): ConllCounts {
  try {
    if (goldPath === null) return conllCount(conllLines(readTaskText(predPath)))
    const gold = parseConll(readTaskText(goldPath), goldPath, {labeled: true, column})
    const pred = parseConll(readTaskText(predPath), predPath, {labeled: false})
    return conllCount(conllRows(gold, pred))
  } catch (err) {
    if (err instanceof ConllFormatError) throw errorAt(goldPath ?? predPath, err.line, err.message)
    throw err
  }
}

/**
 * Each gold token line's tag and the predicted one (-DOCSTART- and blank lines left out): the
 * per-token outcomes McNemar's test compares (`span eval compare --task ner`).
 */
export function nerTagPairs(goldPath: string, predPath: string): {gold: string[]; pred: string[]} {
  const gold = parseConll(readTaskText(goldPath), goldPath, {labeled: true})
  const rows = conllRows(gold, parseConll(readTaskText(predPath), predPath, {labeled: false}))
  const out = {gold: [] as string[], pred: [] as string[]}
  gold.lines.forEach((g, i) => {
    if (g.kind !== 'token') return
    out.gold.push(g.fields[g.fields.length - 1])
    out.pred.push(rows[i][rows[i].length - 1])
  })
  if (out.gold.length === 0) throw errorIn(goldPath, `no token lines`)
  return out
}

/** A conlleval input text as rows (trailing \r dropped). */
function conllLines(text: string): string[][] {
  const ls = text.split('\n')
  if (ls[ls.length - 1] === '') ls.pop()
  return ls.map((l) => splitConllLine(l.endsWith('\r') ? l.slice(0, -1) : l))
}
