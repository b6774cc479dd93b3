# Entry 57: espnet2/spk/encoder/resnet_encoder.py:81 `x = x.permute(0, 2, 1); x = x.unsqueeze_(1)`
# Does the in-place unsqueeze_ on the permuted view change the caller's tensor, and does
# the legacy ONNX export match eager on another input?
import io, torch
import onnxruntime as ort

class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 2, 3, padding=1)
    def forward(self, x):
        x = x.permute(0, 2, 1)
        x = x.unsqueeze_(1)
        return self.conv(x).flatten(1)

m = M().eval()
a = torch.randn(2, 7, 5)
shape_before = a.shape
m(a)
print("caller tensor shape before/after eager call:", tuple(shape_before), tuple(a.shape))
f = io.BytesIO()
torch.onnx.export(m, (torch.randn(2, 7, 5),), f, dynamo=False, input_names=["x"],
                  dynamic_axes={"x": {0: "b", 1: "t"}})
s = ort.InferenceSession(f.getvalue())
b = torch.randn(3, 11, 5)
ref = m(b.clone()).detach().numpy()
out = s.run(None, {"x": b.numpy()})[0]
print("max diff on another input (3,11,5):", abs(ref - out).max())
