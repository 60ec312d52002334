"""Every claim on screen has a lesson test: a new sentence cannot ship unchecked."""

import re
from pathlib import Path

from explorer.i18n import CLAIMS, EN, ZH, is_claim

HERE = Path(__file__).parent


def _named_keys() -> set[str]:
    text = "\n".join(p.read_text(encoding="utf-8") for p in HERE.glob("test_*.py") if p.name != "test_coverage.py")
    return set(re.findall(r"[\"'\s(]([a-z_]+\.[a-z0-9_.+ -]+?)[\"'\s:/),]", text))


def test_every_claim_is_named_by_a_lesson_test():
    missing = sorted(k for k in CLAIMS if k not in _named_keys())
    assert not missing, f"claims with no lesson test in tests/lessons/: {missing}"


def test_claims_are_found_by_their_names():
    # the rule that decides what a claim is catches the kinds of sentence that assert things
    for key in ("kr.notice", "ah.notice", "sk.explain", "mk.v_rows", "lt.collapsed", "watch.induction",
                "nw.presets", "mk.leak_caption"):
        assert is_claim(key) and key in CLAIMS
    assert not is_claim("fig.x") and not is_claim("ui.what_to_notice")


def test_each_claim_exists_in_both_languages():
    assert all(k in EN and k in ZH for k in CLAIMS)
