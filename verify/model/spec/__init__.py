"""What the model is (``docs/model-spec.md``): its configuration, parameters and ``.npz``
files, initialisation schemes, layer-norm forms and the label rule every certified tier uses.
"""
