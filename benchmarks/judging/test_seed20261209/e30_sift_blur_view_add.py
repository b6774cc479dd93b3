# Pattern of kornia/feature/sift/scale_space.py:146-173,212-221: gaussian = new_empty(...); blur writes
# into out=gaussian[:, :, i] with torch.mul(out=) then target = destination[..., r0:r1, :]; target.add_(left, alpha=k)
import torch, torch.nn as nn, onnxruntime as ort, numpy as np, io
K = [0.25, 0.5, 0.25]; R = 1
def blur_axis(value, destination=None):
    padded = torch.cat([value[..., :1], value, value[..., -1:]], -1)
    h, w = value.shape[-2:]
    if destination is None:
        destination = value * K[R]
    else:
        torch.mul(value, K[R], out=destination)
    target = destination[..., 0:h, :]
    for off in range(1, R + 1):
        target.add_(padded[..., :, R - off: R + w - off], alpha=K[R - off])
        target.add_(padded[..., :, R + off: R + w + off], alpha=K[R + off])
    return destination
class M(nn.Module):
    def forward(self, x):
        g = x.new_empty(*x.shape[:2], 3, *x.shape[-2:])
        g[:, :, 0].copy_(x)
        for i in range(1, 3):
            blur_axis(g[:, :, i - 1], out := g[:, :, i])
        return g
m = M().eval()
x = torch.randn(1, 1, 8, 8)
f = io.BytesIO()
try:
    torch.onnx.export(m, (x,), f, dynamo=False, input_names=['x'])
    s = ort.InferenceSession(f.getvalue())
    x2 = torch.randn(1, 1, 8, 8)
    print('onnx max diff', np.abs(s.run(None, {'x': x2.numpy()})[0] - m(x2).numpy()).max())
except Exception as e:
    print('onnx export error:', type(e).__name__, str(e)[:200])
t = torch.jit.trace(m, x); x2 = torch.randn(1, 1, 8, 8)
print('jit.trace max diff', (t(x2) - m(x2)).abs().max().item())
