# Entries 26/27: speechbrain RelPosMHAXL/RoPEMHA branch
#   if (query is key or torch.equal(query, key)) and (key is value or torch.equal(key, value)): fused proj
#   else: split proj
# Both branches compute the same projections when q==k==v. Trace (a) self-attention (same object) and
# (b) cross-attention (distinct tensors), then compare traced vs eager on other inputs.
import torch
class Att(torch.nn.Module):
    def __init__(s, d=8):
        super().__init__(); s.w = torch.nn.Parameter(torch.randn(3*d, d))
    def forward(s, q, k, v):
        if (q is k or torch.equal(q, k)) and (k is v or torch.equal(k, v)):
            q2, k2, v2 = torch.nn.functional.linear(q, s.w).chunk(3, dim=-1)
        else:
            qw, kw, vw = s.w.chunk(3, dim=0)
            q2, k2, v2 = [torch.nn.functional.linear(t, w) for t, w in ((q, qw), (k, kw), (v, vw))]
        return (q2 @ k2.transpose(-1, -2)).softmax(-1) @ v2
class SelfBlock(torch.nn.Module):   # how Conformer calls it: mha(x, x, x)
    def __init__(s): super().__init__(); s.a = Att()
    def forward(s, x): return s.a(x, x, x)
class CrossBlock(torch.nn.Module):  # how the decoder calls it: mha(tgt, memory, memory)
    def __init__(s): super().__init__(); s.a = Att()
    def forward(s, t, m): return s.a(t, m, m)
torch.manual_seed(0)
sb = SelfBlock().eval(); tr = torch.jit.trace(sb, (torch.randn(2, 5, 8),))
x = torch.randn(2, 5, 8); print("self-attn traced==eager:", torch.allclose(tr(x), sb(x), atol=1e-5))
cb = CrossBlock().eval(); tr = torch.jit.trace(cb, (torch.randn(2, 5, 8), torch.randn(2, 5, 8)))
t, m = torch.randn(2, 5, 8), torch.randn(2, 5, 8)
print("cross-attn, distinct inputs traced==eager:", torch.allclose(tr(t, m), cb(t, m), atol=1e-5))
print("cross-attn, equal inputs (eager takes fused branch) traced==eager:", torch.allclose(tr(t, t.clone()), cb(t, t.clone()), atol=1e-5))
