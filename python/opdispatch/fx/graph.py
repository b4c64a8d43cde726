"""torch.fx's Graph and Node, read from the C++ graph (opd::fx::Graph)."""

import operator


def _target_of(op, target):
    # An operator node's target is its OpOverload (opdispatch.ops.aten.add.Tensor), as torch's
    # make_fx records it; a getitem node's is operator.getitem; the others' is their name.
    if op != "call_function":
        return target
    if target == "getitem":
        return operator.getitem
    import opdispatch

    qualified, _, overload = target.partition(".")
    ns, _, name = qualified.partition("::")
    return getattr(getattr(getattr(opdispatch.ops, ns), name), overload or "default")


class Node:
    """One node: op is "placeholder", "get_attr", "call_function" or "output"; args and
    kwargs refer to earlier nodes as Node objects (a placeholder's args hold its default)."""

    __slots__ = ("graph", "op", "name", "target", "args", "kwargs")

    def __init__(self, graph, op, name, target, args, kwargs):
        self.graph = graph
        self.op = op
        self.name = name
        self.target = _target_of(op, target)
        self.args = args
        self.kwargs = kwargs

    @property
    def users(self):
        """The nodes that use this one, in order (torch.fx's node.users, as a dict)."""

        def refers(value):
            if value is self:
                return True
            if isinstance(value, (list, tuple)):
                return any(refers(v) for v in value)
            return False

        return {n: None for n in self.graph.nodes
                if refers(n.args) or refers(list(n.kwargs.values()))}

    def __repr__(self):
        return self.name


class Graph:
    """The nodes of a captured graph, in order (torch.fx.Graph's .nodes), over the C++ graph."""

    def __init__(self, cgraph):
        self._c = cgraph
        nodes = []
        for i in range(len(cgraph)):
            op, name, target, args, kwargs = cgraph.node_info(i, nodes.__getitem__)
            nodes.append(Node(self, op, name, target, args, kwargs))
        self._nodes = nodes

    @property
    def nodes(self):
        return list(self._nodes)

    def python_code(self):
        return self._c.code

    def __str__(self):
        # torch.fx.Graph's str: one line per node.
        lines = ["graph():"]
        for n in self._nodes:
            target = n.target if isinstance(n.target, str) else getattr(
                n.target, "__name__", str(n.target))
            if n.op == "call_function" and n.target is not operator.getitem:
                target = str(n.target)
            lines.append(f"    %{n.name} : [#users={len(n.users)}] = "
                         f"{n.op}[target={target}](args = {_fmt(n.args)}, kwargs = "
                         f"{_fmt(n.kwargs)})")
        return "\n".join(lines)


def _fmt(value):
    if isinstance(value, Node):
        return f"%{value.name}"
    if isinstance(value, tuple):
        inner = ", ".join(_fmt(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_fmt(v)}" for k, v in value.items()) + "}"
    return repr(value)
