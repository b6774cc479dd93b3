# Entry 22: DepthwiseConvolution.forward does `x = x.transpose(1, 2); x.masked_fill_(mask...)`
# (espnet2/asr_transducer/encoder/modules/convolution.py:253-256), mutating the caller's x_concat,
# which EBranchformer.forward then reads again: `self.merge_proj(x_concat + x_depth)` (ebranchformer.py:146-149).
import io, torch, onnxruntime as ort, numpy as np
class DW(torch.nn.Module):
    def __init__(s, c):
        super().__init__(); s.conv = torch.nn.Conv1d(c, c, 3, padding=1, groups=c)
    def forward(s, x, mask):
        x = x.transpose(1, 2)
        x.masked_fill_(mask.unsqueeze(1).expand_as(x), 0.0)
        return s.conv(x).transpose(1, 2)
class Block(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.a = torch.nn.Linear(4, 4); s.dw = DW(8); s.m = torch.nn.Linear(8, 4)
    def forward(s, x, lens):
        mask = torch.arange(x.size(1))[None, :] >= lens[:, None]  # padding mask from lengths
        x_concat = torch.cat([s.a(x), s.a(x) * 2], dim=-1)
        x_depth = s.dw(x_concat, mask)
        return s.m(x_concat + x_depth)
m = Block().eval()
ex = (torch.randn(2, 6, 4), torch.tensor([6, 4]))
other = (torch.randn(3, 9, 4), torch.tensor([2, 9, 5]))
with torch.no_grad():
    ref = m(*other)
    tr = torch.jit.trace(m, ex)
    print("jit.trace diff on other input:", (tr(*other) - ref).abs().max().item())
f = io.BytesIO()
torch.onnx.export(m, ex, f, dynamo=False, input_names=["x", "lens"],
                  dynamic_axes={"x": {0: "b", 1: "t"}, "lens": {0: "b"}})
s = ort.InferenceSession(f.getvalue())
o = s.run(None, {"x": other[0].numpy(), "lens": other[1].numpy()})[0]
print("onnx diff on other input:", np.abs(o - ref.numpy()).max())
# what eager would give without the caller-visible mutation
with torch.no_grad():
    xc = torch.cat([m.a(other[0]), m.a(other[0]) * 2], -1)
    mask = torch.arange(9)[None] >= other[1][:, None]
    nomut = m.m(xc + m.dw(xc.clone(), mask))
print("onnx vs eager-without-caller-mutation:", np.abs(o - nomut.numpy()).max())
