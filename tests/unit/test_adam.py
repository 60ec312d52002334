"""explorer._adam against torch.optim.Adam and AdamW: the same weights to the last bit after many steps, and state
dicts that move between the two. That training no longer loads torch's compiler: tests/unit/test_speed_guards.py."""

import copy

import pytest
import torch

from explorer._adam import Adam, adamw


def _model(dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3)).to(dtype)


def _train(model, opt, steps, lrs=None, skip_first_layer_every=0, seed=1):
    """``steps`` steps on random regression batches; ``lrs`` sets the group's lr before each step; the first layer's
    gradients are removed every ``skip_first_layer_every``-th step (a parameter without a gradient that step)."""
    g = torch.Generator().manual_seed(seed)
    dtype = next(model.parameters()).dtype
    for step in range(steps):
        if lrs is not None:
            opt.param_groups[0]["lr"] = lrs[step]
        x = torch.randn(16, 5, generator=g, dtype=dtype)
        y = torch.randn(16, 3, generator=g, dtype=dtype)
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        if skip_first_layer_every and step % skip_first_layer_every == 0:
            for p in model[0].parameters():
                p.grad = None
        opt.step()


def _same(a, b):
    for (name, pa), pb in zip(a.named_parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb), (name, (pa - pb).abs().max())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("kind", ["adam", "adam+l2", "adamw"])
def test_steps_are_torch_optims_to_the_last_bit(kind, dtype):
    ours, theirs = _model(dtype), _model(dtype)
    lrs = [1e-2 * (0.5 + (i % 7) / 7) for i in range(200)]                # a learning rate that moves every step
    if kind == "adamw":
        mine, ref = adamw(ours.parameters(), lr=1e-2), torch.optim.AdamW(theirs.parameters(), lr=1e-2)
    else:
        decay = 0.05 if kind == "adam+l2" else 0.0
        mine = Adam(ours.parameters(), lr=1e-2, weight_decay=decay)
        ref = torch.optim.Adam(theirs.parameters(), lr=1e-2, weight_decay=decay)
    _train(ours, mine, 200, lrs, skip_first_layer_every=3)
    _train(theirs, ref, 200, lrs, skip_first_layer_every=3)
    _same(ours, theirs)
    assert ref.state[next(iter(theirs[0].parameters()))]["step"] == mine.state[0]["step"] == 133   # 200 - 67 skipped


def test_a_step_size_off_by_a_hundredth_of_a_percent_is_seen():
    """The comparison above can fail: a step size off by one part in 10,000 leaves other weights."""
    ours, theirs = _model(), _model()
    _train(ours, Adam(ours.parameters(), lr=1e-2 * (1 + 1e-4)), 20)
    _train(theirs, torch.optim.Adam(theirs.parameters(), lr=1e-2), 20)
    with pytest.raises(AssertionError):
        _same(ours, theirs)


@pytest.mark.parametrize("direction", ["torch to ours", "ours to torch"])
def test_a_state_dict_moves_between_the_two_and_training_goes_on_alike(direction):
    first, second = _model(), _model()
    torch_first = direction == "torch to ours"
    make_first = (lambda p: torch.optim.AdamW(p, lr=3e-3)) if torch_first else (lambda p: adamw(p, lr=3e-3))
    make_second = (lambda p: adamw(p, lr=3e-3)) if torch_first else (lambda p: torch.optim.AdamW(p, lr=3e-3))
    opt_first = make_first(first.parameters())
    _train(first, opt_first, 30)
    second.load_state_dict(first.state_dict())
    opt_second = make_second(second.parameters())
    opt_second.load_state_dict(copy.deepcopy(opt_first.state_dict()))     # (both hand out their own tensors)
    _train(first, opt_first, 30, seed=2)
    _train(second, opt_second, 30, seed=2)
    _same(first, second)


def test_a_state_that_does_not_fit_is_refused():
    model = _model()
    opt = adamw(model.parameters())
    _train(model, opt, 2)
    state = opt.state_dict()
    other = adamw(_model().parameters())
    other.load_state_dict(state)                       # fits
    fewer = adamw(list(_model().parameters())[:2])
    with pytest.raises(ValueError, match="number of parameters"):
        fewer.load_state_dict(state)
    swapped = {**state, "state": {0: state["state"][1], 1: state["state"][0], **{k: v for k, v in
                                                                                  state["state"].items() if k > 1}}}
    with pytest.raises(ValueError, match="shape"):
        other.load_state_dict(swapped)
    with pytest.raises(ValueError, match="Adam's"):
        other.load_state_dict({**state, "state": {0: {"step": 1.0}}})


def test_bad_settings_are_refused():
    w = torch.zeros(2, requires_grad=True)
    for settings in ({"lr": -1.0}, {"betas": (1.0, 0.9)}, {"eps": -1e-8}, {"weight_decay": -0.1}):
        with pytest.raises(ValueError, match="invalid Adam settings"):
            Adam([w], **settings)
    with pytest.raises(ValueError, match="at least one"):
        Adam([])

