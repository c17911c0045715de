// Sentence breaks from punctuation for documents without any (OntoGUM): candidate spans and
// segment cuts follow them.
import {describe, expect, it} from 'vitest'
import {punctuationSentences, sentenceIds} from '../../../src/core/tasks/coref/sentences.js'

describe('punctuation sentences', () => {
  it('a sentence ends after a run of . ! ? and the closing quotes or brackets after it', () => {
    const w = ['He', 'said', '"', 'Hi', '!', '"', 'Then', 'left', '.', '.', '.', 'Why', '?', ')', 'Ok']
    expect(punctuationSentences(w)).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 3])
  })

  it("a document's own breaks are kept; one sentence of several words gets punctuation's", () => {
    expect(sentenceIds(['A', '.', 'B'], [0, 1, 1])).toEqual([0, 1, 1])
    expect(sentenceIds(['A', '.', 'B'], [0, 0, 0])).toEqual([0, 0, 1])
    expect(sentenceIds(['A'], [0])).toEqual([0])
  })
})
