/**
 * The official CoNLL-2012 coreference scorer's numbers (reference-coreference-scorers v8.01
 * @f49f3f8a, lib/CorScorer.pm, Score and ScoreBLANC) for a key and a response: documents are
 * matched by key (a key document missing from the response is scored against no mentions; a
 * response document the key lacks is ignored; a key repeated in one file means its last
 * document), each metric's numerators and denominators are summed over documents, and mention
 * identification is counted as IdentifMentions counts it. The scorer refuses a response with
 * more than 10 repeated mentions (`repeated` says how many were dropped; the caller refuses).
 */
import {blancCounts, type BlancCounts} from './blanc.js'
import {bcub} from './bcub.js'
import {ceaf} from './ceaf.js'
import {addCounts, type RPCounts, rpf, zeroCounts} from './counts.js'
import {identifyMentions, type Span} from './mentions.js'
import {muc} from './muc.js'
import {pushAll} from '../../util/arrays.js'

export interface CorefDocument {
  key: string
  clusters: readonly (readonly Span[])[]
}

/** One document's counts, or the sums over documents. */
export interface CorefCounts {
  mentions: RPCounts
  muc: RPCounts
  bcub: RPCounts
  ceafm: RPCounts
  ceafe: RPCounts
  blanc: BlancCounts
  /** response mentions dropped as repeated */
  repeated: number
  /** the scorer's repeated-mention lines, document after document */
  notes: string[]
}

export interface CorefResult extends CorefCounts {
  /** key documents scored, in the key's order */
  documents: string[]
  /** key documents the response lacks (scored as empty) */
  missing: string[]
  /** per key document, its own counts */
  perDocument: Map<string, CorefCounts>
}

/** The scorer's counts for one document. */
export function scoreDocument(key: readonly (readonly Span[])[], response: readonly (readonly Span[])[]): CorefCounts {
  const d = identifyMentions(key, response)
  return {
    mentions: {recallNum: d.exact, recallDen: d.keyMentions, precisionNum: d.exact, precisionDen: d.responseMentions},
    muc: muc(d.key, d.response),
    bcub: bcub(d.key, d.response),
    ceafm: ceaf(d.key, d.response, 'mention'),
    ceafe: ceaf(d.key, d.response, 'entity'),
    blanc: blancCounts(d.key, d.response),
    repeated: d.repeated,
    notes: d.notes,
  }
}

const emptyCounts = (): CorefCounts => ({
  mentions: zeroCounts(),
  muc: zeroCounts(),
  bcub: zeroCounts(),
  ceafm: zeroCounts(),
  ceafe: zeroCounts(),
  blanc: {cCorrect: 0, cKey: 0, cResponse: 0, nCorrect: 0, nKey: 0, nResponse: 0},
  repeated: 0,
  notes: [],
})

function addAll(into: CorefCounts, c: CorefCounts): void {
  for (const m of ['mentions', 'muc', 'bcub', 'ceafm', 'ceafe'] as const) addCounts(into[m], c[m])
  for (const k of Object.keys(into.blanc) as (keyof BlancCounts)[]) into.blanc[k] += c.blanc[k]
  into.repeated += c.repeated
  pushAll(into.notes, c.notes)
}

/** Last document per key, in the order keys first appear. */
function byKey(docs: readonly CorefDocument[]): Map<string, CorefDocument> {
  const map = new Map<string, CorefDocument>()
  for (const d of docs) map.set(d.key, d)
  return map
}

/** Every key document scored against the response document of the same key. */
export function scoreCoref(key: readonly CorefDocument[], response: readonly CorefDocument[]): CorefResult {
  const responses = byKey(response)
  const total = emptyCounts()
  const perDocument = new Map<string, CorefCounts>()
  const missing: string[] = []
  for (const [name, doc] of byKey(key)) {
    const r = responses.get(name)
    if (r === undefined) missing.push(name)
    const c = scoreDocument(doc.clusters, r?.clusters ?? [])
    perDocument.set(name, c)
    addAll(total, c)
  }
  return {...total, documents: [...perDocument.keys()], missing, perDocument}
}

/** The CoNLL-2012 F1: the mean of the MUC, B³ and CEAFe F1 (fractions). */
export const conllF1 = (c: CorefCounts): number => (rpf(c.muc).f1 + rpf(c.bcub).f1 + rpf(c.ceafe).f1) / 3
