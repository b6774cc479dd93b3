"""The graph builder's parts, one concern per module; `lowering.graph` assembles them
into `GraphBuilder` and is what the rest of untrace imports (its docstring is the API).

- `dtypes`: torch dtypes and ONNX element types, the dtype categories;
- `value`: `Value` (name, dtype, shape) and its ONNX type protos;
- `dims`: shape arithmetic over int / symbolic / unknown dims;
- `protos`: tensors as ONNX protos, subgraphs of a node, pruning, the checked model;
- `emission`: appending one node (`op`);
- `inference`: a node's output dtypes and shapes (ONNX inference, If / Loop);
- `known_contents`: the tracked contents of small int64 shape values;
- `constants`: constants and initializers;
- `promotion`: torch's dtype promotion, operands made Values of one dtype;
- `shapes`: shapes as graph values, Unsqueeze / Squeeze, Reduce*.
"""
