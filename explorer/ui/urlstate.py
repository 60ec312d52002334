"""Shareable views: each page keeps its controls in the URL and restores them from a link.

A page lists its controls as ``Param`` specs. ``restore`` (top of the page, before the widgets)
reads the query string once per session and page; a malformed or out-of-range value falls back to
the default with a one-line warning. ``publish`` (end of the page) writes the current values back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import streamlit as st

from .state import tr


@dataclass(frozen=True)
class Param:
    key: str                                  # session-state key of the widget, also the URL name
    kind: str                                 # "int", "float", "str", "bool" or "floats" (a list)
    options: tuple | None = None              # allowed values (select boxes, select sliders)
    lo: float | None = None                   # numeric bounds (sliders, number inputs)
    hi: float | None = None

    def parse(self, raw: str):
        if self.kind == "bool":
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
        if self.kind == "floats":
            values = [self._one(v, float) for v in raw.split(",") if v.strip()]
            return values
        return self._one(raw, {"int": int, "float": float, "str": str}[self.kind])

    def _one(self, raw: str, cast):
        if cast is int:
            value = int(float(raw)) if float(raw).is_integer() else math.nan
            if isinstance(value, float):
                raise ValueError(raw)
        else:
            value = cast(raw)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(raw)
        if self.options is not None:
            match = [o for o in self.options if (o == value if cast is str else math.isclose(float(o), value))]
            if not match:
                raise ValueError(raw)
            value = match[0]
        if self.lo is not None and not self.lo <= value <= self.hi:
            raise ValueError(raw)
        return value

    def dump(self, value) -> str:
        if self.kind == "bool":
            return "1" if value else "0"
        if self.kind == "floats":
            return ",".join(f"{v:g}" for v in value)
        return f"{value:g}" if isinstance(value, float) else str(value)


def restore(params: Sequence[Param], page: str) -> None:
    """Copy valid URL values into session state, once per session and page; report the rest."""
    flag = f"url.restored.{page}"
    if st.session_state.get(flag):
        return
    st.session_state[flag] = True
    ignored = []
    for p in params:
        raw = st.query_params.get(p.key)
        if raw is None:
            continue
        try:
            st.session_state[p.key] = p.parse(raw)
        except (ValueError, TypeError):
            ignored.append(f"{p.key}={raw}")
    if ignored:
        st.warning(tr("ui.url_ignored", bad=", ".join(ignored)))


def publish(params: Sequence[Param]) -> None:
    """Write the current values into the URL (plus lecture mode), so the address can be shared."""
    values = {p.key: p.dump(st.session_state[p.key]) for p in params if p.key in st.session_state}
    if st.session_state.get("ui.lecture"):
        values["lecture"] = "1"
    if st.session_state.get("ui.lang", "en") != "en":
        values["lang"] = st.session_state["ui.lang"]
    if dict(st.query_params) != values:
        st.query_params.from_dict(values)
