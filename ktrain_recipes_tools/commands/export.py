"""``ktrain-recipes export``: add ONNX fp32 and int8 copies of a saved predictor's model to its folder."""

HELP = "add ONNX fp32 and int8 copies of a saved predictor's model to its folder"


def add_arguments(p) -> None:
    p.add_argument("--predictor", required=True, help="a predictor folder written by train")
    p.add_argument("--no-quantize", action="store_true", help="write only the fp32 ONNX model")


def uses_tensorflow(args) -> bool:
    return True


def run(args) -> None:
    from ktrain_recipes.inference.onnx_inference import export_onnx

    for kind, path in export_onnx(args.predictor, quantize=not args.no_quantize).items():
        print(f"{kind}: {path} ({path.stat().st_size / 1e6:.1f} MB)")
