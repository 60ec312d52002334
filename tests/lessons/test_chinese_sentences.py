"""Sentences whose 中文 once said something the English does not: each rendered at a setting that showed it."""

from explorer.i18n import Joined, Message, t
from explorer.lessons import icl_bandwidth as IB


def test_the_error_list_is_introduced_once():
    """kr.notice_first: the list of errors is led by a colon, not by a 为 that each item repeats
    ("误差为 h = 0.01 时为 0.073" read 为 twice)."""
    errors = Joined([Message("kr.notice_error", mse=0.073, h=0.01), Message("kr.notice_error", mse=0.02, h=0.2)])
    text = t("kr.notice_first", "zh", kernel=Message("kernel.gaussian").in_lang("zh"), errors=errors.in_lang("zh"),
             h=0.2)
    assert "误差为" not in text and "误差：" in text
    assert text.count("为") == text.count("时为")             # every 为 left belongs to an item ("h = … 时为 …")


def test_the_nearest_neighbour_limit_is_the_largest_of_the_points_distances():
    """kr.loo_text: "the largest distance from a point to its nearest neighbour" is the largest over the points of
    each one's nearest-neighbour distance, not one point's largest distance."""
    text = t("kr.loo_text", "zh")
    assert "某个点到其最近邻的最大距离" not in text and "这些距离中最大的那个" in text


def test_a_window_that_grows_is_not_said_to_shrink():
    """ib.window_text_not: the window's two ends are quoted as they are, so a window that grows from L = 1 to 64
    (a factor below 1) is never said to shrink to 1/f of itself."""
    said = IB.window_text({"window": [0.2, 0.25, 0.3], "noise": 0.3, **_sweep_rest()})[0]
    assert said.key == "ib.window_text_not"
    for lang in ("en", "zh"):
        text = said.in_lang(lang)
        assert "0.2" in text and "0.3" in text and "1/" not in text and "缩小" not in text, text


def _sweep_rest() -> dict:
    """The rest of a sweep ``window_text`` reads (the oracle's and leave-one-out's windows), at three L."""
    return {"L": [1.0, 8.0, 64.0], "oracle": [0.2, 0.25, 0.3], "loo": [0.2, 0.25, 0.3],
            "softmax_error": [0.1, 0.1, 0.1], "linear_error": [0.2, 0.2, 0.2]}
