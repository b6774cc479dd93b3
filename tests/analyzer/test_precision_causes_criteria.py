"""A `forward` that is a training criterion (issue 23, false alarms cause 1, in the form
the second held-out set showed most): it takes ground truth and returns losses with the
statistics of a training step (`loss.item()`, asserts on target lengths), and the model
runs inference through another method, so no export runs it (`reach/criteria.py`). Its
hazards are quiet; the submodules its inference path runs are still checked as
themselves, and a model `forward` that returns predictions and a loss only when targets
are given stays an export entry, its prediction hazards reported. In the form of
`test_precision_causes`: the exact set of (line, code) is asserted."""

from __future__ import annotations

import pytest

from tests.analyzer.marked_cases import MarkedCases

CASES = MarkedCases()
case = CASES.add

HEADER = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            if x.sum() > 0:  # expect: UT101
                x = -x
            return self.lin(x)


    class DurationLoss(nn.Module):
        def forward(self, d_outs, ds):
            return F.mse_loss(d_outs, ds.float())
"""

case("criterion-forward-with-stats", HEADER + """
    from elsewhere.losses import FeatureMatchLoss


    def gather(data, device):
        return data


    class Synthesizer(nn.Module):
        def __init__(self):
            super().__init__()
            self.decoder = Decoder()
            self.criterion = nn.L1Loss()
            self.duration_criterion = DurationLoss()
            self.feature_criterion = FeatureMatchLoss()

        def forward(self, text, feats, feats_lengths, durations):
            assert feats_lengths.ge(2).all()
            ds = durations.clone()
            while ds.sum() > feats_lengths.sum():
                ds[-1] -= 1
            outs = self.decoder(text)
            l1 = self.criterion(outs, feats)
            dur = self.duration_criterion(outs.mean(-1), ds)
            loss = l1 + dur + self.feature_criterion(outs, feats)
            stats = dict(l1=l1.item(), dur=dur.item(), frames=int(feats_lengths.max()))
            loss, stats, weight = gather((loss, stats, text.size(0)), loss.device)
            return loss, stats, weight

        def inference(self, text):
            return self.decoder(text)
""")

case("criterion-dispatching-to-its-steps", HEADER + """

    class Adversarial(nn.Module):
        def __init__(self):
            super().__init__()
            self.generator = Decoder()
            self.discriminator = nn.Linear(4, 1)

        def forward(self, x, target, forward_generator=True):
            if forward_generator:
                return self._generator_step(x, target)
            return self._discriminator_step(x, target)

        def _generator_step(self, x, target):
            if target.abs().max() > 1:
                target = target.clamp(-1, 1)
            fake = self.generator(x)
            losses = []
            losses.append(F.l1_loss(fake, target))
            losses.append(F.binary_cross_entropy_with_logits(self.discriminator(fake), torch.ones_like(fake[..., :1])))
            weighted = {"first": losses[0], "second": losses[1]}
            loss = sum(self.weigh(weighted).values())
            stats = {"loss": loss.item(), "first": losses[0].item()}
            return {"loss": loss, "stats": stats, "optim_idx": 0}

        def weigh(self, named):
            return {k: v * 0.5 for k, v in named.items()}

        def _discriminator_step(self, x, target):
            self.loss = None
            real = self.discriminator(target)
            if real.mean() > 0:
                real = real - real.mean()
            self.loss = F.binary_cross_entropy_with_logits(real, torch.ones_like(real))
            if float(self.loss) > 1e3:
                print("diverged")
            return self.loss
""")

case("criterion-of-a-loss-with-accuracies", HEADER + """

    class TokenLoss(nn.Module):
        def forward(self, logits, ys):
            ce = F.cross_entropy(logits, ys)
            acc = (logits.argmax(-1) == ys).float().mean()
            return ce, acc


    class Recognizer(nn.Module):
        def __init__(self):
            super().__init__()
            self.decoder = Decoder()
            self.criterion = TokenLoss()

        def forward(self, x, ys):
            if ys.max() >= 4:
                raise ValueError("label out of range")
            ce, acc = self.criterion(self.decoder(x), ys)
            return ce, {"ce": ce.item(), "acc": float(acc)}

        def recognize(self, x):
            return self.decoder(x).argmax(-1)
""")

case("predictions-with-an-optional-loss", HEADER + """

    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.decoder = Decoder()

        def forward(self, x, labels=None):
            logits = self.decoder(x)
            top = logits.max().item()  # expect: UT201
            loss = None
            if labels is not None:
                loss = F.cross_entropy(logits, labels)
                print(loss.item())
            return loss, logits, top


    class ReturnsItsLossFirst(nn.Module):
        def __init__(self):
            super().__init__()
            self.decoder = Decoder()

        def forward(self, x, y):
            logits = self.decoder(x)
            n = int(y.sum())  # expect: UT201
            loss = F.cross_entropy(logits, y)
            return loss, logits[:n]
""")


@pytest.mark.parametrize("name", CASES.names())
def test_cause(name):
    CASES.check(name)
