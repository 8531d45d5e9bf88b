"""``ktrain-recipes compare``: saved runs side by side, with a chart."""

HELP = "saved runs side by side (from their metrics.json), with a chart"


def add_arguments(p) -> None:
    p.add_argument("--runs", default="runs", help="folder holding one predictor folder per run")
    p.add_argument("--chart", help="save the latency vs accuracy chart here (PNG)")
    p.add_argument("--table", help="write the table to this .csv or .json file")


def uses_tensorflow(args) -> bool:
    return False


def run(args) -> None:
    from ktrain_recipes_tools.studies.compare import write_comparison

    write_comparison(args.runs, args.chart, args.table)
