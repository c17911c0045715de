"""Makes fixtures/ner/golden-conlleval.json: hand-built CoNLL inputs and what the official
`conlleval` prints for them, byte for byte. span's port (src/core/metrics/conlleval.ts) is
tested against it (test/core/metrics/conlleval.test.ts).

The official script is not in this repository (it carries no licence). Get it and run:
  git show 58c2011b7949edcde32f28a8448f5cddf87294b5:conlleval.pl | tr -d '\\r' > /tmp/conlleval.pl
    (from github.com/kyzhouhzau/BERT-NER; "version: 2004-01-26", Erik Tjong Kim Sang; the same
     text, apart from their own edits, is in soutsios/pos-tagger-bert-tensorflow@da65334e,
     mariask2/PAL-A-tool-for-Pre-annotation-and-Active-Learning@8a2842ff and
     justinpayan/StackOverflowNER-NS@fdf4c99c; md5 of the LF file 6de94f93180bce6a69f6c9a159458491)
  CONLLEVAL=/tmp/conlleval.pl python3 tools/make-ner-goldens.py
Optional cases on the real data (stored as outputs only) need ../shared/data/conll2003/eng.testa.
"""
import hashlib
import json
import os
import random
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
OUT = os.path.join(ROOT, 'fixtures', 'ner', 'golden-conlleval.json')
MD5 = '6de94f93180bce6a69f6c9a159458491'


def rows(*sentences):
    """Sentences of (token, gold, pred) -> conlleval input, blank line after each sentence."""
    return ''.join(''.join(f'{t} {g} {p}\n' for t, g, p in s) + '\n' for s in sentences)


def seq(tokens, gold, pred):
    return list(zip(tokens.split(), gold.split(), pred.split()))


def hand_cases():
    c = {}
    c['iob1-basic'] = rows(seq('John Smith went to Paris', 'I-PER I-PER O O I-LOC', 'I-PER I-PER O O I-LOC'),
                           seq('EU rejects German call', 'I-ORG O I-MISC O', 'I-ORG O I-LOC O'))
    c['iob1-B-between-one-type'] = rows(seq('a b c d e', 'I-PER I-PER B-PER O I-LOC', 'I-PER I-PER I-PER O I-LOC'),
                                        seq('a b c d', 'I-PER B-PER B-PER O', 'I-PER B-PER B-PER O'),
                                        seq('a b c', 'I-LOC B-LOC I-LOC', 'B-LOC I-LOC I-LOC'))
    c['I-after-O-starts-a-chunk'] = rows(seq('a b c d', 'O I-ORG I-ORG O', 'B-ORG I-ORG I-ORG O'),
                                         seq('a b c d', 'O I-ORG O I-ORG', 'O I-ORG I-ORG I-ORG'))
    c['iob2'] = rows(seq('a b c d e f', 'B-PER I-PER O B-LOC B-LOC I-LOC', 'B-PER I-PER O B-LOC I-LOC I-LOC'))
    c['type-change-ends-a-chunk'] = rows(seq('a b c d', 'I-PER I-ORG I-ORG O', 'I-PER I-PER I-ORG O'))
    c['docstart-lines-are-tokens'] = ('-DOCSTART- O O\n\n' + rows(seq('a b c', 'I-PER O I-LOC', 'I-PER O O'))
                                      + '-DOCSTART- O I-PER\n\n' + rows(seq('d e', 'I-ORG I-ORG', 'I-ORG I-ORG')))
    c['gold-file-layout-5-columns'] = ('-DOCSTART- -X- O O O\n\n' + 'EU NNP I-NP I-ORG I-ORG\nrejects VBZ I-VP O O\n'
                                       'German JJ I-NP I-MISC I-MISC\ncall NN I-NP O O\n. . O O O\n\n')
    c['boundary-lines-X'] = 'a I-PER I-PER\n-X- O O\nb I-PER I-PER\n\nc I-PER O\n'
    c['chunk-at-end-without-blank'] = 'a O O\nb I-PER I-PER\nc I-PER I-PER'
    c['hyphen-in-type-and-untyped-tags'] = rows(seq('a b c d e f', 'B-ORG-X I-ORG-X O B I O', 'B-ORG-X I-ORG-X O B B O'))
    c['type-0-and-empty-types'] = rows(seq('a b c d', 'B-0 O I O', 'B-0 O I I'))
    c['ioe-and-brackets'] = rows(seq('a b c d e f', 'I-NP E-NP O [-NP ]-NP O', 'I-NP E-NP E-NP [-NP ]-NP O'))
    c['no-entities'] = rows(seq('a b c', 'O O O', 'O O O'))
    c['only-predicted-entities'] = rows(seq('a b c', 'O O O', 'I-PER O I-LOC'))
    c['empty-input'] = ''
    c['half-even-tie-3.125'] = rows(seq(' '.join('t' * 1 for _ in range(64)), ' '.join(['I-PER'] + ['O'] * 63),
                                         ' '.join(['I-PER', 'O'] + ['B-PER' if i % 2 == 0 else 'O' for i in range(62)])))
    return c


