"""The paper's network (Sec. 3), forward and backward by hand. Read it in this order:

==================  =======================================================================
module              the paper
==================  =======================================================================
``activations``     f_h and f_o of Eq. 2 with their derivatives side by side: ReLU (Sec. 3.5),
                    tanh, sigmoid
``network``         Sec. 3.2, Eq. 2: z1 = X W1 + b1, h = f_h(z1), z2 = h W2 + b2, o = f_o(z2),
                    the named forward cache, δ1 and the row-sparse gradient of W1
``losses``          Eq. 3 (BP-MLL's PWE, Sec. 3.2) and Eq. 6 (CE, Sec. 3.4), each with its δ2
``dropout``         Sec. 3.5: the dropout masks on the hidden (and optionally input) units
``optimizers``      Sec. 3.5: SGD (Eq. 4), momentum, Nesterov and AdaGrad, each rule on its
                    own; the paper writes out SGD and AdaGrad only
``lazy_updates``    a rule run on the parameters: weight decay γ, and the exact row-sparse,
                    lazy execution on W1
``training``        shuffled minibatches, evaluation on validation data, early stopping
``gradcheck``       finite differences: the check every derivative above passes
==================  =======================================================================

Symbols follow the paper (see :mod:`mlnn.nn.network` for the notation table). Nothing here
reads files, parses options or knows the experiments; only :mod:`mlnn.evaluation.metrics` (the
rank loss that early stopping watches) and :mod:`mlnn.base` lie below.
"""
