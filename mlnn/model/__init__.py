"""The model a user fits, saves and loads: the network, its predictor and its options together.

==================  ========================================================================
module              job
==================  ========================================================================
``params``          the model description: each hyper-parameter's default, check and help, once
``builders``        network + loss + optimizer from names, built once
``stopping_rules``  how long to train: the stopping rules watched on the validation data
``estimator``       :class:`MultiLabelNN`: fit (with early stopping and the Eq. 5 thresholds),
                    predict, evaluate, save and load
``modelfile``       model files as arrays <-> ``.npz``, sealed by a checksum, loaded without pickle
==================  ========================================================================
"""
