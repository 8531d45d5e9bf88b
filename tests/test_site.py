"""The documentation site builds in strict mode, and a real browser finds notebook 01's outputs on its page."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site `make docs` built (``$KTRAIN_RECIPES_SITE``, set by `make test`, which builds it once, strict),
    else the site staged and built as `make docs` does, into a temporary folder."""
    built = os.environ.get("KTRAIN_RECIPES_SITE")
    if built:
        if not (Path(built) / "index.html").is_file():
            pytest.fail(f"KTRAIN_RECIPES_SITE={built} holds no built site: run `make docs` first")
        return Path(built)
    work = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, str(ROOT / "scripts" / "stage_docs.py"), str(work / "src")], check=True)
    config = (ROOT / "mkdocs.yml").read_text().replace("docs_dir: build/site-src", f"docs_dir: {work / 'src'}") \
        .replace("site_dir: build/site", f"site_dir: {work / 'site'}")
    (work / "mkdocs.yml").write_text(config)
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(work / "mkdocs.yml")],
                           capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert build.returncode == 0, build.stderr[-3000:]
    assert "WARNING" not in build.stderr, build.stderr[-3000:]
    return work / "site"


def test_every_page_is_built(site):
    for page in ["index.html", "docs/results/index.html", "docs/serving/index.html",
                 "notebooks/01_minilm_step_by_step/index.html", "notebooks/00_quickstart/index.html"]:
        assert (site / page).is_file(), page


@pytest.mark.browser
def test_notebook_01_shows_its_figures_and_training_in_a_browser(site, tmp_path):
    from PIL import Image
    from playwright.sync_api import sync_playwright

    from servers import chromium

    page_file = site / "notebooks" / "01_minilm_step_by_step" / "index.html"
    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.goto(page_file.as_uri())
        figures = page.evaluate("Array.from(document.querySelectorAll('img')).filter("
                                "i => i.src.startsWith('data:image/png') && i.naturalWidth > 100).length")
        text = page.inner_text("body")
        tables = page.locator("table.dataframe").count()
        page.screenshot(path=str(tmp_path / "shot.png"), full_page=False)
        browser.close()
    assert figures >= 5  # the label and token-length charts, lr_find, the schedule, the confusion matrix...
    assert "Epoch 1/3" in text and "val_accuracy" in text  # the training log
    assert tables >= 3 and "precision" in text and "macro avg" in text  # the report
    shot = Image.open(tmp_path / "shot.png").convert("RGB")
    colours = shot.resize((120, 90)).getcolors(maxcolors=10_000)
    assert colours is not None and len(colours) > 20  # not a blank page


def path_pages() -> list[str]:
    """The notebook pages in the order the site's navigation gives them."""
    import yaml

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text().split("\nplugins:")[0] + "\n" +
                         "nav:" + (ROOT / "mkdocs.yml").read_text().split("\nnav:", 1)[1])["nav"]
    notebooks = next(section["Notebooks"] for section in nav if "Notebooks" in section)
    return [next(iter(entry.values())) for entry in notebooks if next(iter(entry.values())).endswith(".ipynb")]


@pytest.mark.browser
def test_every_notebook_page_reads_in_a_browser(site):
    """Each notebook page of the path has its title, its cells, images that load, no install cell, and a link to
    the next page."""
    from playwright.sync_api import sync_playwright

    from servers import chromium

    pages = path_pages()
    assert len(pages) == len(list((ROOT / "notebooks").glob("[0-9]*.ipynb")))  # every notebook is on the path
    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        solved = 0
        for name in pages:
            page.goto((site / name.removesuffix(".ipynb") / "index.html").as_uri())
            title = page.locator("h1").first.inner_text()
            cells = page.locator(".jp-Cell").count()
            # the site's own images (outputs, figures); the Colab badge comes from Google, which tests cannot reach
            broken = page.evaluate("Array.from(document.querySelectorAll('img')).filter("
                                   "i => !i.src.startsWith('http') && i.complete && i.naturalWidth === 0).length")
            text = page.inner_text("body")
            following = page.locator("a.md-footer__link--next").count()
            assert title.strip() and cells >= 10, f"{name}: an empty page"
            assert broken == 0, f"{name}: {broken} images do not load"
            assert "fetch this project" not in text, f"{name}: the install cell shows"
            assert following == 1, f"{name}: no link to the next page"
            solved += solutions_fold_until_opened(page, name)
        assert solved >= 16, f"{solved} solution cells on the notebook pages: 8 notebooks with 2 each expected"
        browser.close()


