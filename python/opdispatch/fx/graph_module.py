"""torch.fx's GraphModule over the C++ graph: .graph, .code, print_readable(), and calling it
runs the recorded operators again through the dispatcher (opd::fx::Graph::run)."""

from .graph import Graph


class GraphModule:
    """What make_fx returns. The tensors the program used that no input or operator made are
    attributes (`_tensor_constant0`), as in torch."""

    def __init__(self, cgraph, class_name="GraphModule"):
        self._c = cgraph
        self._class_name = class_name
        self.graph = Graph(cgraph)
        for name, tensor in cgraph.attributes().items():
            setattr(self, name, tensor)

    @property
    def code(self):
        return self._c.code

    def print_readable(self, print_output=True):
        text = self._c.readable(self._class_name)
        if print_output:
            print(text)
        return text

    def forward(self, *args):
        if self._c.pytree_arguments:
            from .experimental.proxy_tensor import tree_leaves

            args = tree_leaves(list(args))
        return self._c.run(*args)

    __call__ = forward

    def __str__(self):
        return f"{self._class_name}()\n\n\n{self.code}"
