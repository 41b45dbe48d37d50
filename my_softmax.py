import numpy as np
import opval

def my_softmax(x, *, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)

result = opval.check("softmax", my_softmax, contracts="f32", tag="regression")
print(result)           # my_softmax (softmax): 18 passed, 0 failed, 87 skipped
result.assert_ok()      # raises with the worst elements and the repro call if a case failed