def random_case(rng, n_sent, scheme):
    types = ['PER', 'LOC', 'ORG', 'MISC']
    out = []
    for _ in range(n_sent):
        n = rng.randint(1, 12)
        gold = random_tags(rng, n, types, scheme)
        pred = [g if rng.random() < 0.7 else rng.choice(['O', 'B-' + rng.choice(types), 'I-' + rng.choice(types)]) for g in gold]
        out.append([(f'w{i}', g, p) for i, (g, p) in enumerate(zip(gold, pred))])
    return rows(*out)


def random_tags(rng, n, types, scheme):
    tags, prev = [], 'O'
    for _ in range(n):
        if rng.random() < 0.5:
            tags.append('O')
        else:
            t = rng.choice(types)
            if scheme == 'iob2':
                tag = ('I-' if prev[2:] == t and rng.random() < 0.6 else 'B-') + t
            else:
                tag = ('B-' if prev[2:] == t and rng.random() < 0.4 else 'I-') + t
            tags.append(tag)
        prev = tags[-1]
    return tags


def real_case(path):
    """eng.testa with every 7th tag replaced: only the output is stored, the input is rebuilt."""
    lines = []
    with open(path, encoding='utf-8') as f:
        for i, line in enumerate(f):
            line = line.rstrip('\n')
            if not line:
                lines.append('')
                continue
            fields = line.split(' ')
            pred = fields[-1] if i % 7 else ('O' if fields[-1] != 'O' else 'I-MISC')
            lines.append(' '.join(fields + [pred]))
    return '\n'.join(lines) + '\n'


def run(script, text):
    p = subprocess.run(['perl', script], input=text.encode('utf-8'), capture_output=True, check=False)
    return {'stdout': p.stdout.decode('utf-8'), 'exit': p.returncode, 'stderr': p.stderr.decode('utf-8')}


def main():
    script = os.environ.get('CONLLEVAL')
    if not script or hashlib.md5(open(script, 'rb').read()).hexdigest() != MD5:
        sys.exit('set CONLLEVAL to the official conlleval.pl (md5 %s); see this file\'s docstring' % MD5)
    cases = [{'name': k, 'input': v, **run(script, v)} for k, v in hand_cases().items()]
    rng = random.Random(15)
    for i in range(8):
        text = random_case(rng, 30, 'iob2' if i % 2 else 'iob1')
        cases.append({'name': f'random-{i}', 'input': text, **run(script, text)})
    bad = 'a I-PER I-PER\nb I-PER\n'
    cases.append({'name': 'error-feature-count', 'input': bad, **run(script, bad)})
    real = os.path.join(ROOT, '..', 'shared', 'data', 'conll2003', 'eng.testa')
    out = {'note': 'Made by tools/make-ner-goldens.py running the official conlleval.pl (2004-01-26); do not edit.', 'cases': cases}
    if os.path.exists(real):
        out['real'] = {'name': 'eng.testa, every 7th line\'s tag flipped (i % 7 == 0)', **run(script, real_case(real))}
    with open(OUT, 'w', encoding='utf-8') as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write('\n')


if __name__ == '__main__':
    main()
