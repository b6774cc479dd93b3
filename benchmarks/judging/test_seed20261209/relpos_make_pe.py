# Entries 24/25: speechbrain RelPosEncXL.make_pe writes into views (pe_past = tot_pe[0]) of a
# tensor the function itself created with torch.empty; the base tot_pe is never read again.
# Export with the legacy tracer and compare with eager on another sequence length.
import math, io, torch, numpy as np, onnxruntime as ort
class M(torch.nn.Module):
    def __init__(s, d=8):
        super().__init__(); s.d=d
        s.register_buffer("inv_freq", torch.exp(torch.arange(0,d,2,dtype=torch.float32)*-(math.log(10000.0)/d)))
    def forward(s, x):
        seq_len = x.size(1)
        tot_pe = torch.empty((2, seq_len, s.d))
        pe_past = tot_pe[0]; pe_future = tot_pe[1]
        positions = torch.arange(0, seq_len, dtype=torch.float32).unsqueeze(-1)
        sinusoids = torch.sin(positions * s.inv_freq)
        pe_past[:, 0::2] = sinusoids
        pe_past[:, 1::2] = torch.cos(positions * s.inv_freq)
        pe_future[:, 0::2] = sinusoids
        pe_future[:, 1::2] = torch.cos(-positions * s.inv_freq)
        pe_past = torch.flip(pe_past, (0,)).unsqueeze(0)
        pe_future = pe_future[1:].unsqueeze(0)
        return torch.cat([pe_past, pe_future], dim=1)
m = M().eval()
f = io.BytesIO()
torch.onnx.export(m, (torch.randn(1,5,8),), f, dynamo=False, input_names=["x"], dynamic_axes={"x":{1:"T"}})
s = ort.InferenceSession(f.getvalue())
for T in (5, 9):
    x = torch.randn(1,T,8)
    o = s.run(None, {"x": x.numpy()})[0]
    e = m(x).numpy()
    print(T, o.shape, e.shape, np.abs(o-e).max() if o.shape==e.shape else "shape mismatch")
