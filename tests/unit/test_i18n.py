"""The two UI languages stay in step: same keys, same placeholders, translations made from the current English,
every key the code uses exists, and no user-facing sentence bypasses the catalogs."""

import ast
import re
import string

import numpy as np

from explorer.i18n import EN, STRINGS, ZH, t
from tests.conftest import ROOT


def fields(text: str) -> set[tuple[str, str]]:
    """The placeholders of a template with their number formats: ``{h:.3g}`` is ("h", ".3g")."""
    return {(f, spec) for _, f, spec, _ in string.Formatter().parse(text) if f is not None}


def test_both_languages_have_the_same_keys():
    assert set(EN) - set(ZH) == set(), "keys missing in zh"
    assert set(ZH) - set(EN) == set(), "keys missing in en"


def test_placeholders_match():
    """Same placeholders in both languages, with the same number format: a sentence says 0.23 in both."""
    assert fields("h = {h:.3g}, {n} points") == {("h", ".3g"), ("n", "")}
    for key in EN:
        assert fields(EN[key]) == fields(ZH[key]), key


def test_every_number_format_in_the_catalogs_formats_a_number():
    """A template's format (``{h:.3g}``, ``{pct:.0%}``, ``{n:,}``) is applied by ``t``: each one formats a float in
    both languages (a typo such as ``{h:.3q}`` fails here, not in front of a class)."""
    for lang in ("en", "zh"):
        for key, text in STRINGS[lang].items():
            values = {f: (1234.5678 if spec else "x") for f, spec in fields(text)}
            assert isinstance(t(key, lang, **values), str), key
    assert t("kr.use_optimum", "en", h=0.123456) == "Use the optimum (h ≈ 0.123)"


FORMAT_CALLS = {"tr", "t", "Message", "UserError", "Phrase"}


