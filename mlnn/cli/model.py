"""``train``, ``evaluate`` and ``predict``: one network method and its model file.

``train`` checks every option and ``--out`` before it loads the data. ``predict --text`` uses
the vectorizer saved in the model file, ``--input`` reads svmlight vectors; a document with
nothing to classify gets no label and a warning naming it. ``evaluate`` reports a measure no
document defines as ``nan`` (``null`` in ``--json``) with a warning saying why.
"""

import json
import sys
import warnings
from pathlib import Path

import numpy as np

from mlnn.base.errors import MLNNError, MLNNWarning
from mlnn.base.fileio import check_input_file, check_output_path
from mlnn.base.progress import epoch_reporter
from mlnn.cli.options import (add_dataset, add_offline, add_param, add_progress, add_seed,
                              given_params, load_dataset, parse_options, show_progress)
from mlnn.datasets.svmlight import parse_svmlight, read_svmlight
from mlnn.datasets.text import decode
from mlnn.evaluation.metrics import MEASURES, undefined_measures
from mlnn.model.estimator import MultiLabelNN
from mlnn.model.modelfile import is_model_file
from mlnn.model.params import DEFAULTS, RULE_PARAMS
from mlnn.paper.methods import METHODS, NETWORK_ALIASES, network_params, resolve

#: The hyper-parameters ``train`` takes, and their options.
TRAIN_OPTIONS = {"learning_rate": "--learning-rate", "max_epochs": "--epochs",
                 "hidden_units": "--hidden-units", "batch_size": "--batch-size",
                 "validation_fraction": "--validation-fraction",
                 "threshold_lambda": "--threshold-lambda", "random_state": "--seed",
                 "optimizer": "--optimizer"}

#: How ``train`` names the hyper-parameters of ``--optimizer-option`` in an error.
RULE_OPTIONS = {"optimizer_options": "--optimizer-option",
                **{name: f"--optimizer-option {name}" for name in RULE_PARAMS}}


def register(subparsers):
    train = subparsers.add_parser(
        "train", help="train one network method on a dataset",
        description="Trains a network of the paper on the training split of a dataset, with early "
                    "stopping on a validation split carved from it, and saves the model.")
    add_dataset(train)
    train.add_argument("--method", default="nn-ad",
                       help=f"one of {list(NETWORK_ALIASES)} (default nn-ad)")
    add_seed(train)
    for param, option in TRAIN_OPTIONS.items():
        if option != "--seed":
            add_param(train, option, param,
                      shown=f"default: the method's, else {DEFAULTS[param]}")
    train.add_argument("--optimizer-option", action="append", metavar="KEY=VALUE",
                       help="an option of the update rule (repeatable), e.g. --optimizer adagrad "
                            "--optimizer-option epsilon=1e-6, or --optimizer momentum "
                            "--optimizer-option momentum=0.5 --optimizer-option nesterov=true")
    train.add_argument("--out", default="model.npz", help="model file to write")
    add_offline(train)
    add_progress(train)
    train.set_defaults(func=run_train)

    evaluate = subparsers.add_parser(
        "evaluate", help="the ten measures of a saved model on a dataset split",
        description="Loads a model file and prints the paper's ten evaluation measures.")
    evaluate.add_argument("--model", required=True, help="model file written by 'train'")
    add_dataset(evaluate)
    evaluate.add_argument("--split", choices=("test", "train"), default="test")
    evaluate.add_argument("--json", action="store_true", help="print one JSON object")
    add_offline(evaluate)
    evaluate.set_defaults(func=run_evaluate)

    _register_predict(subparsers)


