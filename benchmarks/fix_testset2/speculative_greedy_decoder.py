"""Greedy speculative decoding: a small draft model proposes a few tokens, the target model
checks them in one pass, the agreeing prefix is accepted (its length read back as an int) plus
the target's own token, and this repeats until ``max_new_tokens`` have been produced."""

import torch
from torch import nn


class TinyLM(nn.Module):
    def __init__(self, vocab_size: int, dim: int):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.mix = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.embed(ids).cumsum(dim=0) / torch.arange(1, ids.shape[0] + 1)[:, None]
        return self.head(torch.tanh(self.mix(h)))


class SpeculativeDecoder(nn.Module):
    def __init__(self, vocab_size: int = 7, dim: int = 8, draft_len: int = 3, max_new_tokens: int = 6):
        super().__init__()
        self.target = TinyLM(vocab_size, dim)
        self.draft = TinyLM(vocab_size, dim)
        self.draft_len = draft_len
        self.max_new_tokens = max_new_tokens

    def propose(self, ids: torch.Tensor) -> torch.Tensor:
        proposal = []
        for _ in range(self.draft_len):
            token = self.draft(ids)[-1].argmax()
            proposal.append(token)
            ids = torch.cat([ids, token[None]])
        return torch.stack(proposal)

    def forward(self, prompt: torch.Tensor):
        ids = prompt
        target_len = prompt.shape[0] + self.max_new_tokens
        rounds = 0
        while ids.shape[0] < target_len:
            proposal = self.propose(ids)
            verified = self.target(torch.cat([ids, proposal]))[ids.shape[0] - 1:].argmax(dim=-1)
            accepted = 0
            for i in range(self.draft_len):
                if verified[i].item() != proposal[i].item():
                    break
                accepted += 1
            ids = torch.cat([ids, proposal[:accepted], verified[accepted:accepted + 1]])
            rounds += 1
        return ids[:target_len], torch.tensor(rounds)


def build() -> nn.Module:
    torch.manual_seed(0)
    model = SpeculativeDecoder().eval()
    with torch.no_grad():
        for name, p in model.draft.named_parameters():
            p.copy_(dict(model.target.named_parameters())[name] + 0.1 * torch.randn_like(p))
    return model


def inputs() -> list:
    return [(torch.tensor([1, 4, 2]),), (torch.tensor([5, 0, 3]),), (torch.tensor([6, 6, 6]),)]