def solutions_fold_until_opened(page, name: str) -> int:
    """An exercise's solution starts folded on a notebook page and opens with a click on its summary; the count."""
    # mkdocs-jupyter's template puts the cell's classes on two nested elements: count the outer ones
    tagged = page.evaluate("document.querySelectorAll('.celltag_solution:not(.celltag_solution *)').length")
    folded = page.locator("details.solution")
    assert folded.count() == tagged, f"{name}: {tagged} solution cells, {folded.count()} of them folded"
    cells = page.locator(".celltag_solution:not(.celltag_solution *)")
    for i in range(tagged):
        code = folded.nth(i).locator(".jp-InputArea").first
        printed = cells.nth(i).locator(".jp-OutputArea")  # what it found on the committed run, if it ran
        assert not code.is_visible(), f"{name}: solution {i + 1} shows before it is opened"
        assert printed.count() == 0 or not printed.first.is_visible(), f"{name}: solution {i + 1}'s answer shows"
        folded.nth(i).locator("summary").click()
        assert code.is_visible(), f"{name}: solution {i + 1} does not open"
        assert printed.count() == 0 or printed.first.is_visible(), f"{name}: solution {i + 1}'s answer does not open"
    return tagged


# what the browser finds on a page: blocks wider than their column (a reader would scroll sideways; a table's own
# scrolling box is the exception, as for the docs' Markdown tables), CI cell tags
# shown, and links to this repository's files on GitHub
PAGE_CHECK = """() => {
  const wide = [];
  for (const el of document.querySelectorAll('.md-content pre, .md-content table, .md-content .md-typeset__scrollwrap,'
                                             + ' .md-content .jp-OutputArea-output, .md-content .highlight')) {
    const tableBox = el.tagName === 'TABLE' || el.classList.contains('md-typeset__scrollwrap')
      || (el.querySelector('table') !== null && !el.querySelector('pre'));  // a table scrolls in its own box
    if (el.offsetParent !== null && !tableBox && el.scrollWidth > el.clientWidth + 2) {
      wide.push(el.tagName + ' ' + el.scrollWidth + ' px in ' + el.clientWidth + ' px');
    }
  }
  const tags = Array.from(document.querySelectorAll('.cell-tag')).filter(e => e.offsetParent !== null).length;
  const repo = Array.from(document.querySelectorAll('a[href*="github.com/ktrain-recipes/ktrain-recipes/blob/main/"]'))
    .map(a => a.href.split('/blob/main/')[1].split('#')[0]);
  const local = Array.from(document.querySelectorAll('a[href]')).map(a => a.href)
    .filter(h => h.startsWith('file:')).map(h => h.split('#')[0]);
  return {wide, tags, repo, local};
}"""


def dead_links(hrefs: list[str]) -> list[str]:
    """The file: links (as the browser resolved them) that lead to nothing on the built site: a folder without its
    index.html, or a file that is not there."""
    from urllib.parse import unquote, urlparse

    dead = []
    for href in sorted(set(hrefs)):
        path = Path(unquote(urlparse(href).path))
        if not ((path / "index.html").is_file() if href.endswith("/") or path.is_dir() else path.is_file()):
            dead.append(href)
    return dead


def site_has(site: Path, path: str) -> bool:
    """Whether the built site carries the repository file ``path`` (a page of it, or the file itself)."""
    stem = path.removesuffix(".md").removesuffix(".ipynb")
    return (site / path).is_file() or (site / stem / "index.html").is_file() or \
        (path == "README.md" and (site / "index.html").is_file())


