"""fixtures/torch/legacy-views/pytorch_model.bin: zip-f32's state dict in the legacy torch.save stream;
fixtures/torch/slices/{zip,legacy}.bin: tensors that are part of a storage no other tensor uses.

Run with the interop venv's Python (PyTorch 2.13: `bash tools/interop-env.sh` prints its path):

    python tools/make-torch-legacy-views.py

fixtures/torch/zip-f32 (tools/make-torch-fixtures.py) holds the shapes a released checkpoint may
have: the decoder weight tied to the word embeddings (one storage), the decoder bias an alias of
cls.predictions.bias, q/k/v weights as views at offsets into one [3H, H] storage, and transposed
(non-contiguous) FFN input weights. torch.load keeps all of that (one storage per shared storage,
the views' offsets and strides), and torch.save(..., _use_new_zipfile_serialization=False) writes
it again as the pre-1.6 stream (torch/serialization.py `_legacy_save`): the same tensors, so
test/core/model/torch/torch-load-read.test.ts checks span's storage-by-storage reader on legacy
views and shared storages against the zip file's values.

slices: torch.save writes a tensor's whole storage, so a slice saved alone (`w[:4]`, `w[6:]`, a row
of a matrix) is a view, at an offset or shorter, into a storage that it alone uses; the reader must
copy it out rather than take the storage as it is. Values are arange's, so the test knows them.
The legacy stream names its storages by Python object ids, so its bytes differ from run to run (the
tensors do not).
"""
import collections
import os

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures', 'torch')


def main():
    sd = torch.load(os.path.join(ROOT, 'zip-f32', 'pytorch_model.bin'), weights_only=True)
    q = sd['bert.encoder.layer.0.attention.self.query.weight']
    k = sd['bert.encoder.layer.0.attention.self.key.weight']
    assert q.untyped_storage().data_ptr() == k.untyped_storage().data_ptr() and k.storage_offset() > 0
    assert not sd['bert.encoder.layer.0.intermediate.dense.weight'].is_contiguous()
    out = os.path.join(ROOT, 'legacy-views')
    os.makedirs(out, exist_ok=True)
    torch.save(sd, os.path.join(out, 'pytorch_model.bin'), _use_new_zipfile_serialization=False)
    slices = collections.OrderedDict()
    slices['whole'] = torch.arange(5, dtype=torch.float32)  # all of its storage: taken as it is
    slices['head'] = torch.arange(10, dtype=torch.float32)[:4]  # offset 0, storage of 10
    slices['tail'] = torch.arange(10, dtype=torch.float32)[6:]  # offset 6
    slices['row'] = torch.arange(12, dtype=torch.float32).view(3, 4)[1]  # offset 4, contiguous
    slices['ids'] = torch.arange(6, dtype=torch.int64)[1:5]
    for t in slices.values():
        assert t.is_contiguous()
    out = os.path.join(ROOT, 'slices')
    os.makedirs(out, exist_ok=True)
    torch.save(slices, os.path.join(out, 'zip.bin'))
    torch.save(slices, os.path.join(out, 'legacy.bin'), _use_new_zipfile_serialization=False)


if __name__ == '__main__':
    main()
