// Synthetic CoNLL-2012 documents for the coreference tests.

/** A LitBank-like document (13 columns, '' for no mention) of `n` sentence pairs "John saw Mary . He liked her .", names and verbs varied. */
export function litbankDoc(name: string, n: number): string {
  const rows: string[] = [`#begin document (${name}); part 0`]
  const coref = ['(0)', '', '(1)', '', '(0)', '', '(1)', '']
  for (let s = 0; s < n; s++) {
    const words = [
      ['John', 'Peter', 'Paul'][s % 3],
      ['saw', 'met', 'called'][s % 3],
      ['Mary', 'Anna', 'Sue'][s % 3],
      '.',
      'He',
      ['liked', 'knew', 'helped'][s % 3],
      'her',
      '.',
    ]
    for (let h = 0; h < 2; h++) {
      for (let w = 0; w < 4; w++) rows.push([name, '0', String(w), words[4 * h + w], '_', '_', '_', '_', '_', '_', '_', '_', coref[4 * h + w]].join('\t'))
      rows.push('')
    }
  }
  rows.push('#end document')
  return rows.join('\n') + '\n'
}
