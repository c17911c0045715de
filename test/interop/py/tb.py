"""TensorBoard's side of test/interop/tensorboard.test.ts (issue 34): what its EventAccumulator, the
loader behind TensorBoard's scalar dashboard, reads from an event-file folder.

    python tb.py DIR   →  {"scalars": {tag: [[step, value], ...]}, "other": {kind: [tags]}, "version": ...}

"other" lists every non-scalar kind the accumulator found (images, histograms, tensors, graphs, ...),
which span never writes. A record it cannot read (a bad CRC, a torn record) ends its reading there.
"""
import json
import sys

import tensorboard
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator


def main():
    acc = EventAccumulator(sys.argv[1], size_guidance={'scalars': 0, 'tensors': 0})
    acc.Reload()
    tags = acc.Tags()
    scalars = {t: [[e.step, e.value] for e in acc.Scalars(t)] for t in tags['scalars']}
    other = {k: v for k, v in tags.items() if k != 'scalars' and v not in (False, [], None)}
    json.dump({'scalars': scalars, 'other': other, 'version': tensorboard.__version__}, sys.stdout)


if __name__ == '__main__':
    main()
