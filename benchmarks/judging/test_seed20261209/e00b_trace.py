# same as e00 with torch.jit.trace
import torch, torch.nn as nn
exec(open('e00_writeto.py').read().split('m = Up().eval()')[0].split('import sys')[0])
m = Up().eval()
t = torch.jit.trace(m, torch.randn(1,4,2,3,3))
x2 = torch.randn(2,4,3,5,5)
print('jit.trace max diff', (t(x2)-m(x2)).abs().max().item())
print(t.graph)
