# Pattern of kornia/feature/loftr/utils/coarse_matching.py:216-228 (sinkhorn, eval, skh_prefilter):
# conf = assign[:, :-1, :-1] (a view); conf[mask3d] = 0; then conf used, and optionally assign.clone() (sparse_spvs).
import torch, torch.nn as nn, onnxruntime as ort, numpy as np, io, sys
class M(nn.Module):
    def __init__(s, with_bin): super().__init__(); s.with_bin = with_bin
    def forward(s, sim):
        N, L1, S1 = sim.shape; L, S = L1 - 1, S1 - 1
        assign = sim.exp()
        conf = assign[:, :-1, :-1]
        f0 = (assign.max(dim=2)[1] == S)[:, :-1]
        f1 = (assign.max(dim=1)[1] == L)[:, :-1]
        conf[f0[..., None].repeat(1, 1, S)] = 0
        conf[f1[:, None].repeat(1, L, 1)] = 0
        if s.with_bin: return conf * 1, assign.clone()
        return conf * 1
torch.manual_seed(0)
for wb in (False, True):
    m = M(wb).eval()
    x = torch.randn(1, 6, 7); x[0, 0, -1] = 10  # some rows pick dustbin
    f = io.BytesIO()
    torch.onnx.export(m, (x,), f, dynamo=False, input_names=['x'])
    s = ort.InferenceSession(f.getvalue())
    for trial in range(3):
        x2 = torch.randn(1, 6, 7); x2[0, trial, -1] = 10; x2[0, -1, trial] = 10
        ref = m(x2); ref = ref if isinstance(ref, tuple) else (ref,)
        out = s.run(None, {'x': x2.numpy()})
        print('with_bin', wb, 'trial', trial, [float(np.abs(o - r.numpy()).max()) for o, r in zip(out, ref)])
