"""opdispatch.fx.experimental: make_fx (proxy_tensor), as torch.fx.experimental."""
