"""A whole peer-instruction round in the browser: the lecturer (lecture mode, 1280×720) polls the class on the
Scaling page's question, three students on 390 px phones vote through the vote route (one with JavaScript off,
one in 中文, one reloads and changes her vote: still three voters), the votes stay hidden until shown, a second
round runs after discussion, and Reveal shows the page's figure, its answer and both rounds."""

import re
import time
import urllib.request

from playwright.sync_api import expect

from explorer.i18n import t
from tests.e2e.conftest import ARTIFACTS
from tests.e2e.test_browser import wait_idle

CHART = '[data-testid="stPlotlyChart"]'
PANEL = '[class*="st-key-poll-panel"]'


def _until(check, timeout=30.0, what="the condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"waited {timeout:.0f} s for {what}")


def _text(page):
    return page.locator('[data-testid="stMain"]').inner_text()


def _vote(phone, label, lang="en"):
    """Pick ``label`` (its radio button reads its letter, then ``label``), press Send, and wait for the
    acknowledgement that names it."""
    phone.get_by_label(re.compile(rf"^\s*[A-H]\s+{re.escape(label)}\s*$")).check()
    phone.get_by_role("button", name=t("poll.send", lang)).click()
    phone.locator(".note.sent", has_text=label).wait_for()


def _projected(lecturer, phase, qr=False, choices=False, chart=False):
    """What the projector shows in ``phase``, all of it inside 1280 x 720: the question, the lecturer's buttons, the
    QR code at a third of the screen's height or more (``qr``: while a phone can still vote), the choices with their
    letters (``choices``: while the class votes), the rounds' chart whole with its Export (``chart``)."""
    wait_idle(lecturer)
    panel = lecturer.locator(PANEL)
    question = t("sc.predict_q", "en")
    assert question in panel.inner_text(), phase
    boxes = {"question": panel.get_by_text(question).first.bounding_box(),
             "buttons": lecturer.get_by_role("button", name=t("poll.reveal", "en")).bounding_box()}
    if qr:
        boxes["QR code"] = panel.locator("img").bounding_box()
        assert boxes["QR code"]["height"] >= 720 / 3, (phase, boxes["QR code"])     # scanned from the back row
    if choices:
        shown = panel.locator('[class*="st-key-poll-choices"]')
        for i in range(3):
            assert re.search(rf"(^|\n){'ABC'[i]}\s+{re.escape(t(f'sc.law_{i}', 'en'))}(\n|$)", shown.inner_text()), \
                (phase, shown.inner_text())
        boxes["choices"] = shown.bounding_box()
    if chart:
        boxes["chart"] = panel.locator(CHART).bounding_box()
        boxes["its Export"] = panel.get_by_role("button", name=t("ui.export", "en")).bounding_box()
        assert t("poll.share_axis", "en") not in panel.locator(CHART).inner_text()    # (compact: % on the ticks)
    off = {name: box for name, box in boxes.items() if box["y"] < 0 or box["y"] + box["height"] > 720}
    assert not off, f"{phase}: off the 720 px screen: {off}"


def test_a_peer_instruction_round_from_poll_to_reveal(browser, server_url):
    lecturer_ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    lecturer = lecturer_ctx.new_page()
    lecturer.set_default_timeout(90_000)
    lecturer.goto(f"{server_url}/scaling?lecture=1")
    lecturer.get_by_role("button", name=t("poll.open", "en")).click()
    lecturer.wait_for_selector(f"{PANEL} h3")
    link = lecturer.locator(f"{PANEL} h3").first
    code = link.inner_text().rsplit("/", 1)[-1]
    assert re.fullmatch(r"[A-Z2-9]{6}", code), code
    # the QR code: drawn after the link's heading in the same run (waited for: a run found the heading alone)
    expect(lecturer.locator(f"{PANEL} img")).to_have_count(1, timeout=30_000)
    lecturer.screenshot(path=str(ARTIFACTS / "poll_lecturer_open.png"))
    _projected(lecturer, "voting, round 1", qr=True, choices=True)
    copied = link.inner_text()                          # what a student copies: the whole link, scheme and all
    assert copied == f"{server_url}/vote/{code}" and link.locator("a").get_attribute("href") == copied
    with urllib.request.urlopen(copied, timeout=30) as opened:               # and it opens the vote page
        assert opened.status == 200 and code in opened.read().decode()
    assert link.bounding_box()["y"] + link.bounding_box()["height"] <= 720
    show = lecturer.get_by_role("button", name=t("poll.show", "en")).bounding_box()
    assert show["y"] + show["height"] <= 720, show
    note = lecturer.locator(f"{PANEL} [data-testid='stAlert']")           # 127.0.0.1: no phone in a room reaches it
    assert "make room" in note.inner_text()
    lecturer.screenshot(path=str(ARTIFACTS / "poll_lecturer_open.png"))

    phones = []
    for scripts in (True, False, True):                                # the second phone has JavaScript off
        ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                  java_script_enabled=scripts)
        phone = ctx.new_page()
        phone.set_default_timeout(90_000)
        phone.goto(f"{server_url}/vote?room={code}")                   # the old link leads to the room's page
        phone.wait_for_selector('input[type="radio"]')
        assert phone.url.startswith(f"{server_url}/vote/{code}")
        phones.append((ctx, phone))
    en = [t(f"sc.law_{i}", "en") for i in range(3)]
    right = en[1]                                                      # like √d
    _vote(phones[0][1], en[0])
    _vote(phones[1][1], right)
    zh_phone = phones[2][1]
    zh_phone.get_by_role("link", name="中文").click()
    zh_phone.get_by_text(t("sc.predict_q", "zh")[:8]).first.wait_for()
    _vote(zh_phone, t("sc.law_1", "zh"), "zh")
    phones[0][1].reload()                                              # a reload is the same voter
    assert phones[0][1].locator('input[type="radio"]:checked').count() == 1
    _vote(phones[0][1], right)                                         # a changed vote replaces the first
    phones[0][1].screenshot(path=str(ARTIFACTS / "poll_phone_voted_en.png"), full_page=True)
    zh_phone.screenshot(path=str(ARTIFACTS / "poll_phone_voted_zh.png"), full_page=True)

    _until(lambda: t("poll.count", "en", n=3, round=1) in _text(lecturer), what="3 answers on the lecturer's screen")
    assert lecturer.locator(CHART).count() == 0                        # no distribution, no figure before shown
    assert all(p.locator("table").count() == 0 for _, p in phones)
    lecturer.get_by_role("button", name=t("poll.show", "en")).click()
    lecturer.wait_for_selector(f"{CHART}")
    _projected(lecturer, "round 1 shown", qr=True, chart=True)          # a phone may still join round 2
    no_script = phones[1][1]
    for _, phone in phones:                                            # students see the votes once shown
        if phone is no_script:
            phone.reload()                                             # (without JavaScript: when it reloads)
        phone.wait_for_selector("table", timeout=30_000)
        assert "3" in phone.locator("caption").first.inner_text()
    lecturer.screenshot(path=str(ARTIFACTS / "poll_lecturer_round1.png"))
    zh_phone.screenshot(path=str(ARTIFACTS / "poll_phone_shown_zh.png"), full_page=True)

    lecturer.get_by_role("button", name=t("poll.again", "en")).click()
    _until(lambda: t("poll.count", "en", n=0, round=2) in _text(lecturer), what="round 2 on the lecturer's screen")
    _projected(lecturer, "voting, round 2", qr=True, choices=True)
    no_script.reload()
    for _, phone in phones[:2]:
        phone.wait_for_selector(f"text={t('poll.round2', 'en')}", timeout=30_000)
        _vote(phone, right)
    zh_phone.wait_for_selector(f"text={t('poll.round2', 'zh')}", timeout=30_000)
    _vote(zh_phone, t("sc.law_0", "zh"), "zh")
    _until(lambda: t("poll.count", "en", n=3, round=2) in _text(lecturer), what="3 answers in round 2")
    lecturer.get_by_role("button", name=t("poll.show", "en")).click()
    _until(lambda: t("poll.round_n", "en", n=2, total=3) in _text(lecturer), what="round 2's bars")
    _projected(lecturer, "round 2 shown", qr=False, chart=True)
    lecturer.screenshot(path=str(ARTIFACTS / "poll_lecturer_round2.png"))
    lecturer.get_by_role("button", name=t("poll.reveal", "en")).click()

    lecturer.wait_for_selector('[class*="st-key-verdict"]')
    lecturer.wait_for_selector(CHART)                                  # the page's own figure, with its answer
    said = t("poll.summary", "en", right1=3, total1=3) + t("poll.summary2", "en", right2=2, total2=3)
    said = said.replace("**", "")
    _until(lambda: said in _text(lecturer), what=f"'{said}' under the answer")
    assert right in _text(lecturer)
    # the verdict and the class's result take their rows from the figure: it still ends on the projector's screen
    box = lecturer.locator(f'[data-testid="stMain"] {CHART}').first.bounding_box()
    assert box["y"] + box["height"] <= 720, box
    lecturer.screenshot(path=str(ARTIFACTS / "poll_lecturer_revealed.png"))
    lecturer.get_by_role("button", name=t("poll.votes", "en")).click()   # the class's two rounds, side by side
    legend = lecturer.locator(f'[data-testid="stPopoverBody"] {CHART}').first
    legend.wait_for()
    for n in (1, 2):
        assert t("poll.round_n", "en", n=n, total=3) in legend.inner_text()
    lecturer.screenshot(path=str(ARTIFACTS / "poll_lecturer_votes.png"))
    no_script.reload()
    for _, phone in phones[:2]:
        phone.locator(".note.sent", has_text=right).wait_for(timeout=30_000)
        assert t("poll.revealed", "en", answer="").replace("**", "").rstrip(".").strip() in phone.inner_text("main")
    phones[1][1].screenshot(path=str(ARTIFACTS / "poll_phone_revealed_en.png"), full_page=True)
    zh_phone.screenshot(path=str(ARTIFACTS / "poll_phone_revealed_zh.png"), full_page=True)
    for ctx, _ in phones:
        ctx.close()
    lecturer_ctx.close()
