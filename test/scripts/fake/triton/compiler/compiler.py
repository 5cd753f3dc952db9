# Minimal stand-in for triton.compiler.compiler.CompiledKernel (Triton 3.x shape).
class _Src:
    def __init__(self, signature):
        self.signature = signature


class CompiledKernel:
    def __init__(self, name, signature):
        self.name = name
        self.src = _Src(signature)
