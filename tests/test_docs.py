"""The front door: a README for learners that names no figure its results file lacks, and docs whose links
all lead somewhere."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def section(text: str, title: str) -> str:
    return text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_readme_is_short_and_opens_with_colab_and_the_notebook_path():
    lines = README.splitlines()
    assert len(lines) <= 200
    assert "colab-badge.svg" in "\n".join(lines[:12])
    first_section = next(line for line in lines if line.startswith("## "))
    assert first_section == "## The path through the notebooks"


def missing_figures(text: str, results: str) -> list[str]:
    """The figures (numbers, with a decimal part or an M for millions) in ``text`` that ``results`` lacks."""
    figures = re.findall(r"\d[\d,]*(?:\.\d+)?M?", text)
    return [f for f in figures if f not in results and f != "2"]  # "2-core" is hardware, not a figure


def test_every_figure_the_readme_states_is_in_the_results_file():
    results = (ROOT / "docs" / "results.md").read_text()
    stated = section(README, "What to expect")
    assert len(re.findall(r"\d\.\d+", stated)) >= 3
    assert missing_figures(stated, results) == []


def test_the_figure_check_sees_a_figure_the_results_lack():
    assert missing_figures("reaches 0.9371 in 700 s", "0.9370 after 718 s") == ["0.9371", "700"]


def test_every_relative_link_leads_to_a_file():
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert broken == []


def test_the_front_door_never_names_our_machines():
    for page in [*PAGES, *sorted((ROOT / "notebooks").glob("*.py"))]:
        text = page.read_text()
        for word in ("../shared", "NOTES.md", "STYLE.md"):
            assert word not in text, f"{page.relative_to(ROOT)} mentions {word}"


def measured_rows(text: str) -> list[str]:
    """Table rows holding three or more numbers with a decimal part: a table of measurements."""
    return [line for line in text.splitlines() if line.startswith("|")
            and len(re.findall(r"\|\s*-?\d+\.\d+\s*(?=\|)", line)) >= 3]


def test_measured_tables_live_in_the_results_file_only():
    """A figure lives in one place: docs pages link results.md rather than copy its tables."""
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name not in ("results.md", "serve_bench.md", "bench.md"):  # the last two are written by runs
            assert not measured_rows(page.read_text()), f"{page.name} copies measurements: link results.md"
    assert measured_rows("| a | 1.5 | 2.25 | 3.0 |\n| b | 1 | 2 | 3 |") == ["| a | 1.5 | 2.25 | 3.0 |"]


SEE = re.compile(r"""(README(?:\.md)?|docs/[\w./-]+\.md)[,:]?\s*["'](?P<heading>[^"'\n]+)["']""")


def test_every_page_and_heading_a_message_or_comment_names_exists():
    """A "see docs/x.md, 'Heading'" in the package, the pins or the Makefile leads to a page with that heading."""
    root = Path(__file__).resolve().parent.parent
    sources = [*sorted((root / "ktrain_recipes").rglob("*.py")), root / "requirements.txt",
               root / "requirements-serve.txt", root / "pyproject.toml",
               root / "Makefile"]
    found, missing = 0, []
    for source in sources:
        for match in SEE.finditer(source.read_text()):
            page = root / (match.group(1) if match.group(1).startswith("docs/") else "README.md")
            headings = {line.lstrip("#").strip() for line in page.read_text().splitlines() if line.startswith("#")} \
                if page.is_file() else set()
            found += 1
            if match.group("heading") not in headings:
                missing.append(f"{source.relative_to(root)}: {match.group(0)}")
    assert found >= 4 and not missing, missing
    bare = [str(p.relative_to(root)) for p in sources for m in re.finditer(r"\bsee (README)", p.read_text())
            if not SEE.match(p.read_text(), m.start(1))]
    assert not bare, f"'see README' with no heading: {bare}"


def lists_run_into_paragraphs(text: str) -> list[int]:
    """The lines where a list starts right under a paragraph line: Python-Markdown (the site) then renders the
    list as more of the paragraph, though GitHub shows a list."""
    item = re.compile(r"^(?:[-*+]|\d+\.)\s")
    lines, found, fence = text.split("\n"), [], False
    for i, line in enumerate(lines):
        if line.strip().startswith("```"):
            fence = not fence
        before = lines[i - 1] if i else ""
        if (not fence and item.match(line) and before.strip() and not item.match(before.lstrip())
                and not before.startswith((" ", "\t", "|", "#", ">"))):
            found.append(i + 1)
    return found


def test_every_list_renders_as_a_list_on_the_site():
    for page in PAGES:
        assert lists_run_into_paragraphs(page.read_text()) == [], f"{page.name}: add a blank line before the list"
    assert lists_run_into_paragraphs("What this shows:\n- one\n- two\n\nText.\n\n- fine\n") == [2]