def _register_predict(subparsers):
    predict = subparsers.add_parser(
        "predict", help="label names for raw text or each document of an svmlight file",
        description="Reads raw text (--text; a model trained on a text dataset such as "
                    "reuters21578) or documents in svmlight/LIBSVM format (--input; labels, if "
                    "any, are ignored) and prints the predicted label names, one document per "
                    "line.")
    predict.add_argument("--model", required=True, help="model file written by 'train'")
    source = predict.add_mutually_exclusive_group(required=True)
    source.add_argument("--input", help="svmlight file of documents ('-': standard input)")
    source.add_argument("--text", nargs="+", metavar="PATH",
                        help="raw text: files (one document each), directories (their .txt "
                             "files) or '-' (standard input, one document); prints "
                             "NAME<TAB>label:score ...")
    base = predict.add_mutually_exclusive_group()
    base.add_argument("--zero-based", dest="zero_based", action="store_const", const=True,
                      default="auto", help="feature ids start at 0 (needed when the file has "
                                           "no header line and its ids do not tell)")
    base.add_argument("--one-based", dest="zero_based", action="store_const", const=False,
                      help="feature ids start at 1 (LIBSVM)")
    predict.add_argument("--scores", action="store_true", help="also print each label's score")
    predict.set_defaults(func=run_predict)


def run_train(args):
    method = resolve(args.method)
    if METHODS[method]["kind"] == "br":
        raise MLNNError(f"--method: {method} is not a neural-network method; choose one of "
                        f"{list(NETWORK_ALIASES)}")
    given = {**given_params(args, TRAIN_OPTIONS), **_rule_options(args.optimizer_option)}
    # checked before the data is read, naming each option; D and N size only BP-MLL's hidden
    # layer and weight decay, set (and checked, by fit) with the data
    settings = {key: value for key, value in METHODS[method].items() if key != "kind"}
    model = MultiLabelNN(**{**settings, **given}).check_params({**TRAIN_OPTIONS, **RULE_OPTIONS})
    check_output_path(args.out, "--out", is_model_file, "an mlnn model file")
    dataset = load_dataset(args)
    model.set_params(**{**network_params(method, *reversed(dataset.X_train.shape)), **given})
    if show_progress(args):
        model.set_params(verbose=epoch_reporter(model.max_epochs, sys.stderr))
    print(f"training {method} on {dataset.name}: {dataset.X_train.shape[0]} documents, "
          f"{dataset.X_train.shape[1]} features, {dataset.Y_train.shape[1]} labels", flush=True)
    model.fit(dataset.X_train, dataset.Y_train, feature_names=dataset.feature_names,
              label_names=dataset.label_names, vectorizer=dataset.vectorizer)
    model.save(args.out)
    if model.history_.best:
        print(f"best validation rank loss {model.history_.best['rankloss']:.5f} after "
              f"{model.best_updates_} updates; ", end="")
    print(f"{model.n_updates_} updates, threshold λ {model.threshold_lambda_}; "
          f"{model.fit_time_:.1f}s; saved {args.out}")
    return 0


def _rule_options(pairs):
    """``--optimizer-option KEY=VALUE ...``: μ and Nesterov's form as themselves, the others as
    ``optimizer_options``."""
    try:
        options = parse_options(pairs)
    except MLNNError as error:
        raise MLNNError(f"--optimizer-option: {error}") from None
    given = {name: options.pop(name) for name in RULE_PARAMS if name in options}
    return {**given, "optimizer_options": options} if options else given


def load_model(path):
    path = check_input_file(path, "--model")
    if path == "-":
        raise MLNNError("--model: a model cannot be read from standard input; give its file")
    return MultiLabelNN.load(path)         # checked by load


def run_evaluate(args):
    model = load_model(args.model)
    dataset = load_dataset(args)
    X, Y = getattr(dataset, f"X_{args.split}"), getattr(dataset, f"Y_{args.split}")
    if X.shape[1] != model.n_features_in_:
        raise MLNNError(f"the model expects {model.n_features_in_} features but {dataset.name} "
                        f"has {X.shape[1]}: it was trained on another dataset")
    if X.shape[0] == 0:
        raise MLNNError(f"the {args.split} split of {dataset.name} has no documents: there is "
                        "nothing to evaluate")
    result = model.evaluate(X, Y)
    for measure, reason in undefined_measures(result).items():
        warnings.warn(f"{measure} is undefined on the {args.split} split of {dataset.name} "
                      f"({reason}); it is reported as "
                      f"{'null' if args.json else 'nan'}", MLNNWarning)
    if args.json:
        plain = {k: None if np.isnan(v) else v for k, v in result.items()}
        print(json.dumps(plain, allow_nan=False))
    else:
        for measure in MEASURES:
            print(f"{measure:10s} {result[measure]:.4f}")
    return 0


