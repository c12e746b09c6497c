"""``train``, ``evaluate`` and ``predict``: one network method and its model file."""

import json
import sys

from mlnn.cli.options import add_dataset, add_seed, load_dataset
from mlnn.datasets.svmlight import read_svmlight
from mlnn.errors import MLNNError
from mlnn.estimator import MultiLabelNN
from mlnn.metrics import MEASURES
from mlnn.paper.methods import NETWORK_ALIASES, network_params, resolve


def register(subparsers):
    """Add ``train``, ``evaluate`` and ``predict`` to ``subparsers``."""
    train = subparsers.add_parser(
        "train", help="train one network method on a dataset",
        description="Trains a network of the paper on the training split of a dataset, with early "
                    "stopping on a validation split carved from it, and saves the model.")
    add_dataset(train)
    train.add_argument("--method", default="nn-ad",
                       help=f"one of {list(NETWORK_ALIASES)} (default nn-ad)")
    add_seed(train)
    train.add_argument("--epochs", type=int,
                       help="maximum number of epochs (default: the method's, 100)")
    train.add_argument("--learning-rate", type=float,
                       help="η0 (default: the method's, 0.01 for the paper's networks)")
    train.add_argument("--hidden-units", type=int,
                       help="F (default: the method's, 1000 for the paper's networks)")
    train.add_argument("--batch-size", type=int,
                       help="minibatch size (default: the method's, 64 for the paper's networks)")
    train.add_argument("--validation-fraction", type=float,
                       help="share of the training documents held out for early stopping and "
                            "for choosing the threshold λ (default 0.1); 0 trains on all of "
                            "them for exactly --epochs epochs")
    train.add_argument("--threshold-lambda", type=float,
                       help="λ of the threshold predictor (Eq. 5) instead of choosing it on the "
                            "validation documents")
    train.add_argument("--out", default="model.npz", help="model file to write")
    train.add_argument("--quiet", action="store_true", help="no progress lines")
    train.set_defaults(func=run_train)

    evaluate = subparsers.add_parser(
        "evaluate", help="the ten measures of a saved model on a dataset split",
        description="Loads a model file and prints the paper's ten evaluation measures.")
    evaluate.add_argument("--model", required=True, help="model file written by 'train'")
    add_dataset(evaluate)
    evaluate.add_argument("--split", choices=("test", "train"), default="test")
    evaluate.add_argument("--json", action="store_true", help="print one JSON object")
    evaluate.set_defaults(func=run_evaluate)

    predict = subparsers.add_parser(
        "predict", help="label names for each document of an svmlight file",
        description="Reads documents in svmlight/LIBSVM format (labels, if any, are ignored) with "
                    "the model's feature indexing and prints the predicted label names, one "
                    "document per line.")
    predict.add_argument("--model", required=True, help="model file written by 'train'")
    predict.add_argument("--input", required=True, help="svmlight file of documents")
    predict.add_argument("--scores", action="store_true", help="also print each label's score")
    predict.set_defaults(func=run_predict)


def run_train(args):
    method = resolve(args.method)
    network_params(method, 1, 1)                     # fail fast on a method that is no network
    dataset = load_dataset(args)
    params = network_params(method, *reversed(dataset.X_train.shape))
    given = {"learning_rate": args.learning_rate, "max_epochs": args.epochs,
             "hidden_units": args.hidden_units, "batch_size": args.batch_size,
             "validation_fraction": args.validation_fraction,
             "threshold_lambda": args.threshold_lambda}
    params.update({key: value for key, value in given.items() if value is not None})
    model = MultiLabelNN(**params, random_state=args.seed, verbose=not args.quiet)
    print(f"training {method} on {dataset.name}: {dataset.X_train.shape[0]} documents, "
          f"{dataset.X_train.shape[1]} features, {dataset.Y_train.shape[1]} labels", flush=True)
    model.fit(dataset.X_train, dataset.Y_train, feature_names=dataset.feature_names,
              label_names=dataset.label_names)
    model.save(args.out)
    if model.history_.best:
        print(f"best validation rank loss {model.history_.best['rankloss']:.5f} after "
              f"{model.best_updates_} updates; ", end="")
    print(f"{model.n_updates_} updates, threshold λ {model.threshold_lambda_}; "
          f"{model.fit_time_:.1f}s; saved {args.out}")
    return 0


def run_evaluate(args):
    model = MultiLabelNN.load(args.model)
    dataset = load_dataset(args)
    X, Y = (dataset.X_test, dataset.Y_test) if args.split == "test" else \
        (dataset.X_train, dataset.Y_train)
    if X.shape[1] != model.n_features_in_:
        raise MLNNError(f"the model expects {model.n_features_in_} features but {dataset.name} "
                        f"has {X.shape[1]}: it was trained on another dataset")
    result = model.evaluate(X, Y)
    if args.json:
        print(json.dumps(result))
    else:
        for measure in MEASURES:
            print(f"{measure:10s} {result[measure]:.4f}")
    return 0


def run_predict(args):
    model = MultiLabelNN.load(args.model)
    X, _ = read_svmlight(args.input, n_features=model.n_features_in_)
    scores = model.decision_function(X)
    Y_pred = model.thresholds_.predict(X, scores).tocsr()
    names = model.label_names_ or [str(i) for i in range(model.n_labels_)]
    for i in range(X.shape[0]):
        labels = Y_pred.indices[Y_pred.indptr[i]:Y_pred.indptr[i + 1]]
        if args.scores:
            print(" ".join(f"{names[l]}:{scores[i, l]:.4f}" for l in labels))
        else:
            print(" ".join(names[l] for l in labels))
    sys.stdout.flush()
    return 0
