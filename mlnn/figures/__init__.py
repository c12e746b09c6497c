"""The paper's figures: the experiments behind them and their drawing."""
