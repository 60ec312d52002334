"""Adam and AdamW, computed as torch.optim computes them on one device one tensor at a time (its ``foreach=False``
path, the default for CPU tensors), without torch.optim.

Why not torch.optim: building any of its optimizers imports ``torch._dynamo`` (its ``add_param_group`` is wrapped to
be skipped by the compiler, and the wrapper imports the compiler on first call), sympy among it: 3.5 s of CPU in
every process that trains anything, measured on the development machine (a trainer process, ``explorer-train``, a
server fitting its first parametric figure). The steps are torch.optim.Adam's and AdamW's to the last bit on the CPU,
and ``state_dict`` has the same layout, so a trainer saved with either loads with the other
(``tests/unit/test_adam.py`` checks both against torch.optim).
"""

from __future__ import annotations

import torch


class Adam:
    """Adam (Kingma & Ba, 2015); with ``decoupled_weight_decay`` AdamW (Loshchilov & Hutter, 2019), whose weight
    decay shrinks the weights directly instead of joining the gradient. One parameter group, whose ``lr`` may be
    changed between steps (``param_groups[0]["lr"]``), as a learning-rate schedule does.

    >>> w = torch.tensor([1.0, -2.0], requires_grad=True)
    >>> opt = Adam([w], lr=0.1)
    >>> (w ** 2).sum().backward(); opt.step()
    >>> w.detach()            # the first step moves each weight by lr against the sign of its gradient
    tensor([ 0.9000, -1.9000])
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, decoupled_weight_decay: bool = False):
        params = list(params)
        if not params:
            raise ValueError("Adam needs at least one parameter.")
        if not (lr >= 0 and 0 <= betas[0] < 1 and 0 <= betas[1] < 1 and eps >= 0 and weight_decay >= 0):
            raise ValueError(f"invalid Adam settings: lr={lr}, betas={betas}, eps={eps}, weight_decay={weight_decay}")
        self.param_groups = [{"params": params, "lr": lr, "betas": tuple(betas), "eps": eps,
                              "weight_decay": weight_decay, "decoupled_weight_decay": decoupled_weight_decay}]
        self.state: dict[int, dict[str, torch.Tensor]] = {}     # parameter index -> step, exp_avg, exp_avg_sq

    @property
    def _params(self) -> list[torch.Tensor]:
        return self.param_groups[0]["params"]

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self._params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        """One step for every parameter that has a gradient (the others, and their step counts, stay as they are)."""
        group = self.param_groups[0]
        lr, (beta1, beta2), eps, decay = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        for i, p in enumerate(self._params):
            if p.grad is None:
                continue
            grad = p.grad
            state = self.state.get(i)
            if state is None:
                state = self.state[i] = {"step": torch.tensor(0.0, dtype=_step_dtype()),
                                         "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
                                         "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format)}
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            state["step"] += 1
            if decay != 0:
                if group["decoupled_weight_decay"]:
                    p.mul_(1 - lr * decay)
                else:
                    grad = grad.add(p, alpha=decay)
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            step = state["step"].item()
            step_size = lr / (1 - beta1 ** step)
            denom = (exp_avg_sq.sqrt() / (1 - beta2 ** step) ** 0.5).add_(eps)
            p.addcdiv_(exp_avg, denom, value=-step_size)

    def state_dict(self) -> dict:
        """torch.optim's layout: ``{"state": {index: {"step", "exp_avg", "exp_avg_sq"}}, "param_groups": [...]}``
        (the tensors are the optimizer's own, not copies)."""
        group = {k: v for k, v in self.param_groups[0].items() if k != "params"}
        return {"state": {i: dict(s) for i, s in self.state.items()},
                "param_groups": [{**group, "params": list(range(len(self._params)))}]}

    def load_state_dict(self, state_dict: dict) -> None:
        """Take the moments and step counts of ``state_dict`` (this class's or torch.optim.Adam/AdamW's, for the same
        parameters in the same order); ValueError when they do not fit the parameters."""
        groups = state_dict.get("param_groups", [])
        if len(groups) != 1 or len(groups[0].get("params", [])) != len(self._params):
            raise ValueError("the state is for a different number of parameters or groups")
        loaded = {}
        for i, s in state_dict["state"].items():
            i = int(i)
            if not 0 <= i < len(self._params) or set(s) != {"step", "exp_avg", "exp_avg_sq"}:
                raise ValueError(f"parameter {i}'s state is not Adam's (step, exp_avg, exp_avg_sq)")
            p = self._params[i]
            moments = {k: torch.as_tensor(s[k]).to(device=p.device, dtype=p.dtype) for k in ("exp_avg", "exp_avg_sq")}
            if any(m.shape != p.shape for m in moments.values()):
                raise ValueError(f"parameter {i}'s moments have shape {tuple(moments['exp_avg'].shape)}, "
                                 f"the parameter {tuple(p.shape)}")
            step = torch.as_tensor(s["step"], dtype=_step_dtype()).detach().clone().reshape(())
            loaded[i] = {"step": step, **{k: m.detach().clone() for k, m in moments.items()}}
        self.state = loaded


def _step_dtype() -> torch.dtype:
    """The step count's dtype, as torch.optim chooses it: float64 when that is the default dtype, else float32."""
    return torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32


def adamw(params, lr: float = 1e-3, weight_decay: float = 1e-2, **kwargs) -> Adam:
    """AdamW with torch.optim.AdamW's defaults (weight decay 0.01)."""
    return Adam(params, lr=lr, weight_decay=weight_decay, decoupled_weight_decay=True, **kwargs)
