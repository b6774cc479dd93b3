# Isolates kornia/feature/sift/scale_space.py:167-171: destination = value * k (own tensor), target = destination[..., rows, :],
# target.add_(left, alpha=...) ; return destination  (the tiled path, no out=)
import torch, torch.nn as nn, onnxruntime as ort, numpy as np, io
class M(nn.Module):
    def forward(self, value):
        padded = torch.cat([value[..., :1], value, value[..., -1:]], -1)
        h, w = value.shape[-2:]
        destination = value * 0.5
        for row in range(0, h, 4):
            target = destination[..., row:row + 4, :]
            target.add_(padded[..., row:row + 4, 0:w], alpha=0.25)
            target.add_(padded[..., row:row + 4, 2:w + 2], alpha=0.25)
        return destination
m = M().eval(); x = torch.randn(1, 1, 8, 8); f = io.BytesIO()
torch.onnx.export(m, (x,), f, dynamo=False, input_names=['x'])
s = ort.InferenceSession(f.getvalue()); x2 = torch.randn(1, 1, 8, 8)
print('onnx max diff', np.abs(s.run(None, {'x': x2.numpy()})[0] - m(x2).numpy()).max())
print('onnx diff on example input itself', np.abs(s.run(None, {'x': x.numpy()})[0] - m(x).numpy()).max())
print('onnx output == value*0.5 (adds lost)?', np.abs(s.run(None, {'x': x2.numpy()})[0] - (x2 * 0.5).numpy()).max())
