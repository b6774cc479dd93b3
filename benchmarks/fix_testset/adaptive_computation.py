"""Adaptive Computation Time (Graves, 2016): a transition is applied until every sequence in the
batch has accumulated enough halting probability."""

import torch
from torch import nn


class AdaptiveComputationTime(nn.Module):
    def __init__(self, hidden_size: int = 8, threshold: float = 0.99, max_hops: int = 6):
        super().__init__()
        self.transition = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.Tanh())
        self.halting = nn.Linear(hidden_size, 1)
        self.threshold = threshold
        self.max_hops = max_hops

    def forward(self, state: torch.Tensor):
        batch = state.size(0)
        halting_probability = state.new_zeros(batch)
        remainders = state.new_zeros(batch)
        n_updates = state.new_zeros(batch)
        previous_state = torch.zeros_like(state)
        while ((halting_probability < self.threshold) & (n_updates < self.max_hops)).any():
            p = torch.sigmoid(self.halting(state)).squeeze(-1)
            still_running = (halting_probability < 1.0).float()
            new_halted = (halting_probability + p * still_running > self.threshold).float() * still_running
            still_running = (halting_probability + p * still_running <= self.threshold).float() * still_running
            halting_probability = halting_probability + p * still_running
            remainders = remainders + new_halted * (1 - halting_probability)
            halting_probability = halting_probability + new_halted * remainders
            n_updates = n_updates + still_running + new_halted
            update_weights = (p * still_running + new_halted * remainders).unsqueeze(-1)
            state = self.transition(state)
            previous_state = state * update_weights + previous_state * (1 - update_weights)
        return previous_state, n_updates + remainders


def build() -> nn.Module:
    torch.manual_seed(0)
    model = AdaptiveComputationTime().eval()
    with torch.no_grad():
        model.halting.weight.fill_(0.5)
        model.halting.bias.fill_(-1.0)
    return model


def inputs() -> list:
    g = torch.Generator().manual_seed(12)
    s = torch.randn(3, 8, generator=g).abs()
    return [(3.0 * s,), (-3.0 * s,), (0.2 * s,)]
