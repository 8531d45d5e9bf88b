"""Server (a) of serve-bench: ktrain's FAQ deployment, as users copy it (``python -m
ktrain_recipes_tools.studies.faq_flask PREDICTOR PORT``, on 127.0.0.1)."""

import argparse


def flask_app(predictor: str, host: str, port: int) -> None:
    """ktrain's FAQ deployment, as users copy it: a threaded Flask app, one text per GET."""
    import ktrain
    from flask import Flask, jsonify, request

    model = ktrain.load_predictor(predictor)
    app = Flask(__name__)

    @app.route("/predict", methods=["GET"])
    def predict():
        return jsonify({"prediction": model.predict(request.args.get("text"))})

    app.run(host=host, port=port, threaded=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("predictor")
    parser.add_argument("port", type=int)
    args = parser.parse_args()
    flask_app(args.predictor, "127.0.0.1", args.port)
