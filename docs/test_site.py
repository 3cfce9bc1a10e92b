"""Browser check of the built site (`python tools/build_docs.py` first): headless Chromium with the network off.

Run: `python -m pytest docs/test_site.py` (CI runs it after the build). Chromium is Debian's (`apt-get install
chromium`; `RBF_DOCS_CHROMIUM` overrides the path), driven by Playwright's Python package without its own
browser download. The network is off twice over: Chromium resolves no host but 127.0.0.1, and every request
to another host is aborted and recorded (the test fails if there is one).

On every page: MathJax typeset every math element Sphinx emitted (one `mjx-container` per `.math` node, no
MathJax error node) and no raw `$$` or `\\(` is left in the text; every `<img>` loaded; no local resource
failed; every internal link points to a file of the site and, with a fragment, to an element with that id.
The search page finds the moves notebook. Screenshots of `03_moves` and of an experiment page go to
`_site/screenshots/`.
"""
import functools
import http.server
import os
import re
import threading
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

SITE = Path(__file__).resolve().parents[1] / "_site"
HTML = SITE / "html"
SHOTS = SITE / "screenshots"
CHROMIUM = os.environ.get("RBF_DOCS_CHROMIUM", "/usr/bin/chromium")

REQUIRE = bool(os.environ.get("RBF_DOCS_REQUIRE"))   # CI: a missing site, Playwright or Chromium is a failure

pytestmark = pytest.mark.skipif(not REQUIRE and not (HTML / "index.html").exists(),
                                reason="the site is not built: python tools/build_docs.py")


def pages():
    """Every HTML page of the site but the highlighted-source pages of viewcode (no math, no images)."""
    out = []
    for p in sorted(HTML.rglob("*.html")):
        rel = p.relative_to(HTML).as_posix()
        if rel.startswith(("_static/", "_sources/")):
            continue
        out.append(rel)
    return out


@pytest.fixture(scope="module")
def server():
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(HTML))

    class Quiet(handler.func):
        def log_message(self, *a):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(HTML)))
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    if REQUIRE:
        assert (HTML / "index.html").exists(), "the site is not built: python tools/build_docs.py"
        import playwright.sync_api as pw_sync
    else:
        pw_sync = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install chromium (or set RBF_DOCS_CHROMIUM)")
    with pw_sync.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def page(browser, server):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    external, failed = [], []

    def route(r):
        host = urlparse(r.request.url).hostname
        if r.request.url.startswith(("data:", "blob:")) or host == "127.0.0.1":
            r.continue_()
        else:
            external.append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    pg = ctx.new_page()
    pg.on("response", lambda resp: failed.append(f"{resp.status} {resp.url}") if resp.status >= 400 else None)
    pg.on("requestfailed", lambda req: failed.append(f"failed ({req.failure}) {req.url}")
          if "127.0.0.1" in req.url else None)
    pg.external, pg.failed = external, failed
    yield pg
    ctx.close()


_IDS = {}


def ids_of(path):
    if path not in _IDS:
        text = path.read_text(encoding="utf-8", errors="replace")
        _IDS[path] = set(re.findall(r'\bid="([^"]+)"', text)) | set(re.findall(r'\bname="([^"]+)"', text))
    return _IDS[path]


WAIT_MATHJAX = """async () => {
  if (!window.MathJax) return 'none';
  if (!MathJax.startup || !MathJax.startup.promise) return 'loading';
  await MathJax.startup.promise;
  return 'done';
}"""

PAGE_FACTS = """() => {
  const math = document.querySelectorAll('.math').length;
  const typeset = document.querySelectorAll('mjx-container').length;
  const mjxErrors = document.querySelectorAll('mjx-merror').length;
  const clone = document.querySelector('main, article, body').cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, mjx-container, .highlight').forEach(e => e.remove());
  const text = clone.innerText;
  const imgs = Array.from(document.images).map(
      i => ({src: i.currentSrc || i.src, ok: i.complete && i.naturalWidth > 0}));
  const links = Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'));
  return {math, typeset, mjxErrors, rawDisplay: (text.match(/\\$\\$/g) || []).length,
          rawInline: (text.match(/\\\\\\(|\\\\\\[/g) || []).length, imgs, links};
}"""