@pytest.mark.browser
def test_every_page_fits_1280_by_800_shows_no_ci_tag_and_keeps_its_links_on_the_site_and_alive(site):
    from playwright.sync_api import sync_playwright

    from servers import chromium

    pages = sorted(p for p in site.rglob("index.html") if "search" not in p.parts)
    assert len(pages) >= 25
    problems = []
    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        for path in pages:
            page.goto(path.as_uri())
            found = page.evaluate(PAGE_CHECK)
            name = str(path.relative_to(site))
            problems += [f"{name}: {w} (scrolls sideways)" for w in found["wide"]]
            problems += [f"{name}: {found['tags']} CI cell tag(s) shown"] if found["tags"] else []
            problems += [f"{name}: links to GitHub for {r}, which the site has" for r in found["repo"]
                         if site_has(site, r)]
            problems += [f"{name}: a link leads nowhere: {h}" for h in dead_links(found["local"])]
        browser.close()
    assert problems == []


# what a phone's reader meets: the page wider than the screen, and table cells with a word broken across lines (a
# cell with more lines than words has one, a word ending at a space, a hyphen or a slash; a table wider than its
# column scrolls in its own box, which is fine)
PHONE_CHECK = """() => {
  const root = document.documentElement;
  const page = root.scrollWidth > window.innerWidth + 1 ? root.scrollWidth : 0;
  const broken = [];
  for (const cell of document.querySelectorAll('.md-content td, .md-content th')) {
    if (cell.offsetParent === null) continue;
    // the places a line may break without cutting a word: spaces, and after a hyphen or a slash (mpnet-base)
    const words = cell.innerText.trim().split(/[\\s\\/-]+/).filter(Boolean);
    if (!words.length) continue;
    const range = document.createRange();
    range.selectNodeContents(cell);
    const rects = Array.from(range.getClientRects()).filter(r => r.width > 0).sort((a, b) => a.top - b.top);
    let lines = 0, bottom = -Infinity;  // a rect starting below the line so far starts a new line
    for (const r of rects) {
      if (r.top >= bottom - 2) { lines += 1; bottom = r.bottom; } else { bottom = Math.max(bottom, r.bottom); }
    }
    if (lines > words.length) broken.push(words.join(' ').slice(0, 40) + ' (' + lines + ' lines)');
  }
  return {page, broken};
}"""


@pytest.mark.browser
@pytest.mark.parametrize("width,height", [(390, 844), (1280, 800)])
def test_no_table_breaks_a_word_and_no_page_is_wider_than_the_screen(site, width, height):
    from playwright.sync_api import sync_playwright

    from servers import chromium

    pages = sorted(p for p in site.rglob("index.html") if "search" not in p.parts)
    problems = []
    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page(viewport={"width": width, "height": height})
        for path in pages:
            page.goto(path.as_uri())
            found = page.evaluate(PHONE_CHECK)
            name = str(path.relative_to(site))
            problems += [f"{name}: the page is {found['page']} px wide on a {width} px screen"] if found["page"] else []
            problems += [f"{name}: a cell breaks a word: {b}" for b in found["broken"][:3]]
        browser.close()
    assert problems == [], f"{len(problems)} problems at {width} px: {problems[:12]}"


def test_the_page_of_what_to_expect_is_linked_from_readme_and_every_notebook():
    import nbformat

    assert "docs/expect.md" in (ROOT / "README.md").read_text()
    for path in sorted((ROOT / "notebooks").glob("[0-9]*.ipynb")):
        prose = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
        assert "docs/expect.md" in prose, f"{path.name} does not link docs/expect.md"


def test_a_dead_link_is_seen(tmp_path):
    (tmp_path / "page").mkdir()
    (tmp_path / "page" / "index.html").write_text("")
    (tmp_path / "f.json").write_text("{}")
    alive = [(tmp_path / "page").as_uri() + "/", (tmp_path / "f.json").as_uri()]
    dead = [(tmp_path / "notebooks" / "00" / "01.ipynb").as_uri(), (tmp_path / "gone").as_uri() + "/"]
    assert dead_links(alive + dead) == sorted(dead)