def read_texts(paths):
    """``[(name, text), ...]`` of ``--text``: a file is one document, a directory its ``*.txt``
    files in name order, ``-`` standard input (``<stdin>``)."""
    documents = []
    for given in paths:
        if str(given) != "-" and Path(given).is_dir():
            files = sorted(p for p in Path(given).iterdir() if p.suffix == ".txt" and p.is_file())
            if not files:
                raise MLNNError(f"--text: the directory {given} has no .txt files")
            documents.extend((str(f), decode(f.read_bytes(), str(f))) for f in files)
        elif check_input_file(given, "--text") == "-":
            documents.append(("<stdin>", decode(sys.stdin.buffer.read(), "<stdin>")))
        else:
            documents.append((str(given), decode(Path(given).read_bytes(), str(given))))
    return documents


def _featureless(X):
    return np.asarray((X != 0).sum(axis=1)).ravel() == 0


def _documents(args, model):
    """X of ``--input`` or ``--text`` and each line's prefix (``NAME<TAB>`` for ``--text``); a
    warning names the documents with nothing to classify (no feature, no known word)."""
    if args.input is not None:
        path = check_input_file(args.input, "--input")
        widths = {"n_features": model.n_features_in_, "zero_based": args.zero_based,
                  "dtype": np.dtype(model.dtype)}       # the model's, and its precision
        X = parse_svmlight(decode(sys.stdin.buffer.read(), "<stdin>"), "<stdin>", **widths)[0] \
            if path == "-" else read_svmlight(path, **widths)[0]
        rows = np.flatnonzero(_featureless(X))
        if rows.size:
            shown = ", ".join(str(i + 1) for i in rows[:10]) + (", ..." if rows.size > 10 else "")
            warnings.warn(f"--input: {rows.size} of the {X.shape[0]} documents of "
                          f"{'<stdin>' if args.input == '-' else args.input} (number {shown}, "
                          "counting from 1) have no feature; no label is predicted for them",
                          MLNNWarning)
        return X, [""] * X.shape[0]
    if getattr(model, "vectorizer_", None) is None:
        raise MLNNError(f"--text: the model {args.model} was not trained on a text dataset "
                        "(it has no vocabulary); give svmlight vectors with --input")
    documents = read_texts(args.text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MLNNWarning)      # named by file below instead
        X = model.transform_text([text for _, text in documents])
    for i in np.flatnonzero(_featureless(X)):
        name, text = documents[i]
        what = "is empty" if not text.strip() else "has no word of the model's vocabulary"
        warnings.warn(f"--text: {name} {what}; no label is predicted for it", MLNNWarning)
    return X, [name.replace("\t", " ").replace("\n", " ") + "\t" for name, _ in documents]


def run_predict(args):
    model = load_model(args.model)
    X, prefixes = _documents(args, model)
    scores = model.decision_function(X)
    Y_pred = model.thresholds_.predict(X, scores, dense=True)
    Y_pred[_featureless(X)] = 0      # no feature, no known word: nothing in it to classify
    names = model.label_names_ or [str(i) for i in range(model.n_labels_)]
    scored = args.scores or args.text is not None       # --text: NAME<TAB>label:score ...
    sys.stdout.write("".join(
        prefix + " ".join(f"{names[l]}:{scores[i, l]:.4f}" if scored else names[l]
                          for l in np.flatnonzero(Y_pred[i])) + "\n"
        for i, prefix in enumerate(prefixes)))
    return 0
