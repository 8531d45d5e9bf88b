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
def test_notebook_09_shows_its_figures_and_training_in_a_browser(site, tmp_path):
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
    assert len(pages) == 11
    with sync_playwright() as p:
        browser = chromium(p)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
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
        browser.close()
