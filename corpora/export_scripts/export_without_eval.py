"""Export scripts that do and do not put the module in eval mode before exporting (UT401)."""

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, features=16, classes=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.1))
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        return self.head(self.body(x))


class Exportable(nn.Module):
    """A wrapper with no submodule of its own: the wrapped model keeps its own mode."""

    def __init__(self, model, scale=1.0):
        super().__init__()
        self.model = model
        self.scale = scale

    def forward(self, x):
        return self.model(x) * self.scale


def load(path):
    model = Classifier()
    model.load_state_dict(torch.load(path, weights_only=True))
    return model


def export_fresh(path):
    model = Classifier()
    model.load_state_dict(torch.load(path, weights_only=True))
    torch.onnx.export(model, (torch.randn(2, 16),), "fresh.onnx")  # expect: UT401


def export_evaluated(path):
    model = Classifier()
    model.load_state_dict(torch.load(path, weights_only=True))
    model.eval()
    torch.onnx.export(model, (torch.randn(2, 16),), "evaluated.onnx")


def export_chained():
    model = Classifier().to("cpu").eval()
    torch.export.export(model, (torch.randn(2, 16),))


def export_on_one_path(calibrate):
    model = Classifier()
    if calibrate:
        model.train(False)
    torch.export.export(model, (torch.randn(2, 16),))  # expect: UT401


def export_on_both_paths(half):
    model = Classifier()
    if half:
        model.eval()
        model = model.half()
    else:
        model.train(mode=False)
    torch.onnx.export(model, (torch.randn(2, 16),), "both.onnx")


def export_after_early_return(skip):
    model = Classifier()
    if skip:
        return None
    with torch.no_grad():
        model.eval()
        torch.onnx.export(model, (torch.randn(2, 16),), "guarded.onnx")
    return model


def export_retrained():
    model = Classifier().eval()
    model.train()
    torch.onnx.export(model, (torch.randn(2, 16),), "retrained.onnx")  # expect: UT401


def export_inline():
    torch.export.export(Classifier(), (torch.randn(2, 16),))  # expect: UT401
    torch.export.export(Classifier().eval(), (torch.randn(2, 16),))


def export_loaded(path):
    # Whatever `load` did to the mode is not known here: not reported.
    model = load(path)
    torch.onnx.export(model, (torch.randn(2, 16),), "loaded.onnx")


def export_given(model):
    torch.onnx.export(model, (torch.randn(2, 16),), "given.onnx")


def export_wrapped(model):
    # Only the wrapper is in training mode, and its flag changes nothing.
    torch.export.export(Exportable(model), (torch.randn(2, 16),))


def export_wrapped_fresh():
    model = Classifier()
    wrapper = Exportable(model)
    torch.export.export(wrapper, (torch.randn(2, 16),))  # expect: UT401
    torch.export.export(Exportable(Classifier()), (torch.randn(2, 16),))  # expect: UT401


def export_wrapped_retrained(model):
    wrapper = Exportable(model).train()  # `.train()` switches the wrapped model too
    torch.export.export(wrapper, (torch.randn(2, 16),))  # expect: UT401


if __name__ == "__main__":
    export_fresh("classifier.pt")
    net = Classifier()
    torch.onnx.export(net, (torch.randn(2, 16),), "main.onnx")  # expect: UT401
