"""Stage the documentation site's sources: README.md as the home page, docs/, the notebooks with their committed
outputs, and the files they link to, laid out as in the repository so that every relative link holds.
mkdocs (mkdocs.yml) builds the site from the staged folder: `make docs`."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def stage(out: Path) -> Path:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    shutil.copy(ROOT / "README.md", out / "index.md")
    for folder, pattern in [("docs", "*.md"), ("docs", "*.json"), ("docs/stylesheets", "*.css"),
                            ("docs/javascripts", "*.js"),
                            ("notebooks", "[0-9]*.ipynb"), ("assets", "*.png")]:
        (out / folder).mkdir(parents=True, exist_ok=True)
        for path in sorted((ROOT / folder).glob(pattern)):
            shutil.copy(path, out / folder / path.name)
    # other files the pages link to (a data slice's SOURCE.md, a test, a script): copied as they are
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if target.startswith(("http://", "https://")):
                continue
            source = (page.parent / target).resolve()
            if source.is_file() and ROOT in source.parents:
                copy = out / source.relative_to(ROOT)
                if not copy.exists():
                    copy.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(source, copy)
    for notebook in sorted((out / "notebooks").glob("*.ipynb")):  # last: the files linked above are staged now
        notebook.write_text(site_links(notebook.read_text(), out))
    return out


REPO = "https://github.com/ktrain-recipes/ktrain-recipes/blob/main/"


def site_links(text: str, out: Path) -> str:
    """A notebook's links to this repository's pages, as links inside the site where the site has the page: on
    GitHub and Colab the notebooks link to GitHub, which on the site would leave it (and go nowhere offline), and
    to each other relatively (``[01](01_minilm_step_by_step.ipynb)``), which on the site would miss by one folder.
    A notebook's page is notebooks/NAME/, so the site's other pages are one folder further up."""
    def on_site(path: str, anchor: str) -> str | None:
        if path.endswith(".md") and (out / path).is_file():
            return "../../" + path.removesuffix(".md") + "/" + anchor
        if path.startswith("notebooks/") and path.endswith(".ipynb") and (out / path).is_file():
            return "../" + Path(path).stem + "/" + anchor
        if (out / path).is_file():  # a record the site carries (a JSON file a run wrote)
            return "../../" + path + anchor
        return None

    def from_github(match: re.Match) -> str:
        return on_site(match.group(1), match.group(2) or "") or match.group(0)

    def relative(match: re.Match) -> str:
        # relative to notebooks/ on GitHub, Colab and in Jupyter; the repository's path of its target
        path = os.path.normpath(os.path.join("notebooks", match.group(1)))
        found = None if path.startswith("..") else on_site(path, match.group(2) or "")
        return f"]({found})" if found else match.group(0)

    text = re.sub(re.escape(REPO) + r"([\w./-]+)(#[\w-]*)?", from_github, text)
    return re.sub(r"\]\((?!https?://|#|mailto:)([\w./-]+)(#[\w-]*)?\)", relative, text)


if __name__ == "__main__":
    print(stage(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "site-src"))
