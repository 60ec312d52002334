"""Every sentence every lesson says, at every setting of its sweep, reads as words: no inf, nan, unfilled placeholder
or raw markup, in English and in 中文 (``test_coverage.assert_words``). The sentences' truth is each lesson test's
job; this catches a number that overflows or a text that leaks its braces at a setting no one looked at.

The lessons that train to say their sentences (Attention learns its bandwidth, Live training) are swept by their
own tests; Kernel regression and Softmax is a kernel, whose sentences cost a bandwidth search or a trained layer per
setting, are swept at seed 0 here (their claims at seeds 0-4 in their own tests). Settings that differ in one control
share most figures' inputs: each figure's data is computed once per inputs (tests/lessons/conftest.py)."""

import pytest

from explorer.lessons import attention_heatmap, efficient_attention, kernel_regression, masking, scaling, softmax_kernel
from tests.lessons.sweep import SEEDS, assert_words, settings

LESSONS = {masking: SEEDS, scaling: SEEDS, attention_heatmap: SEEDS, efficient_attention: SEEDS,
           kernel_regression: (0,), softmax_kernel: (0,)}


@pytest.mark.slow
@pytest.mark.parametrize("lesson", list(LESSONS), ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_every_sentence_at_every_swept_setting_reads_as_words(lesson):
    for values in settings(lesson, seeds=LESSONS[lesson]):
        for said in lesson.sentences(values):
            try:
                assert_words(said)
            except AssertionError as err:
                raise AssertionError((values, *err.args)) from None
