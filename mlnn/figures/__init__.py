"""The paper's figures: the experiments behind them and their drawing.

``landscapes`` — Fig. 2: the loss landscapes of CE and PWE, and tanh against ReLU
``experiments`` — Figs. 3-4: the convergence, dropout and learning-rate experiments
``curves`` — their learning curves stored as CSV
``plots`` — every figure (matplotlib)
``environment`` — how notebooks size their runs and where figures go (``MLNN_FAST`` ...)
"""