def check_page(pg, server, rel):
    pg.goto("about:blank")          # the previous page's requests end here, before the failures are counted afresh
    pg.failed.clear()
    pg.goto(server + rel, wait_until="load")
    state = pg.evaluate(WAIT_MATHJAX)
    for _ in range(50):
        if state != "loading":
            break
        pg.wait_for_timeout(100)
        state = pg.evaluate(WAIT_MATHJAX)
    pg.evaluate("async () => { await document.fonts.ready; }")   # MathJax's fonts, before leaving the page
    pg.wait_for_load_state("networkidle")
    f = pg.evaluate(PAGE_FACTS)
    problems = []
    if f["math"] and state != "done":
        problems.append(f"{f['math']} math elements but MathJax did not start ({state})")
    if f["typeset"] < f["math"]:
        problems.append(f"{f['math']} math elements, {f['typeset']} typeset")
    if f["mjxErrors"]:
        problems.append(f"{f['mjxErrors']} MathJax errors")
    if f["rawDisplay"] or f["rawInline"]:
        problems.append(f"raw TeX left in the text: {f['rawDisplay']} '$$', {f['rawInline']} '\\(' or '\\['")
    problems += [f"image did not load: {i['src']}" for i in f["imgs"] if not i["ok"]]
    problems += [f"local resource: {x}" for x in pg.failed]
    base = server + rel
    for href in f["links"]:
        url = urljoin(base, href)
        u = urlparse(url)
        if not url.startswith(server) or u.scheme not in ("http", "https"):
            continue
        target = HTML / unquote(u.path[len(urlparse(server).path):])
        if target.is_dir():
            target = target / "index.html"
        if not target.exists():
            problems.append(f"broken link {href}")
        elif u.fragment and target.suffix == ".html" and unquote(u.fragment) not in ids_of(target):
            problems.append(f"broken anchor {href}")
    return f, problems


def test_every_page(page, server):
    all_pages = pages()
    assert len(all_pages) > 40, all_pages
    bad, n_math, n_img, imgs = {}, 0, 0, {}
    for rel in all_pages:
        f, problems = check_page(page, server, rel)
        n_math += f["typeset"]
        n_img += len(f["imgs"])
        imgs[rel] = len(f["imgs"])
        if problems:
            bad[rel] = problems[:8]
    assert not page.external, f"requests left the machine: {sorted(set(page.external))[:10]}"
    assert not bad, "\n".join(f"{k}: {v}" for k, v in bad.items())
    # the derivations and the figures are there: every experiment draws figures, the plot notebook shows the explorer
    # (a build that executes with a non-inline matplotlib backend, or not at all, has none)
    no_figure = [p for p in all_pages if (p.startswith("experiments/") or p == "14_plot.html") and not imgs[p]]
    assert not no_figure, f"pages without a figure: {no_figure}"
    assert n_math > 500, n_math
    print(f"{len(all_pages)} pages, {n_math} typeset formulas, {n_img} images: all loaded")


def test_search(page, server):
    page.goto(server + "search.html?q=merge", wait_until="load")
    page.wait_for_selector("#search-results li, ul.search li", timeout=30_000)
    hits = page.eval_on_selector_all("#search-results li a, ul.search li a", "els => els.map(e => e.href)")
    assert any("03_moves" in h for h in hits), hits[:20]
    assert not page.external


@pytest.mark.parametrize("rel,name", [("03_moves.html", "03_moves"),
                                      ("experiments/exp2_robot_arm.html", "exp2_robot_arm")])
def test_screenshots(page, server, rel, name):
    f, problems = check_page(page, server, rel)
    assert not problems, problems
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)
    page.screenshot(path=str(SHOTS / f"{name}_full.png"), full_page=True)
    if f["imgs"]:                                    # the first figure in view, as a reader scrolling to it sees it
        page.locator("main img").first.evaluate("e => e.scrollIntoView({block: 'center'})")
        page.wait_for_timeout(200)
        page.screenshot(path=str(SHOTS / f"{name}_figure.png"))
    assert (SHOTS / f"{name}.png").stat().st_size > 10_000


def test_api_entries():
    """Every name every public module exports has an entry (an anchor with its full name) and docments are shown."""
    import importlib
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from build_docs import PUBLIC_MODULES
    missing = []
    for m in PUBLIC_MODULES:
        page = HTML / "api" / f"rbf_bayes.{m}.html"
        ids = ids_of(page) if page.exists() else set()
        mod = importlib.import_module(f"rbf_bayes.{m}")
        missing += [f"rbf_bayes.{m}.{n}" for n in mod.__all__ if f"rbf_bayes.{m}.{n}" not in ids]
    assert not missing, missing
    text = (HTML / "api" / "rbf_bayes.rjmcmc.html").read_text(encoding="utf-8")
    assert "inputs (N, d)" in text and "targets (N,) or (N, c)" in text   # sample_rjmcmc's docments for x and y
