# Pattern of diffusers autoencoder_kl_kvae_video.py:80 / :469-470: caller makes to=empty_like, conv writes into it with write_to[...]=...
import torch, torch.nn as nn, onnxruntime as ort, numpy as np, io
class Safe(nn.Conv3d):
    def forward(self, input, write_to=None):
        if write_to is None: return super().forward(input)
        write_to[...] = super().forward(input)
        return write_to
class Up(nn.Module):
    def __init__(s):
        super().__init__(); s.linear = Safe(4,4,kernel_size=1)
    def forward(s, x):
        to = torch.empty_like(x)
        return s.linear(x, write_to=to) + 1
import sys; OPS=int(sys.argv[1]) if len(sys.argv)>1 else 17
m = Up().eval()
x = torch.randn(1,4,2,3,3); f = io.BytesIO()
torch.onnx.export(m, (x,), f, dynamo=False, opset_version=OPS, input_names=['x'], dynamic_axes={'x':{0:'b',2:'t',3:'h',4:'w'}})
s = ort.InferenceSession(f.getvalue())
x2 = torch.randn(2,4,3,5,5)
print('max diff', np.abs(s.run(None, {'x': x2.numpy()})[0] - m(x2).detach().numpy()).max())
