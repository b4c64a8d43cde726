"""opdispatch.fx: torch.fx's GraphModule, Graph and Node for graphs of operator calls.

The graph lives in C++ (core/fx: opd::fx::Graph), where it is captured, printed as torch.fx's
Python source and run again through the dispatcher; these classes wrap it. Graphs come from
opdispatch.fx.experimental.proxy_tensor.make_fx.
"""

from .graph import Graph, Node
from .graph_module import GraphModule

__all__ = ["Graph", "GraphModule", "Node"]
