"""`dynamo=False` on module classes imported from other files of the tree (UT402): the
multi-file classifier, whose imported block branches on data, is reported with the
block's site; the hazard-free MLP is not. The import paths resolve in the scanned tree,
and a change to those files invalidates this file's cached result."""

import torch

from corpora.mlp_classifier import MLPClassifier
from corpora.multi_file.model import GatedClassifier


def export_gated():
    model = GatedClassifier().eval()
    torch.onnx.export(model, (torch.randn(2, 8),), "gated.onnx", dynamo=False)  # expect: UT402


def export_mlp():
    model = MLPClassifier().eval()
    torch.onnx.export(model, (torch.randn(2, 8),), "mlp.onnx", dynamo=False)


if __name__ == "__main__":
    export_gated()
    export_mlp()
