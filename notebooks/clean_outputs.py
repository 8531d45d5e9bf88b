"""Keep committed notebook outputs honest and portable.

`python notebooks/clean_outputs.py NOTEBOOK` (and notebooks/execute.py, after each run) drops stderr streams
(TensorFlow's start-up log, which names machine paths) and collapses progress bars (thousands of \\r/\\b
updates) to what a terminal would finally show.
"""

import sys

import nbformat


def render(text: str) -> str:
    """Apply carriage returns and backspaces as a terminal would."""
    lines, line = [], []
    for ch in text:
        if ch == "\n":
            lines.append("".join(line))
            line = []
        elif ch == "\r":
            line = []
        elif ch == "\b":
            line = line[:-1]
        else:
            line.append(ch)
    return "\n".join(lines + ["".join(line)])


def merge_streams(outputs: list) -> list:
    merged = []
    for out in outputs:
        if out.output_type == "stream" and merged and merged[-1].output_type == "stream" \
                and merged[-1].name == out.name:
            merged[-1].text += out.text
        else:
            merged.append(out)
    for out in merged:
        if out.output_type == "stream":
            out.text = render(out.text)
    return merged


def clean(nb) -> None:
    """Drop stderr streams and collapse progress bars, in every code cell of ``nb``."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = merge_streams([o for o in cell.outputs
                                          if not (o.output_type == "stream" and o.name == "stderr")])


if __name__ == "__main__":
    path = sys.argv[1]
    nb = nbformat.read(path, as_version=4)
    clean(nb)
    nbformat.write(nb, path)
