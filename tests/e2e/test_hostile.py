"""Hostile input in Chromium: what a link, a path, a room code or an uploaded file says is shown as text (no link,
image, emphasis, colour, emoji or formula made of it, in Streamlit's Markdown and in plotly's titles), and no page
asks any host but the app's for anything (every browser test fails on that: tests/e2e/conftest.py)."""

from urllib.parse import quote

from tests.conftest import until
from tests.e2e.conftest import ARTIFACTS
from tests.e2e.test_browser import CHART, open_upload, wait_idle

# each of these, in a link, must come back as the characters typed: Streamlit's own Markdown (colours, icons,
# emoji, maths) as well as CommonMark's and bare addresses
KEYS = ["[Session expired](https://evil.example/login)", "![x](https://evil.example/p.png)", ":red[red]",
        ":material/home:", ":smile:", "$x^2$", "www.evil.example", "a@evil.example"]
MADE_OF_IT = "a, img, strong, em, code, .katex, [data-testid='stIconMaterial'], span[style*='color']"


def _no_markup(alert) -> None:
    assert alert.locator(MADE_OF_IT).count() == 0, alert.inner_html()


def test_a_links_keys_values_and_path_are_shown_as_text_and_nothing_leaves_the_machine(page, server_url):
    query = "&".join(f"{quote(k)}={quote(k)}" for k in KEYS[:6])
    page.goto(f"{server_url}/kernel_regression?{query}")
    page.wait_for_selector(CHART)
    wait_idle(page)
    alert = page.locator('[data-testid="stAlert"]').first
    text = alert.inner_text().replace("\u2060", "")
    _no_markup(alert)
    assert all(k[:40] in text for k in KEYS[:5]), text              # keys are cut at 40; the sixth is counted
    assert "and 1 more" in text
    page.screenshot(path=str(ARTIFACTS / "hostile_link.png"))
    path = "**Session expired** [sign in](evil.example)"   # one segment: Streamlit serves no app under a/b/c
    page.goto(f"{server_url}/{quote(path)}?{quote(KEYS[5])}={quote(KEYS[6])}&{quote(KEYS[7])}=1")
    page.wait_for_selector('[data-testid="stMain"] h1')
    wait_idle(page)
    alerts = page.locator('[data-testid="stAlert"]')
    shown = " ".join(alerts.nth(i).inner_text() for i in range(alerts.count())).replace("\u2060", "")
    for i in range(alerts.count()):
        _no_markup(alerts.nth(i))
    assert all(k in shown for k in (path, *KEYS[5:])), shown
    page.goto(f"{server_url}/vote?room={quote('[a](//e.co)')}")            # the vote route's page: plain HTML
    refused = page.locator(".note.refused")
    _no_markup(refused)
    assert "[a](//e.co)" in refused.inner_text()


def test_an_uploads_file_and_column_names_are_text_on_the_page_and_in_the_figure(page, server_url):
    open_upload(page, server_url)
    dropzone = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    dropzone.set_input_files({"name": "[a](https://evil.example).csv", "mimeType": "text/csv",
                              "buffer": b"x,y\n1,a\n2,b\n"})
    wait_idle(page)
    refused = page.locator('[data-testid="stAlert"]', has_text="was not used")
    assert refused.count() == 2
    _no_markup(refused.first)
    assert "[a](https://evil.example).csv" in refused.first.inner_text().replace("\u2060", "")
    rows = "".join(f"{i},{i * i % 7}\n" for i in range(20))
    dropzone = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    dropzone.set_input_files({"name": "data.csv", "mimeType": "text/csv",
                              "buffer": f"<a href='https://evil.example'>x</a>,<b>y</b>\n{rows}".encode()})
    wait_idle(page)
    chart = page.locator(f'[data-testid="stMain"] {CHART}').first
    assert chart.locator("a").count() == 0 and chart.locator(".xtitle b, .ytitle b").count() == 0
    assert chart.locator(".xtitle").text_content() == "<a href='https://evil.example'>x</a>"
    assert chart.locator(".ytitle").text_content() == "<b>y</b>"
    caption = page.locator('[data-testid="stSidebar"] [data-testid="stCaptionContainer"]', has_text="uploaded")
    _no_markup(caption)
    page.screenshot(path=str(ARTIFACTS / "hostile_upload.png"))


def test_every_response_carries_the_policy_and_a_page_elsewhere_cannot_frame_the_app(server_url, browser):
    import re
    import urllib.error
    import urllib.request

    html = urllib.request.urlopen(server_url + "/", timeout=30).read().decode()
    script = re.search(r'src="\./(static/js/[^"]+\.js)"', html).group(1)
    for path in ("/", "/kernel_regression", "/_stcore/health", "/" + script, "/no/such/file.png"):
        try:
            resp = urllib.request.urlopen(server_url + path, timeout=30)
        except urllib.error.HTTPError as refused:                 # (a missing file: 404, with the headers too)
            resp = refused
        headers = resp.headers
        assert "frame-ancestors 'self'" in headers["Content-Security-Policy"], path
        assert headers["X-Content-Type-Options"] == "nosniff" and headers["Referrer-Policy"] == "same-origin", path
        assert headers["X-Frame-Options"] == "SAMEORIGIN", path
    page = browser.new_page()          # a tab of its own, that has never opened the app: the page elsewhere
    page.set_content(f'<iframe id="app" src="{server_url}/" width="800" height="600"></iframe>')
    # the browser refuses the frame and says so on the console
    refused = until(lambda: [p for p in browser.problems if "frame-ancestors" in p], timeout=30)
    framed = page.frames[-1]
    assert framed.locator('[data-testid="stApp"]').count() == 0                     # nothing of the app drawn
    assert refused, browser.problems                                                # the browser says why
    browser.problems[:] = [p for p in browser.problems if p not in refused]
    page.close()
