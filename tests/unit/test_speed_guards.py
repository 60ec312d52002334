"""Guards for choices made for speed: figures built without validation (what the landing page imports is
tests/app/test_landing_and_navigation.py)."""

def test_figures_are_validated_under_test():
    # pages skip plotly's validation for speed; the suite turns it on so misspelt properties fail here
    import pytest

    from explorer.figures import style

    assert style.VALIDATE
    with pytest.raises(ValueError, match="lin"):
        style.figure([{"type": "scatter", "x": [1], "y": [1], "lin": {"width": 2}}], "t", "x", "y")
