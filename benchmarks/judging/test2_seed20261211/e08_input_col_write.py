# Entry 8: `ys_in_pad[:, 0] = 2` on a forward input, then the input is used (hugging_face_transformers_decoder.py:197)
import io, torch, onnxruntime as ort, numpy as np
class M(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.emb = torch.nn.Embedding(10, 4)
    def forward(s, ys):
        ys[:, 0] = 2
        return s.emb(ys).sum(-1)
m = M().eval()
ex = torch.randint(0, 10, (2, 5)); other = torch.randint(0, 10, (3, 7))
tr = torch.jit.trace(m, ex.clone())
print("jit.trace diff on other input:", (tr(other.clone()) - m(other.clone())).abs().max().item())
f = io.BytesIO()
torch.onnx.export(m, (ex.clone(),), f, dynamo=False, input_names=["ys"], dynamic_axes={"ys": {0: "b", 1: "t"}})
s = ort.InferenceSession(f.getvalue())
o = s.run(None, {"ys": other.numpy()})[0]
print("onnx diff on other input:", np.abs(o - m(other.clone()).detach().numpy()).max())