def formatted_keyword_values(source: str) -> list[str]:
    """Keyword values of text calls that are f-strings formatting a number (``tr("k", h=f"{h:.3g}")``): the format
    belongs in the catalog's template (``{h:.3g}``), where a translation can see and change it."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in FORMAT_CALLS:
            for kw in node.keywords:
                if isinstance(kw.value, ast.JoinedStr) and any(
                        isinstance(v, ast.FormattedValue) and v.format_spec is not None for v in kw.value.values):
                    found.append(f"line {node.lineno}: {kw.arg}")
    return found


def test_numbers_in_sentences_are_formatted_by_the_catalog():
    assert formatted_keyword_values('tr("a.b", h=f"{h:.3g}", n=n, name=f"{x}")') == ["line 1: h"]
    sources = [ROOT / "app.py", *ROOT.glob("pages/*.py"), *ROOT.glob("explorer/**/*.py")]
    found = {str(p.relative_to(ROOT)): formatted_keyword_values(p.read_text(encoding="utf-8")) for p in sources}
    assert {k: v for k, v in found.items() if v} == {}


def test_chinese_texts_are_translated():
    same = [k for k in EN if EN[k] == ZH[k] and re.search("[a-z]{4,}", re.sub(r"\{[^}]*\}", "", EN[k]))
            and not k.startswith("modename.")]       # the masking modes' names are the code's ("post + renorm")
    assert len(same) <= 3, same          # a few names (D2L 11.2, Transformer) may stay as they are


def used_keys():
    pattern = re.compile(r"""\b(?:tr|t|Message|UserError|Say)\(\s*["']([a-z_]+\.[A-Za-z_.+ -]+)["']""")
    keys = set()
    for path in [*ROOT.glob("pages/*.py"), ROOT / "app.py", *ROOT.glob("explorer/**/*.py")]:
        keys |= set(pattern.findall(path.read_text(encoding="utf-8")))
    return keys


def test_every_key_used_in_the_code_exists():
    keys = used_keys()
    assert len(keys) > 150
    missing = sorted(k for k in keys if k not in EN and not k.endswith("."))   # "prefix." + name: checked below
    assert missing == []


def test_dynamic_key_families_are_complete():
    from explorer.attention import MASK_MODES
    from explorer.data import DATASETS
    from explorer.kernels import KERNELS
    from explorer.masking import MASK_TYPES
    from explorer.training import TASKS

    for lang in STRINGS:
        for name in KERNELS:
            assert t(f"kernel.{name}", lang)
        for name in DATASETS:
            assert t(f"dataset.{name}", lang)
        for name in MASK_MODES:
            assert t(f"mode.{name}", lang)
        for name in MASK_TYPES:
            assert t(f"masktype.{name}", lang)
        for name in TASKS:
            assert t(f"task.{name}", lang) and t(f"watch.{name}", lang)
        for name in ("over-fit", "good", "over-smooth"):
            assert t(f"nw.preset.{name}", lang)


def test_t_fills_placeholders_and_falls_back_to_english():
    assert t("kr.use_optimum", "zh", h=0.23) == "使用最优值（h ≈ 0.23）"
    assert t("kr.use_optimum", "xx", h=0.23) == "Use the optimum (h ≈ 0.23)"


def test_chinese_wording():
    """Masked is 被屏蔽 (not 被掩盖, which means concealed); layers and heads read 层 0 / 头 0; no literal
    translations of "agree to" or of a hard max."""
    from explorer.i18n import ZH
    text = "\n".join(ZH.values())
    for wrong in ("被掩盖", "第 {layer} 层", "第 {head} 头", "一致到", "相同到", "鼓包", "硬最大值", "会有点找不到",
                  "典型带宽", "至舍入误差", "在这对数坐标上", "在第一份中"):
        assert wrong not in text, wrong
    assert not re.search(r"第 ?\d ?层", text), "layers are 层 0, 层 1 in the UI, not 第 0 层"
    assert "被屏蔽" in ZH["fig.masked"]


def test_heatmap_hover_text_follows_the_language():
    from explorer.figures.common import heatmap
    fig = heatmap(np.eye(3), None, None, "t", t("fig.key_pos", "zh"), t("fig.query_pos", "zh"),
                  colorbar_title=t("fig.weight", "zh"))
    hover = fig.data[0].hovertemplate
    assert t("fig.key_pos", "zh") in hover and "key" not in hover and "value" not in hover


def test_chinese_pages_show_no_english_task_names_or_spinners():
    from streamlit import config

    config.set_option("runner.magicEnabled", False)
    from tests.app.helpers import page
    at = page("live_training")
    at.session_state["ui.lang"] = "zh"
    at.run()
    select = at.selectbox(key="train.task")
    from explorer.training import TASKS
    assert list(select.options) == [t(f"taskname.{k}", "zh") for k in TASKS]
    assert all(t(f"taskname.{k}", "zh") != k for k in ("reverse", "induction", "sort"))
    src = (ROOT / "explorer" / "ui" / "cache.py").read_text()
    assert "show_spinner=\"" not in src               # spinner sentences come from the catalogue


def test_every_translation_was_made_from_the_current_english():
    from explorer.i18n import CATALOGS, stale_translations

    stale = stale_translations(CATALOGS)
    assert stale == [], "English changed since these were translated; update zh, then set zh_from: " + "; ".join(
        f"{page}.toml [{key!r}] zh_from = {new!r}" for page, key, new in stale)


def test_a_changed_english_sentence_makes_its_translation_stale(tmp_path):
    from explorer.i18n import digest, load_catalogs, stale_translations

    (tmp_path / "a.toml").write_text(f'''["x.one"]\nen = "Hello"\nzh = "你好"\nzh_from = "{digest("Hello")}"\n
["x.two"]\nen = "Goodbye, all"\nzh = "再见"\nzh_from = "{digest("Goodbye")}"\n''', encoding="utf-8")
    assert stale_translations(load_catalogs(tmp_path)) == [("a", "x.two", digest("Goodbye, all"))]


def test_a_key_in_two_catalogs_is_refused(tmp_path):
    import pytest

    from explorer.i18n import load_catalogs

    for name in ("a", "b"):
        (tmp_path / f"{name}.toml").write_text('["x.one"]\nen = "Hi"\nzh = "嗨"\nzh_from = ""\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"x\.one"):
        load_catalogs(tmp_path)


def test_each_page_has_its_own_catalog():
    from explorer.i18n import CATALOGS

    pages = {p.stem for p in (ROOT / "pages").glob("*.py")}
    assert pages <= set(CATALOGS), pages - set(CATALOGS)


# Streamlit calls that put their text arguments on screen, and the keyword arguments that are text.
TEXT_CALLS = {"title", "header", "subheader", "markdown", "caption", "write", "info", "warning", "error", "success",
              "toast", "button", "download_button", "slider", "select_slider", "selectbox", "multiselect", "toggle",
              "checkbox", "number_input", "text_input", "metric", "expander", "popover", "spinner", "tabs", "radio",
              "file_uploader", "set_page_config", "Page", "dataframe", "column_config"}
TEXT_KWARGS = {"label", "help", "placeholder", "title", "body", "text", "page_title"}
WORDS = re.compile(r"[A-Za-z]{2,}|[\u4e00-\u9fff]")


def literal_text(node: ast.AST) -> str | None:
    """The literal words in a string constant or f-string, or None when the argument is not a literal."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    return None


def literal_ui_strings(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in TEXT_CALLS):
            continue
        args = [*node.args, *(k.value for k in node.keywords if k.arg in TEXT_KWARGS)]
        for arg in args:
            text = literal_text(arg)
            if text and WORDS.search(text) and not text.startswith(("pages/", ":material/")):
                found.append(f"line {node.lineno}: {text[:50]!r}")
    return found


def test_the_literal_string_check_catches_literals():
    assert literal_ui_strings('st.button("Start")\ncol.caption(f"Mean {x}")') == ["line 1: 'Start'",
                                                                                     "line 2: 'Mean '"]
    allowed = 'st.button(tr("lt.start"))\nst.metric(tr("m"), f"{x:.2f}")\nst.button(f"h = {h:g}")'
    assert literal_ui_strings(allowed) == []


def test_no_literal_user_facing_string_is_passed_to_streamlit():
    sources = [ROOT / "app.py", *ROOT.glob("pages/*.py"), *ROOT.glob("explorer/ui/*.py")]
    found = {str(p.relative_to(ROOT)): literal_ui_strings(p.read_text(encoding="utf-8")) for p in sources}
    assert {k: v for k, v in found.items() if v} == {}


def test_chinese_sentences_use_chinese_punctuation_and_no_space_between_characters():
    """Within 中文 text, a comma, semicolon, colon, full stop, question or exclamation mark next to a Chinese
    character is the full-width one, and two Chinese characters are never split by a space (formulas in
    parentheses, such as exp(离散程度·z), are left alone)."""
    import re

    from explorer.i18n import load_catalogs

    cjk = "\u4e00-\u9fff"
    ascii_punct = re.compile(rf"[{cjk}][,;:.?!]|[,;:?!][{cjk}]")
    split = re.compile(rf"[{cjk}] [{cjk}]")
    found = [(key, e["zh"]) for entries in load_catalogs().values() for key, e in entries.items()
             if ascii_punct.search(e["zh"]) or split.search(e["zh"])]
    assert not found, found[:5]


def test_sentences_the_pages_assemble_are_punctuated_in_the_page_language():
    from tests.app.helpers import page

    at = page("masking")
    at.session_state["ui.lang"] = "zh"
    at.run()
    verdicts = next(m.value for m in at.markdown if m.value.startswith("- **pre"))
    lines = verdicts.splitlines()
    assert len(lines) == 4 and all(line.endswith("。") and "; " not in line and "**：" in line for line in lines)
    assert lines[0].startswith("- **pre**：") and "（" not in lines[0].split("：")[0]      # the bare name, no gloss
    at = page("kernel_regression")
    at.session_state["ui.lang"] = "zh"
    at.run()
    readout = next(m.value for m in at.markdown if "均方误差" in m.value)
    assert readout.endswith("。")
    import json
    title = next(json.loads(e.proto.spec) for e in at.get("plotly_chart") if "fit" in e.proto.id)["layout"]["title"]
    assert "正弦混合上的" in title["text"]                 # a dataset name placed in a sentence, no space inside


NAMES = {"kernel": "kernel.", "dataset": "dataset.", "task": "taskname.", "kind": "ef.kind_", "mode": "modename."}


def test_no_noun_is_doubled_where_a_name_is_filled_in():
    """A 中文 sentence that puts a name in a placeholder must not repeat the name's own last noun: "{kernel}核" with
    高斯核 reads 高斯核核. Every name of every family, filled into every sentence that takes it."""
    doubled = []
    for key, text in ZH.items():
        fields = {f for _, f, _, _ in string.Formatter().parse(text) if f}
        for field in fields & set(NAMES):
            for name_key, name in ZH.items():
                if not name_key.startswith(NAMES[field]) or not name:
                    continue
                tail = name[-1]
                at = text.find("{" + field + "}")
                after = text[at + len(field) + 2:at + len(field) + 3]
                if "\u4e00" <= tail <= "\u9fff" and after == tail:
                    doubled.append(f"{key} with {name_key}: …{name}{after}…")
    assert not doubled, doubled


def test_every_figures_hover_text_is_in_the_page_language():
    """The hover text of every lesson figure drawn in 中文 names its numbers in 中文 with a full-width colon (the
    query-row scatter said "weight=" in every language)."""
    from explorer.export import lecture_figures

    for name, _, build in lecture_figures(0, "zh", lecture=False):
        if name.startswith("training"):
            continue                                      # (trained models: the same helpers, checked elsewhere)
        for trace in build().data:
            template = trace.hovertemplate or ""
            assert "=" not in template.replace("%{", "").split("<extra>")[0], (name, template)
            if template:
                assert "：" in template and not re.search(r"[A-Za-z]{3,}: %", template), (name, template)
    from explorer.figures.attention import query_row_figure

    x = np.linspace(-1, 1, 5)
    fig = query_row_figure(x, x, np.ones(5) / 5, 0.0, 0.0, x, None, lang="zh")
    assert any("权重：" in (tr.hovertemplate or "") for tr in fig.data)


def test_bold_text_in_chinese_closes_where_markdown_can_close_it():
    """A closing ** right after full-width punctuation and right before a letter is not a closing delimiter in
    CommonMark (it is not right-flanking), so "**先预测：**任务" shows its asterisks: the colon goes outside."""
    from explorer.i18n import STRINGS

    punct = "：，。；！？、）」』》…"
    bad = []
    for lang, table in STRINGS.items():
        for key, text in table.items():
            parts = text.split("**")
            for i in range(1, len(parts) - 1, 2):
                inner, after = parts[i], parts[i + 1]
                if inner and inner[-1] in punct and after and not after[0].isspace() and after[0] not in punct:
                    bad.append(f"{lang} {key}: {text[:40]}")
    assert bad == []


def test_one_thing_has_one_name_in_chinese():
    """中文 calls a thing what its control calls it, says a noun once, and a shrinking factor unambiguously: the spread
    of key norms is 键范数的离散程度 wherever it is named (not 扩展); the positive random features are not
    "正值特征（FAVOR+）随机特征"; the bandwidth sweep has one name; "缩小 N 倍" (ambiguous) is "缩小为原来的 1/N"; a
    masking mode is named bare, as in English (its description sits beside it in the picker, not in every verdict)."""
    assert "扩展" not in ZH["sk.notice"] and ZH["sk.spread"] in ZH["sk.notice"]
    asked = t("ef.predict_q", "zh", kind=t("ef.kind_positive", "zh"))
    assert "特征（FAVOR+）随机特征" not in asked
    assert ZH["ah.sweep"] in ZH["ah.notice_large"] and "带宽扫描" not in "".join(ZH.values())
    assert not [k for k, v in ZH.items() if re.search(r"缩小 ?\{factor[^}]*\} ?倍", v)]
    assert all(ZH[f"modename.{m}"] == EN[f"modename.{m}"] for m in ("pre", "post", "post_renorm", "multiply_logits"))
